package io.tidemark.replication.cluster;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.DurableFiles;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.replication.partition.KnownLeaders;
import io.tidemark.replication.partition.PartitionGroup;
import io.tidemark.replication.partition.RemotePartition;
import io.tidemark.replication.partition.ReplicatedPartition;
import io.tidemark.replication.raft.RaftGroups;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import io.tidemark.replication.statemachine.GroupStateMachine;
import io.tidemark.replication.statemachine.HostedPartition;
import io.tidemark.replication.statemachine.PartitionKey;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.exceptions.AlreadyExistsException;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The partition replicas of this broker and the Raft groups that host them: starts a group on the local server when
 * the metadata group assigns one of its partitions here (in the background, since that runs on the metadata group's
 * apply thread), stops it and deletes its directory when it hosts nothing here any more, and keeps one Raft client per
 * group for appends forwarded to its leader.
 *
 * <p>Which partitions a group hosts is decided in the group's own log (partition change entries, so every replica
 * applies every batch against the same partitions): where this broker leads a group, it submits the changes that
 * make the group host what the metadata group assigned to it ({@link #reconcile}): when the assignment changes, when
 * the group's leader changes, and every {@value #RECONCILE_INTERVAL_MS} ms in case a change failed.
 *
 * <p>A broker runs a group when it holds a replica of one of its partitions, or when a reassignment under way moves
 * the partition to it (the target). A replica of the target that is not a replica yet joins the group with no peers
 * at all: a Ratis server outside its group's configuration never starts an election, so the empty replica cannot win
 * one or disturb the group; it learns the configuration from the leader once the leader adds it, and catches up then
 * ({@link PartitionReassignment}). It serves nothing until the reassignment completes.
 *
 * <p>Adding a group that Ratis already reopened from disk at start is answered with {@code AlreadyExists}, which is
 * success here: replaying the metadata log re-announces every topic.
 *
 * <p>Thread-safe.
 */
public final class PartitionReplicas implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionReplicas.class);
    private static final int CLOSED_GROUP_DELETE_ATTEMPTS = 30;
    /** How often every led group's partitions are compared with what it should host, to redo a change that failed. */
    static final long RECONCILE_INTERVAL_MS = 1_000;

    private final int nodeId;
    private final ClusterMembers members;
    private final RaftServer server;
    private final RaftClient admin;
    private final Function<Map<String, String>, TopicConfig> configs;
    private final KnownLeaders remoteLeaders;
    private final Path raftStorageDir;
    private final ScheduledExecutorService groupChanges = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "tidemark-group-changes");
        thread.setDaemon(true);
        return thread;
    });
    private final Map<RaftGroupId, RaftClient> clients = new ConcurrentHashMap<>();
    private final Map<RaftGroupId, PartitionGroup> groups = new ConcurrentHashMap<>();
    /** What each group running here should host, as the metadata group assigned it. */
    private final Map<RaftGroupId, Map<PartitionKey, GroupPartition>> expected = new ConcurrentHashMap<>();
    /** The groups with a partition change submitted and not answered yet. */
    private final Set<RaftGroupId> changing = ConcurrentHashMap.newKeySet();

    /**
     * @param configs        a topic's config from its overrides, over this broker's defaults
     * @param remoteLeaders  who leads the partitions of which this broker holds no replica
     * @param raftStorageDir where the Raft server keeps a directory per group, named by the group's UUID
     */
    public PartitionReplicas(int nodeId, ClusterMembers members, RaftServer server, RaftClient admin,
                             Function<Map<String, String>, TopicConfig> configs, KnownLeaders remoteLeaders,
                             Path raftStorageDir) {
        this.nodeId = nodeId;
        this.members = members;
        this.server = server;
        this.admin = admin;
        this.configs = configs;
        this.remoteLeaders = remoteLeaders;
        this.raftStorageDir = raftStorageDir;
        effectiveConfig(Map.of());
        groupChanges.scheduleWithFixedDelay(this::reconcileAll, RECONCILE_INTERVAL_MS, RECONCILE_INTERVAL_MS,
                TimeUnit.MILLISECONDS);
    }

    /**
     * The config of a topic with {@code overrides} on this broker's defaults.
     *
     * @throws TidemarkException INVALID_CONFIG when a key is invalid, or max.batch.bytes is above what one Raft
     *                           entry holds (a produced batch travels as one entry at least)
     */
    TopicConfig effectiveConfig(Map<String, String> overrides) {
        TopicConfig config = configs.apply(overrides);
        int largest = largestBatchBytes();
        if (config.maxBatchBytes() > largest) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "max.batch.bytes " + config.maxBatchBytes()
                    + " is above the largest batch a Raft entry holds on this broker: " + largest + " bytes "
                    + "(raft.log.write.buffer.bytes less " + (RaftServerConfigKeys.Log.writeBufferSize(
                    server.getProperties()).getSizeInt() - largest) + "); lower it or "
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
        return GroupEntryFormat.largestBatchBytes(RaftSettings.maxRequestBytes(server.getProperties()));
    }

    /** Whether this broker runs the partition's group under {@code assignment}: a replica or a target of it. */
    private boolean hosts(PartitionAssignment assignment) {
        return assignment.getReplicaNodeIdsList().contains(nodeId)
                || assignment.getTargetReplicaNodeIdsList().contains(nodeId);
    }

    /**
     * The partition as this broker serves it; starts its Raft group here when this broker hosts it (with the
     * replicas as peers when it is one, with no peers when it only joins a reassignment's target) and has the group
     * add it.
     */
    Partition open(TopicPartition id, UUID topicId, PartitionAssignment assignment, Map<String, String> overrides) {
        List<Integer> replicaNodeIds = assignment.getReplicaNodeIdsList();
        RaftGroupId groupId = RaftGroups.partition(id);
        PartitionKey key = new PartitionKey(topicId, id.partition());
        if (hosts(assignment)) {
            expected.computeIfAbsent(groupId, g -> new ConcurrentHashMap<>()).put(key, GroupPartition.newBuilder()
                    .setTopic(id.topic()).setTopicId(TopicIds.toBytes(topicId)).setPartition(id.partition())
                    .putAllOverrides(overrides).build());
            RaftGroup group = replicaNodeIds.contains(nodeId)
                    ? RaftGroup.valueOf(groupId, members.peers(replicaNodeIds)) : RaftGroup.valueOf(groupId);
            groupChanges.execute(() -> {
                addGroup(group);
                reconcile(groupId);
            });
        }
        if (!replicaNodeIds.contains(nodeId)) {
            return new RemotePartition(id, members, replicaNodeIds, remoteLeaders);
        }
        RaftGroup group = RaftGroup.valueOf(groupId, members.peers(replicaNodeIds));
        return new ReplicatedPartition(id, key, partitionGroup(group), replicaNodeIds,
                id.topic().startsWith(Topic.INTERNAL_PREFIX), largestBatchBytes());
    }

    /** The front end of a group, one per group: its partitions share its group commit. */
    private PartitionGroup partitionGroup(RaftGroup group) {
        RaftGroupId groupId = group.getGroupId();
        return groups.computeIfAbsent(groupId, g -> new PartitionGroup(groupId, server, members,
                new PartitionGroup.RaftClients() {
                    @Override
                    public RaftClient get() {
                        return clients.computeIfAbsent(groupId, c -> groupClient(group));
                    }

                    @Override
                    public void discard(RaftClient failed) {
                        if (clients.remove(groupId, failed)) {
                            groupChanges.execute(() -> closeQuietly(failed));
                        }
                    }
                }));
    }

    /** A topic's config changed: partitions the groups add from now on get the new overrides. */
    void overridesChanged(TopicPartition id, UUID topicId, Map<String, String> overrides) {
        Map<PartitionKey, GroupPartition> wanted = expected.get(RaftGroups.partition(id));
        if (wanted != null) {
            wanted.computeIfPresent(new PartitionKey(topicId, id.partition()), (key, partition) -> partition
                    .toBuilder().clearOverrides().putAllOverrides(overrides).build());
        }
    }

    /** A group's leader changed (the group's state machine tells, on a Ratis thread). */
    public void leaderChanged(RaftGroupId groupId) {
        try {
            groupChanges.execute(() -> reconcile(groupId));
        } catch (RejectedExecutionException e) {
            LOG.debug("{} changed leader while the broker stops", groupId);
        }
    }

    private void reconcileAll() {
        expected.keySet().forEach(this::reconcile);
    }

    /**
     * Where this broker leads {@code groupId}: submits the partition change that makes the group host what it should
     * (nothing when it does, or a change is on its way). Runs on the group-changes thread.
     */
    private void reconcile(RaftGroupId groupId) {
        PartitionGroup group = groups.get(groupId);
        Map<PartitionKey, GroupPartition> wanted = expected.getOrDefault(groupId, Map.of());
        if (group == null || !group.leads() || changing.contains(groupId)) {
            return;
        }
        GroupStateMachine stateMachine;
        Set<PartitionKey> hosted;
        try {
            stateMachine = group.stateMachine();
            hosted = stateMachine.hostedPartitions();
        } catch (TidemarkException e) {
            return;
        }
        GroupChange.Builder change = GroupChange.newBuilder();
        wanted.forEach((key, partition) -> {
            if (!hosted.contains(key)) {
                change.addAdd(partition);
            }
        });
        for (PartitionKey key : hosted) {
            if (!wanted.containsKey(key)) {
                stateMachine.partition(key).map(HostedPartition::partition).ifPresent(change::addRemove);
            }
        }
        if (change.getAddCount() == 0 && change.getRemoveCount() == 0) {
            return;
        }
        changing.add(groupId);
        group.submitChange(change.build()).whenComplete((reply, failure) -> {
            changing.remove(groupId);
            if (failure != null) {
                LOG.debug("{}: the partition change {} failed; it is tried again: {}", groupId, change, failure.toString());
            } else {
                LOG.info("{}: added {} and removed {} partitions", groupId, change.getAddCount(),
                        change.getRemoveCount());
            }
        });
    }

    /**
     * The partition as this broker serves it after a reassignment began or completed: stops and deletes its group
     * here when this broker no longer hosts it, starts it when it newly does, and drops the Raft client that knew the
     * old peers.
     */
    Partition reassigned(TopicPartition id, UUID topicId, PartitionAssignment before, PartitionAssignment after,
                         Map<String, String> overrides) {
        RaftGroupId groupId = RaftGroups.partition(id);
        RaftClient client = clients.remove(groupId);
        if (client != null) {
            groupChanges.execute(() -> closeQuietly(client));
        }
        groups.remove(groupId);
        if (hosts(before) && !hosts(after)) {
            remove(id);
        }
        return open(id, topicId, after, overrides);
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

    private RaftClient groupClient(RaftGroup group) {
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
        expected.remove(groupId);
        groups.remove(groupId);
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
