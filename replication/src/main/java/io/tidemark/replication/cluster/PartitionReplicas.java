package io.tidemark.replication.cluster;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.DurableFiles;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.partition.KnownLeaders;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.replication.partition.RemotePartition;
import io.tidemark.replication.partition.ReplicatedPartition;
import io.tidemark.replication.raft.RaftGroups;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import io.tidemark.replication.statemachine.PartitionEntryFormat;
import io.tidemark.replication.statemachine.PartitionIdentityStore;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.exceptions.AlreadyExistsException;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The partition replicas of this broker: starts a partition's Raft group on the local server when the metadata
 * group assigns it here (in the background, since that runs on the metadata group's apply thread), stops it and
 * deletes its directory when the topic is deleted or the partition moves away, and keeps one Raft client per led
 * partition for appends.
 *
 * <p>A broker hosts a partition's group when it holds a replica, or when a reassignment under way moves the
 * partition to it (the target). A replica of the target that is not a replica yet joins the group with no peers
 * at all: a Ratis server outside its group's configuration never starts an election, so the empty replica cannot
 * win one or disturb the group; it learns the configuration from the leader once the leader adds it, and catches
 * up then ({@link PartitionReassignment}). It serves nothing until the reassignment completes.
 *
 * <p>Adding a group that Ratis already reopened from disk at start is answered with {@code AlreadyExists}, which
 * is success here: replaying the metadata log re-announces every topic.
 *
 * <p>Thread-safe.
 */
public final class PartitionReplicas implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionReplicas.class);
    private static final int CLOSED_GROUP_DELETE_ATTEMPTS = 30;

    private final int nodeId;
    private final ClusterMembers members;
    private final RaftServer server;
    private final RaftClient admin;
    private final PartitionIdentityStore identities;
    private final KnownLeaders remoteLeaders;
    private final Path raftStorageDir;
    private final ScheduledExecutorService groupChanges = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "tidemark-group-changes");
        thread.setDaemon(true);
        return thread;
    });
    private final Map<RaftGroupId, RaftClient> clients = new ConcurrentHashMap<>();

    /**
     * @param remoteLeaders  who leads the partitions of which this broker holds no replica
     * @param raftStorageDir where the Raft server keeps a directory per group, named by the group's UUID
     */
    public PartitionReplicas(int nodeId, ClusterMembers members, RaftServer server, RaftClient admin,
                             PartitionIdentityStore identities, KnownLeaders remoteLeaders, Path raftStorageDir) {
        this.nodeId = nodeId;
        this.members = members;
        this.server = server;
        this.admin = admin;
        this.identities = identities;
        this.remoteLeaders = remoteLeaders;
        this.raftStorageDir = raftStorageDir;
        effectiveConfig(Map.of());
    }

    /**
     * The config of a topic with {@code overrides} on this broker's defaults.
     *
     * @throws TidemarkException INVALID_CONFIG when a key is invalid, or max.batch.bytes is above what one Raft
     *                           entry holds (a produced batch travels as one entry at least)
     */
    TopicConfig effectiveConfig(Map<String, String> overrides) {
        TopicConfig config = identities.effective(overrides);
        int largest = largestBatchBytes();
        if (config.maxBatchBytes() > largest) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "max.batch.bytes " + config.maxBatchBytes()
                    + " is above the largest batch a Raft entry holds on this broker: " + largest + " bytes "
                    + "(raft.log.write.buffer.bytes less " + (RaftSettings.ENTRY_OVERHEAD_BYTES + 16) + "); lower it or "
                    + "raise raft.log.write.buffer.bytes on every broker");
        }
        return config;
    }

    /**
     * The largest batch a partition of this broker carries: what one Raft entry holds (a produced batch travels as one
     * entry at least). Topics' max.batch.bytes stay within it, and so do mirrored batches, which may exceed their
     * topic's max.batch.bytes by their provenance headers.
     */
    public int largestBatchBytes() {
        return PartitionEntryFormat.largestBatchBytes(RaftSettings.maxRequestBytes(server.getProperties()));
    }

    /** Whether this broker runs the partition's group under {@code assignment}: a replica or a target of it. */
    private boolean hosts(PartitionAssignment assignment) {
        return assignment.getReplicaNodeIdsList().contains(nodeId)
                || assignment.getTargetReplicaNodeIdsList().contains(nodeId);
    }

    /**
     * The partition as this broker serves it; starts its Raft group here when this broker hosts it: with the
     * replicas as peers when it is one, with no peers when it only joins a reassignment's target.
     */
    Partition open(TopicPartition id, PartitionAssignment assignment, Map<String, String> overrides) {
        List<Integer> replicaNodeIds = assignment.getReplicaNodeIdsList();
        RaftGroupId groupId = RaftGroups.partition(id);
        if (hosts(assignment)) {
            identities.expect(groupId, new PartitionIdentityStore.Identity(id, overrides));
            RaftGroup group = replicaNodeIds.contains(nodeId)
                    ? RaftGroup.valueOf(groupId, members.peers(replicaNodeIds)) : RaftGroup.valueOf(groupId);
            groupChanges.execute(() -> addGroup(group));
        }
        if (!replicaNodeIds.contains(nodeId)) {
            return new RemotePartition(id, members, replicaNodeIds, remoteLeaders);
        }
        RaftGroup group = RaftGroup.valueOf(groupId, members.peers(replicaNodeIds));
        return new ReplicatedPartition(id, groupId, server, members, replicaNodeIds, new ReplicatedPartition.RaftClients() {
            @Override
            public RaftClient get() {
                return clients.computeIfAbsent(groupId, g -> partitionClient(group));
            }

            @Override
            public void discard(RaftClient failed) {
                if (clients.remove(groupId, failed)) {
                    groupChanges.execute(() -> closeQuietly(failed));
                }
            }
        }, id.topic().startsWith(Topic.INTERNAL_PREFIX));
    }

    /**
     * The partition as this broker serves it after a reassignment began or completed: stops and deletes its
     * group here when this broker no longer hosts it, starts it when it newly does, and drops the Raft client
     * that knew the old peers.
     */
    Partition reassigned(TopicPartition id, PartitionAssignment before, PartitionAssignment after,
                         Map<String, String> overrides) {
        RaftClient client = clients.remove(RaftGroups.partition(id));
        if (client != null) {
            groupChanges.execute(() -> closeQuietly(client));
        }
        if (hosts(before) && !hosts(after)) {
            remove(id);
        }
        return open(id, after, overrides);
    }

    private void addGroup(RaftGroup group) {
        try {
            admin.getGroupManagementApi(RaftPeerIds.of(nodeId)).add(group);
            LOG.info("Started Raft group {} here", group);
        } catch (AlreadyExistsException e) {
            LOG.debug("Raft group {} already runs here", group.getGroupId());
        } catch (IOException e) {
            if (e.getCause() instanceof AlreadyExistsException || String.valueOf(e.getMessage()).contains("already exists")) {
                return;
            }
            LOG.error("Starting Raft group {} failed", group, e);
        }
    }

    private RaftClient partitionClient(RaftGroup group) {
        return RaftClient.newBuilder().setProperties(RaftSettings.client()).setRaftGroup(group)
                .setLeaderId(RaftPeerIds.of(nodeId))
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(3,
                        TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
                .build();
    }

    private static void closeQuietly(RaftClient client) {
        try {
            client.close();
        } catch (IOException e) {
            LOG.debug("closing a failed Raft client", e);
        }
    }

    /**
     * Stops the partition's Raft group here and deletes its directory. A leader that a configuration change left
     * out closes its division itself (Ratis) but keeps the directory: then only the directory is deleted.
     */
    void remove(TopicPartition id) {
        RaftGroupId groupId = RaftGroups.partition(id);
        RaftClient client = clients.remove(groupId);
        groupChanges.execute(() -> {
            try {
                if (client != null) {
                    client.close();
                }
                if (runsHere(groupId)) {
                    admin.getGroupManagementApi(RaftPeerIds.of(nodeId)).remove(groupId, true, false);
                    LOG.info("Removed Raft group {} of {} and deleted its directory", groupId, id);
                    return;
                }
            } catch (GroupMismatchException e) {
                LOG.debug("Raft group {} of {} was closed meanwhile", groupId, id);
            } catch (IOException e) {
                LOG.error("Removing Raft group {} of {} failed", groupId, id, e);
                return;
            }
            deleteClosedGroupDir(groupId, id, 1);
        });
    }

    /**
     * Deletes the directory of a group Ratis closed; retried every second while Ratis may still be writing its
     * last files there.
     */
    private void deleteClosedGroupDir(RaftGroupId groupId, TopicPartition id, int attempt) {
        Path dir = raftStorageDir.resolve(groupId.getUuid().toString());
        if (!Files.exists(dir)) {
            return;
        }
        try {
            DurableFiles.deleteTree(dir);
            LOG.info("Deleted the directory {} of {}, whose Raft group Ratis closed", dir, id);
        } catch (IOException e) {
            if (attempt < CLOSED_GROUP_DELETE_ATTEMPTS) {
                groupChanges.schedule(() -> deleteClosedGroupDir(groupId, id, attempt + 1), 1, TimeUnit.SECONDS);
            } else {
                LOG.error("Deleting the directory {} of {} failed {} times; delete it by hand", dir, id, attempt, e);
            }
        }
    }

    private boolean runsHere(RaftGroupId groupId) {
        for (RaftGroupId running : server.getGroupIds()) {
            if (running.equals(groupId)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() throws IOException {
        groupChanges.shutdownNow();
        for (RaftClient client : clients.values()) {
            client.close();
        }
        clients.clear();
    }
}
