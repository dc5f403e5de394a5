package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.AddPartitionsToTxnRequest;
import io.tidemark.proto.v1.EndTxnRequest;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.InitProducerIdRequest;
import io.tidemark.proto.v1.InitProducerIdResponse;
import io.tidemark.proto.v1.PartitionOffset;
import io.tidemark.proto.v1.TopicPartitionRef;
import io.tidemark.proto.v1.TxnOffsetCommitRequest;

import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * A transactional producer's side of its transactions: the producer id and epoch from the coordinator, the state of
 * the transaction, the partitions added to it, and the first record of it that failed.
 * <pre>
 * UNINITIALIZED --initTransactions--> READY --beginTransaction--> IN_TRANSACTION --commit / abort--> READY
 *                                       any call answered INVALID_PRODUCER_EPOCH --> FENCED (for good)
 * </pre>
 * A record goes to a partition only once the coordinator added the partition to the transaction (so the coordinator
 * knows every partition that must get the transaction's marker): the first send to a partition in a transaction asks
 * for it and waits. Senders that need partitions while a request is under way wait for it, and the next request
 * carries every partition they need: threads sending to N new partitions at once make two requests, not N. Commit
 * first waits for every record of the transaction to be acknowledged; if one failed, the
 * commit is refused and the application must abort. Abort waits for the records in flight too (the broker may store
 * them; the abort marker then covers them); when a batch failed without an answer the partition's sequences may have a
 * gap, so after the abort the producer takes a new epoch from the coordinator, which starts them at 0 again.
 *
 * <p>Thread-safe: any thread may send while one thread drives the transaction; a send to a partition already added
 * takes no lock.
 */
final class TransactionManager {
    enum State { UNINITIALIZED, READY, IN_TRANSACTION, FENCED }

    private final String transactionalId;
    private final long timeoutMs;
    private final LeaderCaller coordinator;
    private final ProducerSequences sequences;
    private final Retry retry;
    private final Set<TopicPartition> added = ConcurrentHashMap.newKeySet();
    /** Partitions senders wait to see added: the next AddPartitionsToTxn carries them all. */
    private final Set<TopicPartition> wanted = ConcurrentHashMap.newKeySet();
    private final AtomicReference<TidemarkException> failed = new AtomicReference<>();
    private volatile State state = State.UNINITIALIZED;

    /**
     * @param retryTimeoutMs how long a call to the coordinator is retried while it answers retriable errors (an
     *                       election, markers still being written)
     */
    TransactionManager(String transactionalId, long timeoutMs, LeaderCaller coordinator, ProducerSequences sequences,
                       InstantSource clock, long retryTimeoutMs, long retryBackoffMs) {
        this.transactionalId = transactionalId;
        this.timeoutMs = timeoutMs;
        this.coordinator = coordinator;
        this.sequences = sequences;
        this.retry = Retry.within(clock, retryTimeoutMs, retryBackoffMs);
    }

    State state() {
        return state;
    }

    /** Takes a producer id and a new epoch for the transactional id, fencing every earlier instance. */
    synchronized void init() {
        if (state != State.UNINITIALIZED) {
            throw new IllegalStateException("initTransactions was called already (the producer is " + state + ")");
        }
        takeEpoch();
        state = State.READY;
    }

    synchronized void begin() {
        requireState(State.READY, "beginTransaction");
        failed.set(null);
        added.clear();
        wanted.clear();
        state = State.IN_TRANSACTION;
    }

    /**
     * Before a record goes to {@code tp}: checks a transaction is open and adds the partition to it the first time.
     *
     * @throws IllegalStateException outside a transaction
     * @throws TidemarkException     when the coordinator refuses the partition (INVALID_PRODUCER_EPOCH: fenced)
     */
    void beforeSend(TopicPartition tp) {
        if (state != State.IN_TRANSACTION) {
            throw new IllegalStateException("a transactional producer sends inside a transaction: call "
                    + "beginTransaction first (the producer is " + state + ")");
        }
        if (!added.contains(tp)) {
            wanted.add(tp);
            addWanted(tp);
        }
    }

    /** Adds {@code tp} to the transaction, with every other partition a sender is waiting for, in one request. */
    private synchronized void addWanted(TopicPartition tp) {
        if (added.contains(tp)) {
            return;
        }
        List<TopicPartition> adding = wanted.stream().filter(p -> !added.contains(p)).toList();
        AddPartitionsToTxnRequest.Builder request = AddPartitionsToTxnRequest.newBuilder()
                .setTransactionalId(transactionalId).setProducerId(sequences.producerId())
                .setProducerEpoch(sequences.epoch());
        adding.forEach(p -> request.addPartitions(TopicPartitionRef.newBuilder().setTopic(p.topic())
                .setPartition(p.partition())));
        AddPartitionsToTxnRequest built = request.build();
        call(() -> coordinator.transactionCoordinator(stub -> stub.addPartitionsToTxn(built)));
        added.addAll(adding);
        wanted.removeAll(adding);
    }

    /**
     * Adds a consumer group's offsets to the transaction: committed with it, dropped if it aborts.
     *
     * @throws TidemarkException the coordinator's refusal: INVALID_PRODUCER_EPOCH (fenced), or the group's refusal of
     *                           the member (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID)
     */
    synchronized void sendOffsets(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata group) {
        requireState(State.IN_TRANSACTION, "sendOffsetsToTransaction");
        if (offsets.isEmpty()) {
            return;
        }
        TxnOffsetCommitRequest.Builder request = TxnOffsetCommitRequest.newBuilder()
                .setTransactionalId(transactionalId).setProducerId(sequences.producerId())
                .setProducerEpoch(sequences.epoch()).setGroup(group.group()).setMemberId(group.memberId())
                .setMemberEpoch(group.memberEpoch());
        offsets.forEach((tp, offset) -> request.addOffsets(PartitionOffset.newBuilder().setTopic(tp.topic())
                .setPartition(tp.partition()).setOffset(offset.offset()).setMetadata(offset.metadata())));
        TxnOffsetCommitRequest built = request.build();
        call(() -> coordinator.transactionCoordinator(stub -> stub.txnOffsetCommit(built)));
    }

    /** A record of the transaction failed: the transaction can no longer commit. */
    void recordFailed(Throwable failure) {
        failed.compareAndSet(null, failure instanceof TidemarkException e ? e
                : new TidemarkException(ErrorCode.NOT_AVAILABLE, String.valueOf(failure)));
    }

    /**
     * Commits: {@code flush} waits for every record sent, then the coordinator writes the commit markers.
     *
     * @throws TidemarkException the first record's failure (the transaction stays open: abort it), or the
     *                           coordinator's refusal (INVALID_PRODUCER_EPOCH: fenced, the producer is done)
     */
    synchronized void commit(Runnable flush) {
        requireState(State.IN_TRANSACTION, "commitTransaction");
        flush.run();
        TidemarkException failure = failed.get();
        if (failure == null && sequences.broken()) {
            failure = new TidemarkException(ErrorCode.NOT_AVAILABLE, "a batch failed without an answer");
        }
        if (failure != null) {
            throw new TidemarkException(failure.code(), "the transaction of " + transactionalId + " cannot commit: "
                    + "a record of it failed (" + failure.getMessage() + "); abort it");
        }
        end(true);
    }

    /** Aborts: waits for the records in flight, then the coordinator writes the abort markers. */
    synchronized void abort(Runnable flush) {
        requireState(State.IN_TRANSACTION, "abortTransaction");
        flush.run();
        end(false);
        if (sequences.broken()) {
            takeEpoch();
        }
    }

    private void end(boolean commit) {
        EndTxnRequest request = EndTxnRequest.newBuilder().setTransactionalId(transactionalId)
                .setProducerId(sequences.producerId()).setProducerEpoch(sequences.epoch()).setCommit(commit).build();
        call(() -> coordinator.transactionCoordinator(stub -> stub.endTxn(request)));
        added.clear();
        wanted.clear();
        state = State.READY;
    }

    private void takeEpoch() {
        InitProducerIdRequest request = InitProducerIdRequest.newBuilder().setTransactionalId(transactionalId)
                .setTransactionTimeoutMs(timeoutMs).build();
        InitProducerIdResponse response = call(() -> coordinator.transactionCoordinator(
                stub -> stub.initProducerId(request)));
        sequences.assign(response.getProducerId(), (short) response.getProducerEpoch());
    }

    /** A coordinator call, retried while retriable; a fenced answer fences this producer for good. */
    private <T> T call(Supplier<CompletableFuture<T>> rpc) {
        try {
            return retry.call(() -> GrpcFutures.await(rpc.get()));
        } catch (TidemarkException e) {
            if (e.code() == ErrorCode.INVALID_PRODUCER_EPOCH) {
                state = State.FENCED;
            }
            throw e;
        }
    }

    private void requireState(State expected, String call) {
        if (state != expected) {
            throw new IllegalStateException(call + " needs the producer " + expected + "; it is " + state
                    + (state == State.FENCED ? " (another instance with transactional.id " + transactionalId
                    + " took over, or a transaction outlived transaction.timeout.ms): close it" : ""));
        }
    }
}
