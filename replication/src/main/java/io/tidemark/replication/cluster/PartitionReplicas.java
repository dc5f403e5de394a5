package io.tidemark.replication.cluster;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.partition.KnownLeaders;
import io.tidemark.replication.partition.RemotePartition;
import io.tidemark.replication.partition.ReplicatedPartition;
import io.tidemark.replication.raft.RaftGroups;
import io.tidemark.replication.raft.RaftSettings;
import io.tidemark.replication.statemachine.PartitionEntryFormat;
import io.tidemark.replication.statemachine.PartitionIdentityStore;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.exceptions.AlreadyExistsException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The partition replicas of this broker: starts a partition's Raft group on the local server when the metadata
 * group assigns it here (in the background, since that runs on the metadata group's apply thread), stops it and
 * deletes its directory when the topic is deleted, and keeps one Raft client per led partition for appends.
 *
 * <p>Adding a group that Ratis already reopened from disk at start is answered with {@code AlreadyExists}, which
 * is success here: replaying the metadata log re-announces every topic.
 *
 * <p>Thread-safe.
 */
public final class PartitionReplicas implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionReplicas.class);

    private final int nodeId;
    private final ClusterMembers members;
    private final RaftServer server;
    private final RaftClient admin;
    private final PartitionIdentityStore identities;
    private final KnownLeaders remoteLeaders;
    private final ExecutorService groupChanges = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "tidemark-group-changes");
        thread.setDaemon(true);
        return thread;
    });
    private final Map<RaftGroupId, RaftClient> clients = new ConcurrentHashMap<>();

    /** @param remoteLeaders who leads the partitions of which this broker holds no replica */
    public PartitionReplicas(int nodeId, ClusterMembers members, RaftServer server, RaftClient admin,
                             PartitionIdentityStore identities, KnownLeaders remoteLeaders) {
        this.nodeId = nodeId;
        this.members = members;
        this.server = server;
        this.admin = admin;
        this.identities = identities;
        this.remoteLeaders = remoteLeaders;
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
        int largest = RaftSettings.maxRequestBytes(server.getProperties()) - PartitionEntryFormat.REQUEST_HEADER_BYTES
                - PartitionEntryFormat.BATCH_FRAME_BYTES;
        if (config.maxBatchBytes() > largest) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "max.batch.bytes " + config.maxBatchBytes()
                    + " is above the largest batch a Raft entry holds on this broker: " + largest + " bytes "
                    + "(raft.log.write.buffer.bytes less " + (RaftSettings.ENTRY_OVERHEAD_BYTES + 16) + "); lower it or "
                    + "raise raft.log.write.buffer.bytes on every broker");
        }
        return config;
    }

    /** The partition as this broker serves it; starts its Raft group here when this broker holds a replica. */
    Partition open(TopicPartition id, List<Integer> replicaNodeIds, Map<String, String> overrides) {
        if (!replicaNodeIds.contains(nodeId)) {
            return new RemotePartition(id, members, replicaNodeIds, remoteLeaders);
        }
        RaftGroupId groupId = RaftGroups.partition(id);
        RaftGroup group = RaftGroup.valueOf(groupId, members.peers(replicaNodeIds));
        identities.expect(groupId, new PartitionIdentityStore.Identity(id, overrides));
        groupChanges.execute(() -> addGroup(group));
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

    private void addGroup(RaftGroup group) {
        try {
            admin.getGroupManagementApi(ClusterMembers.peerId(nodeId)).add(group);
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
                .setLeaderId(ClusterMembers.peerId(nodeId))
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

    /** Stops the partition's Raft group here and deletes its directory, when this broker holds a replica. */
    void remove(Partition partition) {
        if (!(partition instanceof ReplicatedPartition)) {
            return;
        }
        RaftGroupId groupId = RaftGroups.partition(partition.id());
        RaftClient client = clients.remove(groupId);
        groupChanges.execute(() -> {
            try {
                if (client != null) {
                    client.close();
                }
                admin.getGroupManagementApi(ClusterMembers.peerId(nodeId)).remove(groupId, true, false);
                LOG.info("Removed Raft group {} of {}", groupId, partition.id());
            } catch (IOException e) {
                LOG.error("Removing Raft group {} of {} failed", groupId, partition.id(), e);
            }
        });
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
