package io.tidemark.replication.statemachine;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.core.auth.AclIndex;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.ClientQuota;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ErrorDetail;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.MetadataReply;
import io.tidemark.proto.v1.MetadataSnapshot;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionGroupRecord;
import io.tidemark.proto.v1.PartitionReassignment;
import io.tidemark.proto.v1.TopicAssignment;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.snapshot.MetadataSnapshotFile;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The metadata group's state machine (the controller): the cluster's topics with their config overrides and
 * the replicas of every partition, with the target of a reassignment under way, the cluster's ACLs (bindings
 * added and removed as sets: adding one held, or removing one not held, changes nothing) and principals' own quotas
 * (each change replaces a principal's). Entries are
 * {@link MetadataCommand}s; applying one checks it against the state (a topic created twice, an unknown topic or
 * partition, a reassignment that conflicts with the one under way) and answers a {@link MetadataReply}, the same
 * on every member. Each applied change is passed to a {@link Listener}, which starts or stops the partition groups this
 * broker hosts.
 *
 * <p>Snapshots: the whole state, every topic and partition group, at an entry ({@link MetadataSnapshotFile}), taken
 * when Ratis asks (every {@code raft.snapshot.interval.entries} entries, and when the broker stops); Ratis then purges
 * the log up to it (behind what every member has committed), so the log does not grow for ever. A member starts from
 * its latest snapshot and replays the entries after it. A member that needs entries the leader purged (it lost its
 * Raft storage) fetches the leader's latest snapshot ({@link SnapshotSource}), and Ratis reloads the state machine from
 * it. Restoring a snapshot tells the {@link Listener} what changed, as replaying the entries would: every topic
 * created at start, and at a reload what differs from the state it replaces.
 *
 * <p>Topic ids: the broker that submits a create picks the topic's id ({@code TopicAssignment.topic_id}), so every
 * member applies the same. A create written before topics had ids carries none and gets {@link #legacyTopicId}, a
 * name-based UUID of the topic's name and the entry's log index: the same on every member and at every replay, and
 * different for a topic of the same name created again later. An alter keeps the id the topic has.
 *
 * <p>Partition groups: applying a command that places partitions (create, the begin of a reassignment) puts each
 * into a partition group of its replica list ({@link PartitionGroupRegistry}) and records it in the partition's
 * assignment ({@code group_id}, {@code target_group_id}); within a topic, the partitions of one replica list take
 * the list's {@code groups_per_replica_set} slots in turn, and a moving partition takes the slot of its number.
 * Applying a command that unplaces partitions (delete, the completion of a reassignment) forgets the groups no
 * partition names any more. An alter changes only a topic's overrides, whatever else the command carries (the
 * submitter read the assignment a moment earlier).
 *
 * <p>Threading: applied, snapshotted and reloaded on Ratis' updater thread (restored first when Ratis starts the
 * group); {@link #topics()}, {@link #groups()}, {@link #acls()}, {@link #quotas()} and {@link #latestSnapshot()} may be read from any
 * thread.
 */
public final class MetadataStateMachine extends InstallableStateMachine {
    /** Told of every applied change, on the applying thread: keep it short. */
    public interface Listener {
        void topicCreated(TopicAssignment topic);

        void topicAltered(TopicAssignment topic);

        void topicDeleted(TopicAssignment topic);

        /** A reassignment began (a target was recorded) or completed (the target became the replicas). */
        void partitionReassigned(TopicAssignment topic, PartitionAssignment before);
    }

    /** The latest metadata snapshot of another broker's member of the group. */
    public interface SnapshotSource {
        /** Fails with a TidemarkException when that broker cannot answer or has no snapshot yet. */
        CompletableFuture<MetadataSnapshot> latestMetadataSnapshot(int nodeId);
    }

    private static final Logger LOG = LoggerFactory.getLogger(MetadataStateMachine.class);

    private final Map<String, TopicAssignment> topics = new ConcurrentHashMap<>();
    private final PartitionGroupRegistry groups = new PartitionGroupRegistry();
    private final Listener listener;
    private final SnapshotSource leaderSnapshots;
    private volatile MetadataSnapshot latestSnapshot;
    private volatile AclIndex acls = AclIndex.EMPTY;
    /** Principals' own quotas, by principal; replaced whole at each change. */
    private volatile Map<String, ClientQuota> quotas = Map.of();

    /** @param leaderSnapshots where a member behind the leader's purged log fetches the leader's snapshot */
    public MetadataStateMachine(Listener listener, SnapshotSource leaderSnapshots) {
        this.listener = listener;
        this.leaderSnapshots = leaderSnapshots;
    }

    @Override
    void load(Path smDir) throws IOException {
        restoreLatestSnapshot();
    }

    /**
     * Restores the latest snapshot, when there is one: the state, the applied index, and the listener told what
     * changed.
     *
     * @throws IOException when the snapshot cannot be read whole, or when there is none but the log was purged
     */
    private void restoreLatestSnapshot() throws IOException {
        SingleFileSnapshotInfo info = latestSnapshotOrWholeLog("The metadata group on " + getId());
        if (info == null) {
            return;
        }
        MetadataSnapshot snapshot = MetadataSnapshotFile.read(info.getFile().getPath());
        TermIndex at = TermIndex.valueOf(snapshot.getTerm(), snapshot.getIndex());
        if (!at.equals(info.getTermIndex())) {
            throw new IOException(info.getFile().getPath() + " holds the metadata at " + at + ", not at "
                    + info.getTermIndex() + " as its name says");
        }
        restore(snapshot);
        setLastAppliedTermIndex(at);
        latestSnapshot = snapshot;
        LOG.info("{}: restored the metadata snapshot at {}: {} topics, {} partition groups", getId(), at,
                snapshot.getTopicsCount(), snapshot.getGroupsCount());
    }

    /**
     * Makes the state the snapshot's and tells the listener what changed, as replaying the entries would have: topics
     * deleted (or deleted and created again under their name), then topics created, altered and partitions
     * reassigned, by name.
     */
    private void restore(MetadataSnapshot snapshot) {
        groups.restore(snapshot.getGroupsList());
        acls = new AclIndex(snapshot.getAclsList());
        quotas = byPrincipal(snapshot.getQuotasList());
        Map<String, TopicAssignment> restored = new HashMap<>();
        snapshot.getTopicsList().forEach(topic -> restored.put(topic.getName(), topic));
        for (TopicAssignment before : topics()) {
            TopicAssignment after = restored.get(before.getName());
            if (after == null || !after.getTopicId().equals(before.getTopicId())) {
                topics.remove(before.getName());
                listener.topicDeleted(before);
            }
        }
        for (TopicAssignment after : snapshot.getTopicsList()) {
            TopicAssignment before = topics.put(after.getName(), after);
            if (before == null) {
                listener.topicCreated(after);
            } else if (!before.equals(after)) {
                changed(before, after);
            }
        }
    }

    /** Tells the listener how a topic kept through a restore changed: its overrides, then each partition's place. */
    private void changed(TopicAssignment before, TopicAssignment after) {
        if (before.getPartitionsCount() != after.getPartitionsCount()) {
            throw new IllegalStateException("topic '" + after.getName() + "' has " + after.getPartitionsCount()
                    + " partitions in the snapshot and " + before.getPartitionsCount() + " here, but no metadata "
                    + "command changes a topic's partition count");
        }
        if (!before.getOverridesMap().equals(after.getOverridesMap())) {
            listener.topicAltered(after);
        }
        for (int p = 0; p < after.getPartitionsCount(); p++) {
            if (!before.getPartitions(p).equals(after.getPartitions(p))) {
                listener.partitionReassigned(after, before.getPartitions(p));
            }
        }
    }

    /** The latest snapshot this member took or installed; empty before the first. */
    public Optional<MetadataSnapshot> latestSnapshot() {
        return Optional.ofNullable(latestSnapshot);
    }

    @Override
    long snapshot() throws IOException {
        TermIndex applied = getLastAppliedTermIndex();
        if (applied == null || applied.getIndex() < 0) {
            return RaftLog.INVALID_LOG_INDEX;
        }
        record(MetadataSnapshot.newBuilder().setTerm(applied.getTerm()).setIndex(applied.getIndex())
                .addAllTopics(topics()).addAllGroups(groups()).addAllAcls(acls.bindings())
                .addAllQuotas(quotas.values()).build());
        return applied.getIndex();
    }

    /** Writes a snapshot where Ratis finds it; Ratis may purge the log up to it once this returns. */
    private void record(MetadataSnapshot snapshot) throws IOException {
        rememberSnapshot(writeFile(snapshot));
        latestSnapshot = snapshot;
    }

    /** Writes a snapshot's file, which a restart or a reload finds; Ratis sees it only once it is remembered. */
    private SingleFileSnapshotInfo writeFile(MetadataSnapshot snapshot) throws IOException {
        TermIndex at = TermIndex.valueOf(snapshot.getTerm(), snapshot.getIndex());
        Path file = storage().getSnapshotFile(at.getTerm(), at.getIndex()).toPath();
        MetadataSnapshotFile.write(file, snapshot);
        return new SingleFileSnapshotInfo(new FileInfo(file, null), at);
    }

    /**
     * The leader no longer has the entries this member needs next (it lost its Raft storage): fetches the leader's
     * latest snapshot and writes it as its own file; the reload restores it, and Ratis sends the entries after it. A
     * snapshot that does not reach the leader's first entry, or a failed fetch, fails the future: Ratis asks again.
     *
     * <p>Ratis sees the snapshot only at the reload ({@link #restoreLatestSnapshot}), when it also resets its log to
     * it; Ratis reloads at the leader's next notice. A member whose latest snapshot Ratis sees takes it as its last
     * entry when its log is empty, in the votes it asks for too: told at once, a member that timed out before the
     * next notice campaigned with the snapshot's entry and a log Ratis had not reset, won, and led from index 0;
     * every follower refused its entries and the metadata group had no working leader until the test gave up
     * (MetadataSnapshotIT, 2026-12-06).
     */
    @Override
    CompletableFuture<TermIndex> installFromLeader(int leader, TermIndex firstInLeaderLog) {
        return leaderSnapshots.latestMetadataSnapshot(leader).thenApply(snapshot -> {
            if (snapshot.getIndex() + 1 < firstInLeaderLog.getIndex()) {
                throw new CompletionException(new IOException("the metadata snapshot of node " + leader
                        + " ends at index " + snapshot.getIndex() + ", but its Raft log starts at "
                        + firstInLeaderLog.getIndex() + ": the entries between are missing"));
            }
            try {
                writeFile(snapshot);
            } catch (IOException e) {
                throw new CompletionException(e);
            }
            LOG.info("{}: installed the metadata snapshot of node {} at index {}: {} topics", getId(), leader,
                    snapshot.getIndex(), snapshot.getTopicsCount());
            return TermIndex.valueOf(snapshot.getTerm(), snapshot.getIndex());
        });
    }

    /** Reloads after a snapshot was installed: restores it, telling the listener what changed. */
    @Override
    void reload() throws IOException {
        restoreLatestSnapshot();
    }

    /** The topics, sorted by name. */
    public List<TopicAssignment> topics() {
        return List.copyOf(new TreeMap<>(topics).values());
    }

    public Optional<TopicAssignment> topic(String name) {
        return Optional.ofNullable(topics.get(name));
    }

    /** The partition groups, by replica list and slot. */
    public List<PartitionGroupRecord> groups() {
        return groups.all();
    }

    public Optional<PartitionGroupRecord> group(UUID id) {
        return groups.group(id);
    }

    /** Principals' own quotas as applied here, by principal, sorted. */
    public Map<String, ClientQuota> quotas() {
        return quotas;
    }

    private static Map<String, ClientQuota> byPrincipal(List<ClientQuota> quotas) {
        Map<String, ClientQuota> sorted = new TreeMap<>();
        quotas.forEach(quota -> sorted.put(quota.getPrincipal(), quota));
        return Collections.unmodifiableMap(sorted);
    }

    /** The cluster's ACLs as applied here. */
    public AclIndex acls() {
        return acls;
    }

    /** The id a create without one, applied at log index {@code index}, gives topic {@code name}. */
    static UUID legacyTopicId(String name, long index) {
        return UUID.nameUUIDFromBytes((name + "@" + index).getBytes(StandardCharsets.UTF_8));
    }

    /** The brokers of the cluster: the members of the metadata group. */
    private Set<Integer> brokers() throws IOException {
        Set<Integer> brokers = new HashSet<>();
        for (RaftPeer peer : getServer().join().getDivision(getGroupId()).getGroup().getPeers()) {
            brokers.add(RaftPeerIds.nodeId(peer.getId()));
        }
        return brokers;
    }

    /** Refuses, before it is appended, a request that is not a command a broker sends ({@link MetadataCommandCheck}). */
    @Override
    public TransactionContext startTransaction(RaftClientRequest request) {
        TransactionContext trx = TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request)
                .setLogData(request.getMessage().getContent()).build();
        try {
            MetadataCommandCheck.check(request.getMessage().getContent(), brokers());
        } catch (TidemarkException | IOException e) {
            trx.setException(e);
        }
        return trx;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        MetadataReply reply;
        try {
            reply = apply(MetadataCommand.parseFrom(entry.getStateMachineLogEntry().getLogData().toByteArray()),
                    entry.getIndex());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("metadata entry " + entry.getIndex() + " is not a MetadataCommand", e);
        }
        if (!updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex())) {
            throw new IllegalStateException("metadata applied index would move back to " + entry.getIndex());
        }
        return CompletableFuture.completedFuture(Message.valueOf(UnsafeByteOperations.unsafeWrap(reply.toByteArray())));
    }

    private MetadataReply apply(MetadataCommand command, long index) {
        switch (command.getCommandCase()) {
            case CREATE_TOPIC -> {
                return createTopic(command.getCreateTopic(), index);
            }
            case ALTER_TOPIC -> {
                TopicAssignment current = topics.get(command.getAlterTopic().getName());
                if (current == null) {
                    return unknown(command.getAlterTopic().getName());
                }
                TopicAssignment topic = current.toBuilder().clearOverrides()
                        .putAllOverrides(command.getAlterTopic().getOverridesMap()).build();
                topics.put(topic.getName(), topic);
                listener.topicAltered(topic);
            }
            case DELETE_TOPIC -> {
                TopicAssignment removed = topics.remove(command.getDeleteTopic());
                if (removed == null) {
                    return unknown(command.getDeleteTopic());
                }
                forgetUnusedGroups();
                listener.topicDeleted(removed);
            }
            case BEGIN_REASSIGNMENT -> {
                return beginReassignment(command.getBeginReassignment(), index);
            }
            case COMPLETE_REASSIGNMENT -> {
                return completeReassignment(command.getCompleteReassignment());
            }
            case CREATE_ACLS -> {
                Set<AclBinding> held = new LinkedHashSet<>(acls.bindings());
                held.addAll(command.getCreateAcls().getBindingsList());
                acls = new AclIndex(held);
            }
            case ALTER_QUOTAS -> {
                Map<String, ClientQuota> altered = new TreeMap<>(quotas);
                for (ClientQuota quota : command.getAlterQuotas().getQuotasList()) {
                    if (quota.getProduceBytesPerSecond() == 0 && quota.getFetchBytesPerSecond() == 0) {
                        altered.remove(quota.getPrincipal());
                    } else {
                        altered.put(quota.getPrincipal(), quota);
                    }
                }
                quotas = Collections.unmodifiableMap(altered);
            }
            case DELETE_ACLS -> {
                Set<AclBinding> held = new LinkedHashSet<>(acls.bindings());
                command.getDeleteAcls().getBindingsList().forEach(held::remove);
                acls = new AclIndex(held);
            }
            default -> throw new IllegalStateException("metadata command without a command");
        }
        return MetadataReply.getDefaultInstance();
    }

    private MetadataReply createTopic(TopicAssignment command, long index) {
        TopicAssignment topic = command;
        if (command.getTopicId().isEmpty()) {
            topic = command.toBuilder().setTopicId(TopicIds.toBytes(legacyTopicId(command.getName(), index))).build();
        } else if (command.getTopicId().size() != TopicIds.LENGTH) {
            return error(ErrorCode.INVALID_REQUEST, "create of topic '" + command.getName() + "': "
                    + TopicIds.LENGTH + " bytes of topic id expected, not " + command.getTopicId().size());
        }
        if (topics.containsKey(topic.getName())) {
            return error(ErrorCode.TOPIC_EXISTS, "topic '" + topic.getName() + "' already exists");
        }
        topic = placeInGroups(topic, new PartitionGroupRegistry.NewIds(index));
        topics.put(topic.getName(), topic);
        listener.topicCreated(topic);
        return MetadataReply.getDefaultInstance();
    }

    /** Puts each partition into a group of its replica list: the partitions of one list take its slots in turn. */
    private TopicAssignment placeInGroups(TopicAssignment topic, PartitionGroupRegistry.NewIds ids) {
        int slots = Math.max(1, topic.getGroupsPerReplicaSet());
        Map<List<Integer>, Integer> placed = new HashMap<>();
        TopicAssignment.Builder placedTopic = topic.toBuilder();
        for (int i = 0; i < topic.getPartitionsCount(); i++) {
            PartitionAssignment partition = topic.getPartitions(i);
            int slot = placed.merge(partition.getReplicaNodeIdsList(), 1, Integer::sum) - 1;
            UUID group = groups.groupFor(partition.getReplicaNodeIdsList(), slot % slots, ids);
            placedTopic.setPartitions(i, partition.toBuilder().setGroupId(TopicIds.toBytes(group))
                    .clearTargetGroupId());
        }
        return placedTopic.build();
    }

    /** Forgets the groups that no partition, and no reassignment's target, names any more. */
    private void forgetUnusedGroups() {
        Set<UUID> named = new HashSet<>();
        for (TopicAssignment topic : topics.values()) {
            for (PartitionAssignment partition : topic.getPartitionsList()) {
                named.add(TopicIds.fromBytes(partition.getGroupId()));
                if (!partition.getTargetGroupId().isEmpty()) {
                    named.add(TopicIds.fromBytes(partition.getTargetGroupId()));
                }
            }
        }
        groups.retainOnly(named);
    }

    /** Records the target; the same target again changes nothing, another one is refused while one is pending. */
    private MetadataReply beginReassignment(PartitionReassignment reassignment, long index) {
        TopicAssignment topic = topics.get(reassignment.getTopic());
        MetadataReply unknown = unknown(topic, reassignment);
        if (unknown != null) {
            return unknown;
        }
        PartitionAssignment before = topic.getPartitions(reassignment.getPartition());
        List<Integer> target = reassignment.getReplicaNodeIdsList();
        List<Integer> pending = before.getTargetReplicaNodeIdsList();
        if (!pending.isEmpty() && !pending.equals(target)) {
            return error(ErrorCode.INVALID_REQUEST, "a reassignment of " + name(reassignment) + " to " + pending
                    + " is under way; finish it by asking for " + pending + " again before moving the partition "
                    + "elsewhere");
        }
        if (pending.equals(target)) {
            return MetadataReply.getDefaultInstance();
        }
        UUID targetGroup = groups.groupFor(target, reassignment.getPartition()
                % Math.max(1, reassignment.getGroupsPerReplicaSet()), new PartitionGroupRegistry.NewIds(index));
        reassigned(topic, before, before.toBuilder().addAllTargetReplicaNodeIds(target)
                .setTargetGroupId(TopicIds.toBytes(targetGroup)).build());
        return MetadataReply.getDefaultInstance();
    }

    /** Makes the recorded target the replicas; done already when the replicas are the target and none is pending. */
    private MetadataReply completeReassignment(PartitionReassignment reassignment) {
        TopicAssignment topic = topics.get(reassignment.getTopic());
        MetadataReply unknown = unknown(topic, reassignment);
        if (unknown != null) {
            return unknown;
        }
        PartitionAssignment before = topic.getPartitions(reassignment.getPartition());
        List<Integer> target = reassignment.getReplicaNodeIdsList();
        if (before.getTargetReplicaNodeIdsList().isEmpty() && before.getReplicaNodeIdsList().equals(target)) {
            return MetadataReply.getDefaultInstance();
        }
        if (!before.getTargetReplicaNodeIdsList().equals(target)) {
            return error(ErrorCode.INVALID_REQUEST, "no reassignment of " + name(reassignment) + " to " + target
                    + " is under way (its replicas are " + before.getReplicaNodeIdsList() + ", its target "
                    + before.getTargetReplicaNodeIdsList() + ")");
        }
        reassigned(topic, before, before.toBuilder().clearReplicaNodeIds().addAllReplicaNodeIds(target)
                .clearTargetReplicaNodeIds().setGroupId(before.getTargetGroupId()).clearTargetGroupId().build());
        forgetUnusedGroups();
        return MetadataReply.getDefaultInstance();
    }

    private void reassigned(TopicAssignment topic, PartitionAssignment before, PartitionAssignment after) {
        TopicAssignment changed = topic.toBuilder().setPartitions(before.getPartition(), after).build();
        topics.put(topic.getName(), changed);
        listener.partitionReassigned(changed, before);
    }

    private static MetadataReply unknown(TopicAssignment topic, PartitionReassignment reassignment) {
        if (topic == null) {
            return unknown(reassignment.getTopic());
        }
        if (reassignment.getPartition() < 0 || reassignment.getPartition() >= topic.getPartitionsCount()) {
            return error(ErrorCode.UNKNOWN_PARTITION, "topic '" + topic.getName() + "' has partitions 0 to "
                    + (topic.getPartitionsCount() - 1) + ", not " + reassignment.getPartition());
        }
        return null;
    }

    private static String name(PartitionReassignment reassignment) {
        return reassignment.getTopic() + "-" + reassignment.getPartition();
    }

    private static MetadataReply unknown(String name) {
        return error(ErrorCode.UNKNOWN_TOPIC, "topic '" + name + "' does not exist");
    }

    private static MetadataReply error(ErrorCode code, String message) {
        return MetadataReply.newBuilder().setError(ErrorDetail.newBuilder().setCode(code).setMessage(message)).build();
    }
}
