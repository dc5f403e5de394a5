package io.tidemark.replication.cluster;

import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.ThreadFactoryBuilder;
import com.google.protobuf.ByteString;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.DurableFiles;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupChangeReply;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionState;
import io.tidemark.replication.partition.KnownLeaders;
import io.tidemark.replication.partition.PartitionGroup;
import io.tidemark.replication.partition.ProduceBacklog;
import io.tidemark.replication.partition.RemotePartition;
import io.tidemark.replication.partition.ReplicatedPartition;
import io.tidemark.replication.raft.RaftTransport;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import io.tidemark.replication.raft.RunningDivisions;
import io.tidemark.replication.snapshot.SnapshotSource;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import io.tidemark.replication.statemachine.GroupStateMachine;
import io.tidemark.replication.statemachine.HostedPartition;
import io.tidemark.replication.statemachine.PartitionHost;
import io.tidemark.replication.statemachine.PartitionKey;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
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
import java.time.InstantSource;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The partition groups of this broker and the partitions they host: starts a group's replica on the local Raft server
 * when the metadata group places a partition in a group of which this broker is a replica (in the background, since
 * that runs on the metadata group's apply thread), and stops it and deletes its directory when the group hosts
 * nothing here any more (group ids are never reused, so a group without partitions is gone for good). Keeps one
 * Raft client per group for appends forwarded to its leader.
 *
 * <p>Which partitions a group hosts is decided in the group's own log (partition change entries, so every replica
 * applies every batch against the same partitions): where this broker leads a group, it submits the changes that
 * make the group host what the metadata places in it ({@link #reconcile}): when the metadata changes, when the
 * group's leader changes, and every {@value #RECONCILE_INTERVAL_MS} ms in case a change failed. It acts only from a
 * view of the metadata at least as new as every change the group applied ({@link GroupStateMachine#metadataIndex}):
 * a broker whose view is behind might not know a partition the group took on, and must not remove it.
 *
 * <p>A partition that a reassignment moves to another group is imported there: the target group's leader adds it
 * empty and importing, and {@link PartitionMove} copies it, seals it in its old group, activates it and completes the
 * reassignment in the metadata; the old group's leader removes it once the metadata no longer places it there.
 *
 * <p>Thread-safe: the metadata group's apply thread places and unplaces partitions; one thread,
 * {@code tidemark-group-changes}, starts, stops and reconciles groups; one, {@code tidemark-partition-moves}, runs
 * the moves.
 */
public final class PartitionReplicas implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionReplicas.class);
    private static final int CLOSED_GROUP_DELETE_ATTEMPTS = 30;
    /**
     * Threads handling the groups' replies: answering produce requests is short, but submitting a group's next entry
     * may wait for its Raft server, so a second thread keeps one group's wait from holding every other's answers.
     */
    private static final int REPLY_THREADS = 2;
    private static final String RETIRED_SUFFIX = ".deleted";
    /** How often every led group's partitions are compared with what it should host, to redo a change that failed. */
    static final long RECONCILE_INTERVAL_MS = 1_000;

    /** A partition moving into a group: from which group, on which replicas, to which. */
    record Incoming(GroupPartition partition, UUID fromGroup, List<Integer> fromReplicas, List<Integer> target) {
    }

    /** A partition group this broker is a replica of, and what the metadata places in it. */
    private static final class GroupHere {
        private final PartitionGroup front;
        private final Map<PartitionKey, GroupPartition> live = new ConcurrentHashMap<>();
        private final Map<PartitionKey, Incoming> importing = new ConcurrentHashMap<>();
        private final PartitionSeals seals = new PartitionSeals();

        private GroupHere(PartitionGroup front) {
            this.front = front;
        }

        private boolean empty() {
            return live.isEmpty() && importing.isEmpty();
        }
    }

    private final int nodeId;
    private final ClusterMembers members;
    private final RaftServer server;
    private final RunningDivisions divisions;
    private final RaftClient admin;
    private final Function<Map<String, String>, TopicConfig> configs;
    private final KnownLeaders remoteLeaders;
    private final MetadataGroup metadata;
    private final SnapshotSource sources;
    private final InstantSource clock;
    private final Path raftStorageDir;
    private final long producerIdExpirationMs;
    private final ClientId localClient;
    private final ScheduledExecutorService groupChanges = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "tidemark-group-changes");
        thread.setDaemon(true);
        return thread;
    });
    private final ExecutorService moves = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "tidemark-partition-moves");
        thread.setDaemon(true);
        return thread;
    });
    /**
     * Where the groups' replies are handled ({@link PartitionGroup}'s callbacks, each group's in order on its own
     * sequential executor): not on Ratis' threads, which completed them, and one of which may hold its server's lock.
     */
    private final ExecutorService replies = Executors.newFixedThreadPool(REPLY_THREADS,
            new ThreadFactoryBuilder().setNameFormat("tidemark-group-replies-%d").setDaemon(true).build());
    /** Produced batches this broker holds for its groups, bounded. */
    private final ProduceBacklog backlog;
    private final RaftTransport transport;
    private final Map<RaftGroupId, RaftClient> clients = new ConcurrentHashMap<>();
    private final Map<RaftGroupId, GroupHere> groups = new ConcurrentHashMap<>();
    /** The groups with a partition change submitted and not answered yet. */
    private final Set<RaftGroupId> changing = ConcurrentHashMap.newKeySet();
    /** The partitions whose move runs (or waits to run) here. */
    private final Set<PartitionKey> moving = ConcurrentHashMap.newKeySet();

    /**
     * @param divisions      the groups' replicas running on {@code server}
     * @param configs        a topic's config from its overrides, over this broker's defaults
     * @param remoteLeaders  who leads the groups of which this broker holds no replica
     * @param sources        reads other brokers' replicas, for partitions moving here
     * @param raftStorageDir where the Raft server keeps a directory per group, named by the group's UUID
     * @param producerIdExpirationMs this broker's producer.id.expiration.ms, which the groups it leads take
     * @param localClient    the client id of this broker's submissions to its own Raft server
     * @param backlog        the bound on produced batches this broker holds for its groups, not answered yet
     */
    public PartitionReplicas(int nodeId, ClusterMembers members, RaftServer server, RunningDivisions divisions,
                             RaftClient admin,
                             Function<Map<String, String>, TopicConfig> configs, KnownLeaders remoteLeaders,
                             MetadataGroup metadata, SnapshotSource sources, InstantSource clock,
                             Path raftStorageDir, long producerIdExpirationMs, ClientId localClient,
                             ProduceBacklog backlog, RaftTransport transport) {
        this.nodeId = nodeId;
        this.transport = transport;
        this.backlog = backlog;
        this.members = members;
        this.server = server;
        this.divisions = divisions;
        this.admin = admin;
        this.configs = configs;
        this.remoteLeaders = remoteLeaders;
        this.metadata = metadata;
        this.sources = sources;
        this.clock = clock;
        this.raftStorageDir = raftStorageDir;
        this.producerIdExpirationMs = producerIdExpirationMs;
        this.localClient = localClient;
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

    /** The groups this broker is a replica of. */
    Collection<PartitionGroup> groupsHere() {
        return groups.values().stream().map(g -> g.front).toList();
    }

    /**
     * Places a partition as the metadata group assigned it and returns it as this broker serves it: in its group when
     * this broker is one of its replicas (starting the group here if needed), and as importing in the target group of
     * a reassignment under way when this broker is one of the target's replicas.
     */
    Partition open(TopicPartition id, UUID topicId, PartitionAssignment assignment, Map<String, String> overrides) {
        GroupPartition partition = GroupPartition.newBuilder().setTopic(id.topic())
                .setTopicId(TopicIds.toBytes(topicId)).setPartition(id.partition()).putAllOverrides(overrides).build();
        PartitionKey key = PartitionKey.of(partition);
        List<Integer> replicas = assignment.getReplicaNodeIdsList();
        RaftGroupId groupId = RaftGroupId.valueOf(TopicIds.fromBytes(assignment.getGroupId()));
        if (replicas.contains(nodeId)) {
            groupHere(groupId, replicas).live.put(key, partition);
            schedule(groupId);
        }
        List<Integer> target = assignment.getTargetReplicaNodeIdsList();
        if (target.contains(nodeId)) {
            RaftGroupId targetId = RaftGroupId.valueOf(TopicIds.fromBytes(assignment.getTargetGroupId()));
            groupHere(targetId, target).importing.put(key, new Incoming(partition, groupId.getUuid(), replicas,
                    target));
            schedule(targetId);
        }
        if (!replicas.contains(nodeId)) {
            return new RemotePartition(id, members, replicas, groupId.getUuid(), remoteLeaders);
        }
        return new ReplicatedPartition(id, key, groups.get(groupId).front, replicas,
                id.topic().startsWith(Topic.INTERNAL_PREFIX), largestBatchBytes());
    }

    /**
     * The partition's place changed (a reassignment began or completed): places it as {@code after} says first, then
     * takes it out of the groups {@code before} named that {@code after} does not, so no group looks empty in between.
     */
    Partition reassigned(TopicPartition id, UUID topicId, PartitionAssignment before, PartitionAssignment after,
                         Map<String, String> overrides) {
        Partition partition = open(id, topicId, after, overrides);
        PartitionKey key = new PartitionKey(topicId, id.partition());
        if (!before.getGroupId().equals(after.getGroupId())) {
            unplace(key, before.getGroupId(), false);
        }
        if (!before.getTargetGroupId().isEmpty() && !before.getTargetGroupId().equals(after.getTargetGroupId())) {
            unplace(key, before.getTargetGroupId(), true);
        }
        return partition;
    }

    /** The partition's topic was deleted: takes it out of its groups. */
    void released(TopicPartition id, UUID topicId, PartitionAssignment assignment) {
        PartitionKey key = new PartitionKey(topicId, id.partition());
        unplace(key, assignment.getGroupId(), false);
        if (!assignment.getTargetGroupId().isEmpty()) {
            unplace(key, assignment.getTargetGroupId(), true);
        }
    }

    private void unplace(PartitionKey key, ByteString group, boolean importing) {
        RaftGroupId groupId = RaftGroupId.valueOf(TopicIds.fromBytes(group));
        GroupHere here = groups.get(groupId);
        if (here != null) {
            (importing ? here.importing : here.live).remove(key);
            schedule(groupId);
        }
    }

    /**
     * A topic's config changed: the groups that host the partition take the new overrides through their logs (the
     * leader's next {@link #reconcile}), and so do the partitions they add from now on.
     */
    void overridesChanged(UUID topicId, int partition, Map<String, String> overrides) {
        PartitionKey key = new PartitionKey(topicId, partition);
        for (GroupHere here : groups.values()) {
            here.live.computeIfPresent(key, (k, p) -> p.toBuilder().clearOverrides().putAllOverrides(overrides)
                    .build());
            here.importing.computeIfPresent(key, (k, incoming) -> new Incoming(incoming.partition().toBuilder()
                    .clearOverrides().putAllOverrides(overrides).build(), incoming.fromGroup(),
                    incoming.fromReplicas(), incoming.target()));
            if (here.live.containsKey(key) || here.importing.containsKey(key)) {
                schedule(here.front.id());
            }
        }
    }

    private GroupHere groupHere(RaftGroupId groupId, List<Integer> replicas) {
        return groups.computeIfAbsent(groupId, g -> new GroupHere(new PartitionGroup(groupId, replicas, server,
                divisions, members, new PartitionGroup.RaftClients() {
                    @Override
                    public RaftClient get() {
                        return clients.computeIfAbsent(groupId, c -> groupClient(RaftGroup.valueOf(groupId,
                                members.peers(replicas))));
                    }

                    @Override
                    public void discard(RaftClient failed) {
                        if (clients.remove(groupId, failed)) {
                            groupChanges.execute(() -> closeQuietly(failed));
                        }
                    }
                }, localClient, MoreExecutors.newSequentialExecutor(replies), backlog)));
    }

    /** Starts or stops the group here as what it hosts says, then reconciles it; on the group-changes thread. */
    private void schedule(RaftGroupId groupId) {
        try {
            groupChanges.execute(() -> {
                GroupHere here = groups.get(groupId);
                if (here == null) {
                    return;
                }
                if (here.empty()) {
                    retire(groupId, here);
                } else {
                    start(groupId, here.front.replicas());
                    reconcile(groupId);
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.debug("{} changed while the broker stops", groupId);
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
        groups.keySet().forEach(this::reconcile);
    }

    /**
     * Where this broker leads {@code groupId}: submits the partition change that makes the group host what it should
     * (nothing when it does, when a change is on its way, or when this broker's view of the metadata is older than
     * the group's), and starts the moves of partitions it imports. Runs on the group-changes thread.
     */
    private void reconcile(RaftGroupId groupId) {
        GroupHere here = groups.get(groupId);
        if (here == null || !here.front.leads() || changing.contains(groupId)) {
            return;
        }
        long metadataIndex = metadata.appliedIndex();
        PartitionHost host;
        Map<PartitionKey, HostedPartition> hosted = new HashMap<>();
        try {
            host = here.front.host();
            for (PartitionKey key : host.hostedPartitions()) {
                host.partition(key).ifPresent(p -> hosted.put(key, p));
            }
        } catch (TidemarkException e) {
            return;
        }
        if (metadataIndex < host.metadataIndex()) {
            return;
        }
        GroupChange change = changeToHost(here, hosted, metadataIndex, host.producerIdExpirationMs());
        if (change.getAddCount() == 0 && change.getImportCount() == 0 && change.getRemoveCount() == 0
                && change.getConfigureCount() == 0 && change.getUnsealCount() == 0
                && change.getProducerIdExpirationMs() == 0) {
            return;
        }
        changing.add(groupId);
        here.front.submitChange(change).whenComplete((reply, failure) -> {
            changing.remove(groupId);
            if (failure != null) {
                LOG.debug("{}: the partition change {} failed; it is tried again: {}", groupId, change,
                        failure.toString());
            } else {
                LOG.info("{}: added {}, imported {}, removed {}, configured {} and unsealed {} partitions{}",
                        groupId, change.getAddCount(), change.getImportCount(), change.getRemoveCount(),
                        change.getConfigureCount(), change.getUnsealCount(),
                        change.getProducerIdExpirationMs() == 0 ? ""
                                : "; producers are forgotten " + change.getProducerIdExpirationMs()
                                + " ms after their last batch");
                leaderChanged(groupId);
            }
        });
    }

    /**
     * The change that makes a group host what the metadata places in it: partitions to add, import and remove,
     * hosted partitions whose overrides are not the topic's, partitions sealed to move out for too long
     * ({@link PartitionSeals}), and this broker's producer.id.expiration.ms when the group's differs; starts the moves
     * of the partitions it imports already.
     */
    private GroupChange changeToHost(GroupHere here, Map<PartitionKey, HostedPartition> hosted, long metadataIndex,
                                     long producerIdExpirationMs) {
        GroupChange.Builder change = GroupChange.newBuilder().setMetadataIndex(metadataIndex)
                .addAllUnseal(here.seals.overdue(hosted.values().stream()
                        .filter(p -> p.state() == PartitionState.PARTITION_SEALED).map(HostedPartition::partition)
                        .toList(), clock.millis()));
        if (producerIdExpirationMs != this.producerIdExpirationMs) {
            change.setProducerIdExpirationMs(this.producerIdExpirationMs);
        }
        here.live.forEach((key, partition) -> {
            HostedPartition now = hosted.get(key);
            if (now == null && !here.importing.containsKey(key)) {
                change.addAdd(partition);
            } else if (now != null && !now.partition().getOverridesMap().equals(partition.getOverridesMap())) {
                change.addConfigure(partition);
            }
        });
        here.importing.forEach((key, incoming) -> {
            HostedPartition now = hosted.get(key);
            if (now == null) {
                change.addImport(incoming.partition());
            } else {
                if (!now.partition().getOverridesMap().equals(incoming.partition().getOverridesMap())) {
                    change.addConfigure(incoming.partition());
                }
                startMove(here.front, key, incoming);
            }
        });
        hosted.forEach((key, partition) -> {
            if (!here.live.containsKey(key) && !here.importing.containsKey(key)) {
                change.addRemove(partition.partition());
            }
        });
        return change.build();
    }

    /** Runs the move of a partition this broker's group imports, unless it runs already. */
    private void startMove(PartitionGroup into, PartitionKey key, Incoming incoming) {
        if (!moving.add(key)) {
            return;
        }
        PartitionMove move = new PartitionMove(into, incoming, sources, remoteLeaders, this::changeOldGroup,
                metadata::appliedIndex, metadata::submit, largestCopyBytes(), clock);
        try {
            moves.execute(() -> {
                try {
                    move.run();
                } finally {
                    moving.remove(key);
                }
            });
        } catch (RejectedExecutionException e) {
            moving.remove(key);
        }
    }

    private int largestCopyBytes() {
        return Math.min(ReplicaServiceAdapter.MAX_READ_BYTES,
                GroupEntryFormat.largestCopyBytes(RaftSettings.maxRequestBytes(server.getProperties())));
    }

    /**
     * Changes the group a partition moves out of (seals or releases it): through its front end when this broker is one
     * of the group's replicas, else through a Raft client of its own.
     */
    private GroupChangeReply changeOldGroup(UUID group, List<Integer> replicas, GroupChange change)
            throws IOException {
        GroupHere here = groups.get(RaftGroupId.valueOf(group));
        if (here != null) {
            try {
                return here.front.submitChange(change).get(PartitionMove.CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted changing group " + group + " for a partition move", e);
            } catch (Exception e) {
                throw new IOException("changing group " + group + " for a partition move failed: " + e.getMessage(),
                        e);
            }
        }
        try (RaftClient client = groupClient(RaftGroup.valueOf(RaftGroupId.valueOf(group), members.peers(replicas)))) {
            RaftClientReply reply = client.io().send(Message.valueOf(GroupEntryFormat.change(change)));
            if (!reply.isSuccess()) {
                throw new IOException("changing group " + group + " for a partition move failed: "
                        + reply.getException());
            }
            return GroupChangeReply.parseFrom(reply.getMessage().getContent().toByteArray());
        }
    }

    private void start(RaftGroupId groupId, List<Integer> replicas) {
        RaftGroup group = RaftGroup.valueOf(groupId, members.peersPreferringFirst(replicas));
        try {
            if (runsHere(groupId)) {
                if (!startedWithoutPeers(groupId)) {
                    return;
                }
                LOG.warn("Partition group {} came back from storage without peers, entries or votes (a stop cut its "
                        + "creation short); making it again with its replicas {}", groupId, replicas);
                admin.getGroupManagementApi(RaftPeerIds.of(nodeId)).remove(groupId, true, false);
            }
            admin.getGroupManagementApi(RaftPeerIds.of(nodeId)).add(group);
            LOG.info("Started partition group {} here", group);
        } catch (AlreadyExistsException e) {
            LOG.debug("Partition group {} already runs here", groupId);
        } catch (IOException e) {
            if (e.getCause() instanceof AlreadyExistsException
                    || String.valueOf(e.getMessage()).contains("already exists")) {
                return;
            }
            LOG.error("Starting partition group {} failed", group, e);
        }
    }

    private RaftClient groupClient(RaftGroup group) {
        return transport.client(group).setLeaderId(RaftPeerIds.of(nodeId))
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
     * Stops a group that hosts nothing here any more and deletes its directory. A group's id is never used again, so
     * it will not host anything here again. Runs on the group-changes thread.
     */
    private void retire(RaftGroupId groupId, GroupHere here) {
        groups.remove(groupId, here);
        RaftClient client = clients.remove(groupId);
        try {
            if (client != null) {
                client.close();
            }
            if (runsHere(groupId)) {
                admin.getGroupManagementApi(RaftPeerIds.of(nodeId)).remove(groupId, false, false);
                LOG.info("Removed partition group {}, which hosts nothing here any more", groupId);
            }
        } catch (GroupMismatchException e) {
            LOG.debug("Partition group {} was closed meanwhile", groupId);
        } catch (IOException e) {
            LOG.error("Removing partition group {} failed", groupId, e);
            return;
        }
        deleteClosedGroupDir(groupId, 1);
    }

    /**
     * Deletes the directory of a group Ratis closed; retried every second while Ratis may still be writing its
     * last files there. It is renamed to {@code GROUP-UUID.deleted} first, which Ratis does not take for a group, so a
     * crash while the files are deleted never leaves half a group for Ratis to start ({@link #deleteRetiredGroupDirs}
     * finishes the deletion at the next start).
     */
    private void deleteClosedGroupDir(RaftGroupId groupId, int attempt) {
        Path dir = raftStorageDir.resolve(groupId.getUuid().toString());
        Path retired = raftStorageDir.resolve(dir.getFileName() + RETIRED_SUFFIX);
        try {
            if (Files.exists(dir)) {
                DurableFiles.move(dir, retired);
            }
            if (!Files.exists(retired)) {
                return;
            }
            DurableFiles.deleteTree(retired);
            LOG.info("Deleted the directory {} of partition group {}", dir, groupId);
        } catch (IOException e) {
            if (attempt < CLOSED_GROUP_DELETE_ATTEMPTS) {
                groupChanges.schedule(() -> deleteClosedGroupDir(groupId, attempt + 1), 1, TimeUnit.SECONDS);
            } else {
                LOG.error("Deleting the directory {} of partition group {} failed {} times; delete it by hand", dir,
                        groupId, attempt, e);
            }
        }
    }

    /**
     * Finishes deleting the directories of groups retired before a crash ({@link #deleteClosedGroupDir}); run before
     * the Raft server starts.
     */
    public static void deleteRetiredGroupDirs(Path raftStorageDir) throws IOException {
        if (!Files.isDirectory(raftStorageDir)) {
            return;
        }
        List<Path> retired;
        try (Stream<Path> dirs = Files.list(raftStorageDir)) {
            retired = dirs.filter(d -> d.getFileName().toString().endsWith(RETIRED_SUFFIX)).toList();
        }
        for (Path dir : retired) {
            DurableFiles.deleteTree(dir);
            LOG.info("Deleted {}, the directory of a partition group retired before the broker stopped", dir);
        }
    }

    /**
     * Whether Ratis started the group from a directory that holds no configuration, no entry and no vote: the broker
     * stopped after Ratis made the group's directory and before it wrote the group's first configuration (BrokerAloneIT,
     * a broker stopped right after it started). Such a replica has no peers, so it never elects nor follows, and any
     * partition placed in the group stays without a leader. Removing it loses nothing: a replica that never voted nor
     * took an entry is one that never existed.
     */
    private boolean startedWithoutPeers(RaftGroupId groupId) throws IOException {
        RaftServer.Division division = server.getDivision(groupId);
        return division.getRaftConf().getCurrentPeers().isEmpty()
                && division.getRaftLog().getLastEntryTermIndex() == null
                && division.getInfo().getCurrentTerm() == 0;
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
        moves.shutdownNow();
        replies.shutdownNow();
        for (RaftClient client : clients.values()) {
            client.close();
        }
        clients.clear();
    }
}
