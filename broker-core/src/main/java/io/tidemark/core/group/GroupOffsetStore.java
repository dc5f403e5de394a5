package io.tidemark.core.group;

import com.codahale.metrics.Counter;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.partition.AppendWaiters;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.core.txn.TransactionStateFormat;
import io.tidemark.proto.v1.ConsumerGroupState;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TransactionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.time.InstantSource;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Committed consumer-group offsets, durable in the broker's own log: every commit is appended to the internal
 * topic {@code __group_offsets} ({@link OffsetCommitFormat}) before it is acknowledged, and the store reads the
 * topic back (all of it after a restart, then what is new) before it answers. A commit is acknowledged once its Raft
 * entry is fsynced on a majority (raft.log.sync), so a consumer does not re-read after a power loss more than it
 * committed; the partition log itself is not fsynced per commit (a restart replays the Raft log into it).
 *
 * <p>The same topic holds each group's membership as its coordinator last stored it ({@link GroupStateFormat}), which
 * the store keeps too, for the next coordinator ({@link GroupCoordinator}), and each transactional id's state as the
 * transaction coordinator last stored it ({@link TransactionStateFormat}), for the same reason.
 *
 * <p>The topic is compacted and has no retention ({@link #TOPIC_CONFIG}), so no group loses its offsets and what a
 * start replays is bounded by the keys (the latest commit per group and partition, the latest state per group, and
 * tombstones for {@code delete.retention.ms}), not by the history.
 *
 * <p>Thread-safe: commits and group states are appended concurrently (the partition orders them), catching up is
 * serialized, so the maps are updated in the order of the log; deletions are serialized with each other.
 */
public final class GroupOffsetStore {
    public static final String TOPIC = "__group_offsets";
    /**
     * Config of the internal topic: compacted (a group's state is bounded by its keys: the latest commit per partition,
     * the latest membership, tombstones of deleted groups for delete.retention.ms), 100 MiB segments (Kafka's for its
     * offsets topic) so closed segments come to compaction. No flush.messages: the Raft entry of every commit is
     * fsynced on a majority before it is acknowledged; an fsync of the partition log per commit on top (what this
     * topic had until 2026-12-02) halved the commits a coordinator took.
     */
    public static final Map<String, String> TOPIC_CONFIG = Map.of("cleanup.policy", "compact",
            "segment.bytes", Integer.toString(100 << 20), "send.time.before.max.ms", "-1",
            "delete.retention.ms", Long.toString(GroupOffsetStore.TOMBSTONE_RETENTION_MS));
    /**
     * How long the topic keeps a tombstone (delete.retention.ms, a day as Kafka's): a store that has not read the topic
     * for half of it reads it again from its start ({@link #catchUp}), since compaction may have removed a tombstone it
     * never read, and the deleted offsets would come back from its memory.
     */
    static final long TOMBSTONE_RETENTION_MS = 86_400_000L;
    private static final Logger LOG = LoggerFactory.getLogger(GroupOffsetStore.class);
    private static final int REPLAY_FETCH_BYTES = 1 << 20;
    private static final long LOCAL_REPLICA_WAIT_MS = 5_000;

    /** A committed offset. */
    public record Committed(long offset, String metadata, long commitTimeMs) {
    }

    /**
     * The last group state record read: its offset ({@code -1} before any) and the coordinator that wrote it (empty
     * for a tombstone).
     */
    public record LastGroupState(long offset, String writerId) {
        static final LastGroupState NONE = new LastGroupState(-1, "");
    }

    private final Supplier<Partition> partition;
    private final InstantSource clock;
    private final Counter skipped;
    private final Map<String, Map<TopicPartition, Committed>> groups = new ConcurrentHashMap<>();
    private final Map<String, ConsumerGroupState> groupStates = new ConcurrentHashMap<>();
    /** When each group's stored membership last changed (the record's ReceiveTime). */
    private final Map<String, Long> groupStateTimes = new ConcurrentHashMap<>();
    private final Map<String, TransactionState> transactionStates = new ConcurrentHashMap<>();
    private volatile LastGroupState lastGroupState = LastGroupState.NONE;

    private long nextOffset;
    /** When the store last caught up (its clock); {@link Long#MIN_VALUE} before it read anything. */
    private long lastReadMs = Long.MIN_VALUE;

    private GroupOffsetStore(Supplier<Partition> partition, InstantSource clock, Counter skipped) {
        this.partition = partition;
        this.clock = clock;
        this.skipped = skipped;
    }

    /**
     * A store over the internal topic's partition. It reads the partition lazily: each call first applies the
     * records it has not seen, so on a cluster every replica's store follows the commits made through any broker.
     *
     * @param skipped counts the records skipped because they do not parse
     */
    public static GroupOffsetStore over(Partition partition, InstantSource clock, Counter skipped) {
        return new GroupOffsetStore(() -> partition, clock, skipped);
    }

    /**
     * A store over a partition that may not exist yet (on a cluster, the internal topic is created once a majority
     * of brokers is up): the supplier throws a retriable error until it does.
     */
    public static GroupOffsetStore awaiting(Supplier<Partition> partition, InstantSource clock, Counter skipped) {
        return new GroupOffsetStore(partition, clock, skipped);
    }

    /**
     * Forgets what it read and reads the whole topic again: the state as of the log now, for a broker that becomes
     * the groups' coordinator. Between its reads compaction may have removed records it never read (a tombstone
     * {@code delete.retention.ms} after it was written, with the commits it deleted), which reading on from where it
     * stopped would never tell it.
     */
    public synchronized void reload() {
        groups.clear();
        groupStates.clear();
        groupStateTimes.clear();
        transactionStates.clear();
        lastGroupState = LastGroupState.NONE;
        nextOffset = 0;
        catchUp();
    }

    /**
     * Applies the records of the partition it has not read yet; reads it all again ({@link #reload}) when it last read
     * half a tombstone's retention ago or longer.
     */
    private synchronized void catchUp() {
        long nowMs = clock.millis();
        if (lastReadMs != Long.MIN_VALUE && nowMs - lastReadMs >= TOMBSTONE_RETENTION_MS / 2) {
            lastReadMs = Long.MIN_VALUE;
            reload();
            return;
        }
        lastReadMs = nowMs;
        Partition partition = this.partition.get();
        RecordBatchReader reader = new RecordBatchReader();
        long start = nextOffset;
        nextOffset = Math.max(nextOffset, partition.logStartOffset());
        long highWatermark = partition.highWatermark();
        while (nextOffset < highWatermark) {
            List<Record> batch = reader.records(partition.read(nextOffset, REPLAY_FETCH_BYTES).batches());
            if (batch.isEmpty()) {
                // compaction removed every record from here to the end of the segments before an empty active one
                nextOffset = highWatermark;
                break;
            }
            for (Record record : batch) {
                if (record.offset() >= nextOffset) {
                    apply(record);
                }
            }
            nextOffset = batch.get(batch.size() - 1).offset() + 1;
            highWatermark = partition.highWatermark();
        }
        if (start == 0 && nextOffset > 0) {
            LOG.info("Loaded committed offsets of {} groups from {} records of {}", groups.size(), nextOffset,
                    partition.id());
        }
    }

    /**
     * Applies a commit record; one that does not parse (clients cannot produce to the topic, so only a bug or a newer
     * broker's format makes one) is skipped with an error and counted, so one record never stops every group.
     */
    private void apply(Record record) {
        if (GroupStateFormat.isGroupStateKey(record.key())) {
            applyGroupState(record);
            return;
        }
        if (TransactionStateFormat.isTransactionStateKey(record.key())) {
            applyTransactionState(record);
            return;
        }
        OffsetCommitFormat.Key key;
        OffsetCommitFormat.Value value;
        try {
            key = OffsetCommitFormat.readKey(record.key());
            value = record.value() == null ? null : OffsetCommitFormat.readValue(record.value());
        } catch (RuntimeException e) {
            skipped.inc();
            LOG.error("Skipping the record at offset {} of {}: it is not an offset commit ({})", record.offset(),
                    TOPIC, e.toString());
            return;
        }
        if (value == null) {
            groups.computeIfPresent(key.group(), (g, offsets) -> {
                offsets.remove(key.partition());
                return offsets.isEmpty() ? null : offsets;
            });
            return;
        }
        groups.computeIfAbsent(key.group(), g -> new ConcurrentHashMap<>())
                .put(key.partition(), new Committed(value.offset(), value.metadata(), value.commitTimeMs()));
    }

    private void applyGroupState(Record record) {
        String group;
        ConsumerGroupState state;
        try {
            group = GroupStateFormat.readGroup(record.key());
            state = record.value() == null ? null : GroupStateFormat.readValue(record.value());
        } catch (RuntimeException e) {
            skipped.inc();
            LOG.error("Skipping the record at offset {} of {}: it is not a group state ({})", record.offset(), TOPIC,
                    e.toString());
            return;
        }
        if (state == null) {
            groupStates.remove(group);
            groupStateTimes.remove(group);
        } else {
            groupStates.put(group, state);
            groupStateTimes.put(group, record.receiveTimeMs());
        }
        lastGroupState = new LastGroupState(record.offset(), state == null ? "" : state.getWriterId());
    }

    private void applyTransactionState(Record record) {
        try {
            String transactionalId = TransactionStateFormat.readTransactionalId(record.key());
            if (record.value() == null) {
                transactionStates.remove(transactionalId);
            } else {
                transactionStates.put(transactionalId, TransactionStateFormat.readValue(record.value()));
            }
        } catch (RuntimeException e) {
            skipped.inc();
            LOG.error("Skipping the record at offset {} of {}: it is not a transaction state ({})", record.offset(),
                    TOPIC, e.toString());
        }
    }

    /** The stored state of a transactional id, after reading what is new; empty when it has none. */
    public Optional<TransactionState> transactionState(String transactionalId) {
        catchUp();
        return Optional.ofNullable(transactionStates.get(transactionalId));
    }

    /** The stored state of every transactional id, after reading what is new. */
    public Map<String, TransactionState> transactionStates() {
        catchUp();
        return Map.copyOf(transactionStates);
    }

    /**
     * Stores a transactional id's state ({@link TransactionStateFormat}) and waits until this broker's store has read
     * it back, so the next call sees it.
     */
    public void writeTransactionState(String transactionalId, TransactionState state)
            throws InterruptedException, ExecutionException {
        writeTransactionState(transactionalId, state, Map.of());
    }

    /**
     * Stores a transactional id's state and commits {@code offsets} (group -> partition -> offset) in the same batch,
     * so both are stored or neither: a transaction's decision to commit, with the offsets sent to it.
     */
    public void writeTransactionState(String transactionalId, TransactionState state,
                                      Map<String, Map<TopicPartition, Committed>> offsets)
            throws InterruptedException, ExecutionException {
        append(transactionStateBatch(transactionalId, state, offsets));
    }

    /**
     * The batch that stores a transactional id's state and commits {@code offsets} (group -> partition -> offset),
     * without a producer id, for a caller that appends it with other batches ({@link #awaitStored} after).
     */
    public ByteBuffer transactionStateBatch(String transactionalId, TransactionState state,
                                            Map<String, Map<TopicPartition, Committed>> offsets) {
        long now = clock.millis();
        RecordBatchBuilder builder = new RecordBatchBuilder().append(now, TransactionStateFormat.key(transactionalId),
                TransactionStateFormat.value(state));
        offsets.forEach((group, committed) -> committed.forEach((tp, offset) -> builder.append(now,
                OffsetCommitFormat.key(group, tp), OffsetCommitFormat.value(new OffsetCommitFormat.Value(
                        offset.offset(), now, offset.metadata())))));
        return builder.build();
    }

    /**
     * Appends a group's state ({@link GroupStateFormat}) without waiting: appends keep the order they are made in.
     * The future completes once the record is stored.
     *
     * @param maxBatchBytes the topic's max.batch.bytes
     * @throws TidemarkException GROUP_TOO_LARGE, before anything is appended, when the state's batch is larger
     */
    public CompletableFuture<AppendResult> writeGroupState(String group, ConsumerGroupState state,
                                                           int maxBatchBytes) {
        ByteBuffer batch = new RecordBatchBuilder().append(clock.millis(), GroupStateFormat.key(group),
                GroupStateFormat.value(state)).build();
        if (batch.remaining() > maxBatchBytes) {
            throw new TidemarkException(ErrorCode.GROUP_TOO_LARGE, "consumer group " + group + " would take "
                    + batch.remaining() + " bytes stored (" + state.getMembersCount() + " members, "
                    + state.getTargetPartitionsCount() + " subscribed topics), above the " + maxBatchBytes
                    + " bytes a record of " + TOPIC + " takes (its max.batch.bytes): the group stays as it was; "
                    + "have fewer members or subscribe to fewer topics, or raise the topic's max.batch.bytes");
        }
        return partition.get().append(batch);
    }

    /** The latest state of every group that has one, by group. */
    public Map<String, ConsumerGroupState> groupStates() {
        catchUp();
        return Map.copyOf(groupStates);
    }

    /**
     * For every group with committed offsets or a stored membership, the time of its last commit or membership
     * change, whichever is later.
     */
    public Map<String, Long> lastActivityMs() {
        catchUp();
        Map<String, Long> last = new TreeMap<>(groupStateTimes);
        groups.forEach((group, offsets) -> offsets.values().forEach(c -> last.merge(group, c.commitTimeMs(),
                Math::max)));
        return last;
    }

    /** The last group state record read, after reading what is new. */
    public LastGroupState lastGroupState() {
        catchUp();
        return lastGroupState;
    }

    /**
     * Stores the offsets of one group in one batch, so they are committed together or not at all.
     *
     * @param offsets partition -> (offset, metadata), validated by the caller
     */
    public void commit(String group, Map<TopicPartition, Committed> offsets)
            throws InterruptedException, ExecutionException {
        long now = clock.millis();
        RecordBatchBuilder builder = new RecordBatchBuilder();
        for (Map.Entry<TopicPartition, Committed> entry : offsets.entrySet()) {
            builder.append(now, OffsetCommitFormat.key(group, entry.getKey()), OffsetCommitFormat.value(
                    new OffsetCommitFormat.Value(entry.getValue().offset(), now, entry.getValue().metadata())));
        }
        append(builder);
    }

    /**
     * Deletes the group's committed offsets of {@code partitions} in one batch (a tombstone per partition: the key
     * with a null value, {@link OffsetCommitFormat}); those the group never committed are left out.
     *
     * @return the partitions whose offsets were deleted, ordered by topic and partition
     */
    public synchronized List<TopicPartition> delete(String group, Collection<TopicPartition> partitions)
            throws InterruptedException, ExecutionException {
        return delete(group, partitions, false);
    }

    /**
     * Deletes the group: every committed offset and its stored membership (one tombstone each), in one batch.
     *
     * @return the partitions whose offsets were deleted, ordered by topic and partition
     */
    public synchronized List<TopicPartition> deleteGroup(String group) throws InterruptedException,
            ExecutionException {
        return delete(group, committed(group).keySet(), true);
    }

    private List<TopicPartition> delete(String group, Collection<TopicPartition> partitions, boolean withState)
            throws InterruptedException, ExecutionException {
        Map<TopicPartition, Committed> committed = committed(group);
        committed.keySet().retainAll(partitions);
        boolean state = withState && groupStates.containsKey(group);
        if (committed.isEmpty() && !state) {
            return List.of();
        }
        long now = clock.millis();
        RecordBatchBuilder builder = new RecordBatchBuilder();
        committed.keySet().forEach(tp -> builder.append(now, OffsetCommitFormat.key(group, tp), null));
        if (state) {
            builder.append(now, GroupStateFormat.key(group), null);
        }
        append(builder);
        return List.copyOf(committed.keySet());
    }

    private void append(RecordBatchBuilder builder) throws InterruptedException, ExecutionException {
        append(builder.build());
    }

    private void append(ByteBuffer batch) throws InterruptedException, ExecutionException {
        awaitStored(partition.get().append(batch).get());
    }

    /**
     * Waits until this broker's store has read a batch appended to the offsets partition ({@link #awaitLocalReplica}),
     * so the next call sees it.
     */
    public void awaitStored(AppendResult stored) throws InterruptedException, ExecutionException {
        awaitLocalReplica(partition.get(), stored.lastOffset() + 1);
        catchUp();
    }

    /**
     * Waits until this broker's replica holds the log up to {@code end}. On a cluster a commit made through a
     * follower is acknowledged once the leader applied it, maybe before the follower did; without the wait a
     * FetchOffsets through the same broker right after could miss the commit. Gives up after
     * {@value #LOCAL_REPLICA_WAIT_MS} ms (the commit is stored; this replica is lagging) and answers anyway.
     */
    private static void awaitLocalReplica(Partition log, long end) throws InterruptedException, ExecutionException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LOCAL_REPLICA_WAIT_MS);
        while (log.highWatermark() < end) {
            CompletableFuture<Void> next = new CompletableFuture<>();
            try (AppendWaiters.Waiter waiter = log.awaitAppend(() -> next.complete(null))) {
                if (log.highWatermark() >= end) {
                    return;
                }
                next.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                LOG.warn("{} on this broker is behind the commit at offset {} after {} ms; answering anyway",
                        log.id(), end - 1, LOCAL_REPLICA_WAIT_MS);
                return;
            }
        }
    }

    public Optional<Committed> committed(String group, TopicPartition partition) {
        catchUp();
        return Optional.ofNullable(groups.getOrDefault(group, Map.of()).get(partition));
    }

    /** Every partition the group committed, ordered by topic and partition. */
    public Map<TopicPartition, Committed> committed(String group) {
        catchUp();
        Map<TopicPartition, Committed> sorted = new TreeMap<>((a, b) -> a.topic().equals(b.topic())
                ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
        sorted.putAll(groups.getOrDefault(group, Map.of()));
        return sorted;
    }

    /**
     * Lets a commit or a join start {@code group} when the store knows it already or holds fewer than
     * {@code maxCount} groups (with offsets or a stored membership).
     *
     * @throws TidemarkException INVALID_REQUEST naming the count and the key
     */
    public void checkRoomFor(String group, int maxCount) {
        catchUp();
        if (groups.containsKey(group) || groupStates.containsKey(group)) {
            return;
        }
        Set<String> known = new HashSet<>(groups.keySet());
        known.addAll(groupStates.keySet());
        if (known.size() >= maxCount) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "group '" + group + "' would be one more than the "
                    + known.size() + " the cluster keeps, the most group.max.count allows; delete unused groups "
                    + "(tidemark groups delete) or raise it");
        }
    }

    public SortedSet<String> groups() {
        catchUp();
        return new TreeSet<>(groups.keySet());
    }
}
