package io.tidemark.core.txn;

import io.tidemark.core.group.GroupCoordinator;
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupOffsets;
import io.tidemark.proto.v1.PartitionOffset;
import io.tidemark.proto.v1.TopicPartitionRef;
import io.tidemark.proto.v1.TransactionPhase;
import io.tidemark.proto.v1.TransactionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The transaction coordinator: gives each transactional id its producer id and epoch, keeps which partitions its open
 * transaction wrote to, and ends the transaction in every one of them with a marker. It runs on the ready leader of
 * {@code __group_offsets}, as the consumer groups' coordinator does, and keeps nothing in memory: every call reads the
 * id's state from what that broker's replica stored ({@link GroupOffsetStore#transactionState}) and stores the new
 * state ({@link TransactionStateFormat}) before it answers, so a coordinator that follows a dead one carries on from
 * the same states.
 *
 * <h2>Ending a transaction: one entry where it can, else two phases</h2>
 * Where the Raft group of {@code __group_offsets} (which this broker leads) hosts every partition of the transaction,
 * one entry of that group ends it, all or none ({@link AllOrNoneAppender}): the id's state EMPTY, the offsets sent to
 * a committing transaction, and every marker. Otherwise EndTxn stores the decision first (PREPARE_COMMIT or
 * PREPARE_ABORT: from then on the outcome is fixed, whatever crashes), then writes the marker to every partition of the transaction ({@link MarkerWriter}), then stores EMPTY and
 * answers. A coordinator that finds a decision without its EMPTY (its predecessor died between) writes the markers
 * again: a second marker of the same decision ends nothing more in a partition, and the partitions hear it before
 * the producer may begin its next transaction. Each marker carries the coordinator epoch (the Raft term of
 * {@code __group_offsets}' leadership), so a deposed coordinator's late marker is refused where its successor's was
 * taken.
 *
 * <h2>Fencing</h2>
 * InitProducerId bumps the id's epoch: an older instance of the producer gets INVALID_PRODUCER_EPOCH from here on,
 * and a transaction it left open is aborted first with markers of the new epoch, which the partitions take as the
 * producer's epoch, refusing the older one's batches from then on. A transaction open longer than its timeout is
 * aborted the same way by {@link #abortExpired}, fencing the producer that let it run.
 *
 * <p>Thread-safe: calls for one transactional id are serialized (striped locks), calls for different ids run in
 * parallel; a call blocks its thread for the Raft writes and the markers.
 */
public final class TransactionCoordinator {
    /** Kafka's transaction.max.timeout.ms: 15 minutes. */
    public static final long DEFAULT_MAX_TIMEOUT_MS = 900_000L;
    static final int MAX_TRANSACTIONAL_ID_BYTES = 255;
    private static final Logger LOG = LoggerFactory.getLogger(TransactionCoordinator.class);
    private static final int LOCK_STRIPES = 64;
    /** How long ending a transaction waits for its markers before it answers NOT_AVAILABLE (the client retries). */
    private static final long MARKER_WAIT_MS = 30_000;

    private final Topics topics;
    private final GroupOffsetStore store;
    private final GroupCoordinator groups;
    private final MarkerWriter markers;
    private final AllOrNoneAppender oneEntry;
    private final InstantSource clock;
    private final long maxTimeoutMs;
    private final SecureRandom random = new SecureRandom();
    private final Object[] locks = new Object[LOCK_STRIPES];

    /** A producer's identity in its transactions. */
    public record ProducerIdAndEpoch(long producerId, short epoch) {
    }

    /**
     * @param groups       checks that a member sending offsets to a transaction may commit them
     * @param oneEntry     ends a transaction whose partitions sit in the coordinator's Raft group in one entry
     * @param maxTimeoutMs the longest transaction timeout a producer may ask for (transaction.max.timeout.ms)
     */
    public TransactionCoordinator(Topics topics, GroupOffsetStore store, GroupCoordinator groups, MarkerWriter markers,
                                  AllOrNoneAppender oneEntry, InstantSource clock, long maxTimeoutMs) {
        this.topics = topics;
        this.store = store;
        this.groups = groups;
        this.markers = markers;
        this.oneEntry = oneEntry;
        this.clock = clock;
        this.maxTimeoutMs = maxTimeoutMs;
        for (int i = 0; i < LOCK_STRIPES; i++) {
            locks[i] = new Object();
        }
    }

    /**
     * Gives {@code transactionalId} its producer id (a new one the first time) and its next epoch; a transaction the
     * previous instance left open is aborted first, a decided one completed.
     *
     * @throws TidemarkException INVALID_REQUEST for a bad id or timeout; NOT_LEADER / NOT_AVAILABLE when this broker
     *                           does not coordinate (now); NOT_AVAILABLE when markers could not be written in time
     */
    public ProducerIdAndEpoch initProducerId(String transactionalId, long timeoutMs)
            throws InterruptedException, ExecutionException {
        checkTransactionalId(transactionalId);
        if (timeoutMs < 1 || timeoutMs > maxTimeoutMs) {
            throw invalid("transaction timeout " + timeoutMs + " ms is not allowed: 1 to " + maxTimeoutMs
                    + " ms (the broker's transaction.max.timeout.ms)");
        }
        int coordinatorEpoch = checkCoordinator();
        synchronized (lock(transactionalId)) {
            Optional<TransactionState> stored = store.transactionState(transactionalId);
            long producerId;
            int epoch;
            if (stored.isEmpty()) {
                producerId = random.nextLong() & Long.MAX_VALUE;
                epoch = 0;
            } else {
                TransactionState state = finishOpen(transactionalId, stored.get(), coordinatorEpoch);
                producerId = state.getProducerId();
                epoch = state.getProducerEpoch() + 1;
                if (epoch > Short.MAX_VALUE) {
                    producerId = random.nextLong() & Long.MAX_VALUE;
                    epoch = 0;
                }
            }
            store.writeTransactionState(transactionalId, TransactionState.newBuilder().setProducerId(producerId)
                    .setProducerEpoch(epoch).setPhase(TransactionPhase.EMPTY).setTimeoutMs(timeoutMs).build());
            LOG.debug("Transactional id {} has producer {} epoch {}", transactionalId, producerId, epoch);
            return new ProducerIdAndEpoch(producerId, (short) epoch);
        }
    }

    /**
     * Adds partitions to the producer's transaction, beginning one when none is open.
     *
     * @throws TidemarkException INVALID_PRODUCER_EPOCH when the producer was fenced; UNKNOWN_TOPIC or
     *                           UNKNOWN_PARTITION; NOT_AVAILABLE while its last transaction is being completed
     */
    public void addPartitions(String transactionalId, long producerId, short epoch,
                              Collection<TopicPartition> partitions) throws InterruptedException, ExecutionException {
        checkCoordinator();
        for (TopicPartition tp : partitions) {
            if (tp.topic().startsWith(Topic.INTERNAL_PREFIX)) {
                throw invalid(tp.topic() + "-" + tp.partition() + " is a partition of an internal topic, which no transaction writes to (offsets "
                        + "go in with sendOffsetsToTransaction)");
            }
            topics.partition(tp.topic(), tp.partition());
        }
        synchronized (lock(transactionalId)) {
            TransactionState state = open(transactionalId, producerId, epoch);
            Set<TopicPartition> all = new LinkedHashSet<>(partitions(state));
            if (all.containsAll(partitions) && state.getPhase() == TransactionPhase.ONGOING) {
                return;
            }
            all.addAll(partitions);
            TransactionState.Builder next = begun(state).clearPartitions();
            all.forEach(tp -> next.addPartitions(ref(tp)));
            store.writeTransactionState(transactionalId, next.build());
        }
    }

    /**
     * Adds a consumer group's offsets to the producer's transaction, beginning one when none is open: they are
     * committed in the same write as the decision to commit, and dropped by an abort. The member must be one the
     * group's coordinator takes a commit from now, as for a commit of its own.
     *
     * @throws TidemarkException INVALID_PRODUCER_EPOCH when the producer was fenced; the group coordinator's
     *                           refusal of the member (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID); NOT_AVAILABLE while
     *                           the producer's last transaction is being completed
     */
    public void commitOffsets(String transactionalId, long producerId, short epoch, String group, String memberId,
                              int memberEpoch, Map<TopicPartition, GroupOffsetStore.Committed> offsets)
            throws InterruptedException, ExecutionException {
        checkCoordinator();
        for (TopicPartition tp : offsets.keySet()) {
            topics.partition(tp.topic(), tp.partition());
        }
        groups.checkCommit(group, memberId, memberEpoch, offsets.keySet());
        synchronized (lock(transactionalId)) {
            TransactionState state = open(transactionalId, producerId, epoch);
            Map<TopicPartition, GroupOffsetStore.Committed> merged = new LinkedHashMap<>(
                    pendingOffsets(state).getOrDefault(group, Map.of()));
            merged.putAll(offsets);
            TransactionState.Builder next = begun(state);
            next.clearPendingOffsets();
            pendingOffsets(state).forEach((g, committed) -> {
                if (!g.equals(group)) {
                    next.addPendingOffsets(groupOffsets(g, committed));
                }
            });
            next.addPendingOffsets(groupOffsets(group, merged));
            store.writeTransactionState(transactionalId, next.build());
        }
    }

    /**
     * Commits or aborts the producer's open transaction: answered once every partition has its marker. Ending when
     * none is open is allowed (nothing to do); asking again after a lost answer completes the same decision.
     *
     * @throws TidemarkException INVALID_PRODUCER_EPOCH when the producer was fenced (its transaction was aborted);
     *                           INVALID_TXN_STATE when the transaction was decided the other way; NOT_AVAILABLE
     *                           when markers could not all be written in time (retry: the decision stands)
     */
    public void endTransaction(String transactionalId, long producerId, short epoch, boolean commit)
            throws InterruptedException, ExecutionException {
        int coordinatorEpoch = checkCoordinator();
        synchronized (lock(transactionalId)) {
            TransactionState state = current(transactionalId, producerId, epoch);
            TransactionPhase decided = commit ? TransactionPhase.PREPARE_COMMIT : TransactionPhase.PREPARE_ABORT;
            switch (state.getPhase()) {
                case EMPTY -> {
                    return;
                }
                case ONGOING -> end(transactionalId, state.toBuilder().setPhase(decided).build(), coordinatorEpoch);
                default -> {
                    if (state.getPhase() != decided) {
                        throw new TidemarkException(ErrorCode.INVALID_TXN_STATE, "the transaction of "
                                + transactionalId + " was decided " + state.getPhase() + "; it cannot be "
                                + (commit ? "committed" : "aborted"));
                    }
                    complete(transactionalId, state, coordinatorEpoch);
                }
            }
        }
    }

    /**
     * Aborts every transaction open longer than its timeout, fencing its producer (the markers carry the next epoch),
     * and completes every decided one a deposed coordinator left; nothing when this broker does not coordinate. The
     * broker calls it periodically.
     *
     * @return the transactional ids whose transactions were aborted for their timeout
     */
    public List<String> abortExpired() throws InterruptedException {
        int coordinatorEpoch;
        try {
            coordinatorEpoch = checkCoordinator();
        } catch (TidemarkException e) {
            return List.of();
        }
        long nowMs = clock.millis();
        List<String> aborted = new ArrayList<>();
        for (Map.Entry<String, TransactionState> entry : store.transactionStates().entrySet()) {
            TransactionState seen = entry.getValue();
            boolean expired = seen.getPhase() == TransactionPhase.ONGOING
                    && nowMs - seen.getStartedMs() > seen.getTimeoutMs();
            if (seen.getPhase() == TransactionPhase.EMPTY || (seen.getPhase() == TransactionPhase.ONGOING && !expired)) {
                continue;
            }
            String transactionalId = entry.getKey();
            try {
                synchronized (lock(transactionalId)) {
                    Optional<TransactionState> now = store.transactionState(transactionalId);
                    if (now.isPresent() && now.get().equals(seen)) {
                        finishOpen(transactionalId, seen, coordinatorEpoch);
                        if (expired) {
                            aborted.add(transactionalId);
                        }
                    }
                }
            } catch (ExecutionException | RuntimeException e) {
                LOG.warn("Could not end the transaction of {}; trying again later: {}", transactionalId,
                        e.toString());
            }
        }
        if (!aborted.isEmpty()) {
            LOG.info("Aborted {} transaction(s) open longer than their timeout: {}", aborted.size(), aborted);
        }
        return aborted;
    }

    /**
     * Ends what {@code state} leaves open: an ongoing transaction is aborted under the next epoch (fencing its
     * producer), a decided one completed; returns the state after it, EMPTY (not stored yet when it was EMPTY).
     */
    private TransactionState finishOpen(String transactionalId, TransactionState state, int coordinatorEpoch)
            throws InterruptedException, ExecutionException {
        return switch (state.getPhase()) {
            case ONGOING -> {
                int fencing = state.getProducerEpoch() + 1;
                if (fencing > Short.MAX_VALUE) {
                    fencing = state.getProducerEpoch();
                }
                yield end(transactionalId, state.toBuilder().setProducerEpoch(fencing)
                        .setPhase(TransactionPhase.PREPARE_ABORT).build(), coordinatorEpoch);
            }
            case PREPARE_COMMIT, PREPARE_ABORT -> complete(transactionalId, state, coordinatorEpoch);
            default -> state;
        };
    }

    /**
     * Ends an open transaction as {@code prepared} decides (its phase PREPARE_COMMIT or PREPARE_ABORT, not stored
     * yet). Where the coordinator's Raft group hosts every partition of the transaction, in one entry, all or none:
     * the id's state EMPTY, the offsets sent to the transaction when it commits, and every marker. Otherwise, or when
     * that entry is refused (a marker's partition moving, say), in two phases: the decision stored with the offsets,
     * then the markers ({@link #complete}).
     *
     * @return the state after it, EMPTY
     * @throws TidemarkException NOT_AVAILABLE when leadership moved before the one entry committed (whether it is
     *                           stored shows to the next call, which finds EMPTY or the transaction still open)
     */
    private TransactionState end(String transactionalId, TransactionState prepared, int coordinatorEpoch)
            throws InterruptedException, ExecutionException {
        boolean commit = prepared.getPhase() == TransactionPhase.PREPARE_COMMIT;
        Map<String, Map<TopicPartition, GroupOffsetStore.Committed>> offsets = commit ? pendingOffsets(prepared)
                : Map.of();
        TransactionState done = done(prepared);
        List<AllOrNoneAppender.PartitionBatch> batches = new ArrayList<>();
        batches.add(new AllOrNoneAppender.PartitionBatch(new TopicPartition(GroupOffsetStore.TOPIC, 0),
                store.transactionStateBatch(transactionalId, done, offsets)));
        for (TopicPartition tp : partitions(prepared)) {
            batches.add(new AllOrNoneAppender.PartitionBatch(tp, marker(prepared, coordinatorEpoch)));
        }
        Optional<CompletableFuture<List<AppendResult>>> stored = oneEntry.append(batches);
        if (stored.isPresent()) {
            try {
                store.awaitStored(stored.get().get().get(0));
                return done;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof AllOrNoneAppender.Refused refused)) {
                    throw e;
                }
                LOG.debug("Ending the transaction of {} in one entry was refused ({}); in two phases instead",
                        transactionalId, refused.getCause().getMessage());
            }
        }
        store.writeTransactionState(transactionalId, prepared, offsets);
        return complete(transactionalId, prepared, coordinatorEpoch);
    }

    /** Writes the decided markers to every partition of the transaction, then stores EMPTY. */
    private TransactionState complete(String transactionalId, TransactionState prepared, int coordinatorEpoch)
            throws InterruptedException, ExecutionException {
        boolean commit = prepared.getPhase() == TransactionPhase.PREPARE_COMMIT;
        List<CompletableFuture<?>> writes = new ArrayList<>();
        for (TopicPartition tp : partitions(prepared)) {
            writes.add(markers.write(tp, marker(prepared, coordinatorEpoch)));
        }
        try {
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(MARKER_WAIT_MS,
                    TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the " + (commit ? "commit" : "abort") + " of "
                    + transactionalId + " is decided, but not every partition took its marker yet ("
                    + (e.getCause() != null ? e.getCause() : e) + "); retry to complete it");
        }
        TransactionState done = done(prepared);
        store.writeTransactionState(transactionalId, done);
        return done;
    }

    /** The marker of a decided transaction's end, under {@code coordinatorEpoch}. */
    private ByteBuffer marker(TransactionState prepared, int coordinatorEpoch) {
        return TransactionMarker.build(prepared.getProducerId(), (short) prepared.getProducerEpoch(),
                prepared.getPhase() == TransactionPhase.PREPARE_COMMIT, coordinatorEpoch, clock.millis());
    }

    /** The state once a decided transaction ended: EMPTY, nothing pending. */
    private static TransactionState done(TransactionState prepared) {
        return prepared.toBuilder().setPhase(TransactionPhase.EMPTY).clearPartitions().clearPendingOffsets()
                .setStartedMs(0).build();
    }

    /**
     * The stored state of an id whose producer is {@code producerId} at {@code epoch}.
     *
     * @throws TidemarkException INVALID_PRODUCER_EPOCH when the id has another producer or epoch now
     */
    private TransactionState current(String transactionalId, long producerId, short epoch) {
        checkTransactionalId(transactionalId);
        TransactionState state = store.transactionState(transactionalId).orElseThrow(() -> new TidemarkException(
                ErrorCode.INVALID_TXN_STATE, "transactional id " + transactionalId + " is not known: call "
                + "initTransactions first"));
        if (state.getProducerId() != producerId || state.getProducerEpoch() != epoch) {
            throw new TidemarkException(ErrorCode.INVALID_PRODUCER_EPOCH, "producer " + producerId + " epoch " + epoch
                    + " was fenced: transactional id " + transactionalId + " belongs to producer "
                    + state.getProducerId() + " epoch " + state.getProducerEpoch() + " now (a newer instance "
                    + "initialized it, or its transaction outlived its timeout)");
        }
        return state;
    }

    /**
     * The state of an id whose producer may add to its transaction now: not fenced, and its last transaction not
     * being completed.
     */
    private TransactionState open(String transactionalId, long producerId, short epoch) {
        TransactionState state = current(transactionalId, producerId, epoch);
        if (state.getPhase() == TransactionPhase.PREPARE_COMMIT || state.getPhase() == TransactionPhase.PREPARE_ABORT) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the last transaction of " + transactionalId
                    + " is being completed; retry");
        }
        return state;
    }

    /** The state's builder with its transaction open: ONGOING, begun now if it was not open. */
    private TransactionState.Builder begun(TransactionState state) {
        TransactionState.Builder next = state.toBuilder().setPhase(TransactionPhase.ONGOING);
        if (state.getPhase() == TransactionPhase.EMPTY) {
            next.setStartedMs(clock.millis());
        }
        return next;
    }

    private static Map<String, Map<TopicPartition, GroupOffsetStore.Committed>> pendingOffsets(
            TransactionState state) {
        Map<String, Map<TopicPartition, GroupOffsetStore.Committed>> pending = new LinkedHashMap<>();
        for (GroupOffsets group : state.getPendingOffsetsList()) {
            Map<TopicPartition, GroupOffsetStore.Committed> offsets = new LinkedHashMap<>();
            for (PartitionOffset offset : group.getOffsetsList()) {
                offsets.put(new TopicPartition(offset.getTopic(), offset.getPartition()),
                        new GroupOffsetStore.Committed(offset.getOffset(), offset.getMetadata(), 0));
            }
            pending.put(group.getGroup(), offsets);
        }
        return pending;
    }

    private static GroupOffsets groupOffsets(String group, Map<TopicPartition, GroupOffsetStore.Committed> offsets) {
        GroupOffsets.Builder built = GroupOffsets.newBuilder().setGroup(group);
        offsets.forEach((tp, committed) -> built.addOffsets(PartitionOffset.newBuilder().setTopic(tp.topic())
                .setPartition(tp.partition()).setOffset(committed.offset()).setMetadata(committed.metadata())));
        return built.build();
    }

    /**
     * Throws unless this broker coordinates now (the ready leader of {@code __group_offsets}); the coordinator epoch,
     * its leadership's Raft term.
     */
    private int checkCoordinator() {
        Partition partition = topics.partition(GroupOffsetStore.TOPIC, 0);
        partition.checkClientReadable();
        return (int) Math.min(Integer.MAX_VALUE, partition.status().leader().epoch());
    }

    private Object lock(String transactionalId) {
        return locks[Math.floorMod(transactionalId.hashCode(), LOCK_STRIPES)];
    }

    private static List<TopicPartition> partitions(TransactionState state) {
        List<TopicPartition> partitions = new ArrayList<>(state.getPartitionsCount());
        for (TopicPartitionRef ref : state.getPartitionsList()) {
            partitions.add(new TopicPartition(ref.getTopic(), ref.getPartition()));
        }
        return partitions;
    }

    private static TopicPartitionRef ref(TopicPartition tp) {
        return TopicPartitionRef.newBuilder().setTopic(tp.topic()).setPartition(tp.partition()).build();
    }

    private static void checkTransactionalId(String transactionalId) {
        int bytes = transactionalId.getBytes(StandardCharsets.UTF_8).length;
        if (transactionalId.isBlank() || bytes > MAX_TRANSACTIONAL_ID_BYTES) {
            throw invalid("transactional id \"" + transactionalId + "\" is not allowed: 1 to "
                    + MAX_TRANSACTIONAL_ID_BYTES + " bytes of UTF-8, not blank");
        }
    }

    private static TidemarkException invalid(String message) {
        return new TidemarkException(ErrorCode.INVALID_REQUEST, message);
    }
}
