package io.tidemark.client.api;

import com.google.protobuf.ByteString;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ProduceManyRequest;
import io.tidemark.proto.v1.ProduceManyResponse;
import io.tidemark.proto.v1.ProduceRequest;
import io.tidemark.proto.v1.ProduceResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The producer's background duty cycle: takes ready batches from the {@link RecordAccumulator}, sends them to their
 * partitions' leaders over each leader's ProduceStream ({@link ProduceStreams}: requests reach the broker in send
 * order), those of one leader together in one ProduceMany request (many partitions at once), and handles each
 * batch's answer: acknowledged
 * batches complete their records; errors that may mean stale metadata ({@link ClusterMetadata#mayBeStale}:
 * NOT_LEADER, NOT_AVAILABLE, UNKNOWN_TOPIC or UNKNOWN_PARTITION of a topic just created) put the batch back after
 * {@code retry.backoff.ms} and once newer metadata came (a NOT_LEADER naming the new leader goes there at once,
 * {@link #retry}); other errors (among them OUT_OF_ORDER_SEQUENCE and INVALID_PRODUCER_EPOCH) fail the batch with the
 * broker's exception; a batch still unacknowledged at {@code delivery.timeout.ms} fails with its last error.
 *
 * <p>Not a {@link Retry}: many batches are in their backoff at once, each with its own deadline, and each retry must
 * also wait for newer metadata and keep its partition's order behind it; so a batch's retry state lives in the batch
 * ({@link ProducerBatch#retryLater}) and this one thread drives them all from the accumulator, with no thread or
 * timer per batch.
 *
 * <p>Idempotence ({@link ProducerSequences}): a batch takes its partition's next sequence when it is first sent
 * and keeps it on every retry, so a retry of a batch the broker already stored (its reply lost, or its leader
 * changed) is answered with the stored offsets instead of being stored twice. When the broker refuses a batch
 * (a non-retriable error, or a refusal that splits it), it stored nothing, so the partition's sequence goes back
 * to the batch's base sequence and the next batch sent, or the first part of the split, takes it. A batch that
 * fails by delivery timeout after it was sent keeps its sequence taken: an attempt whose reply never came may
 * have stored it, and giving its sequence to other records could get those dropped as its duplicates; if it was
 * not stored, the partition's later batches would fail with OUT_OF_ORDER_SEQUENCE. So the producer takes a new
 * producer id ({@link ProducerSequences#renew}): the batches built after it number from 0 under the new id.
 *
 * <p>Several batches of a partition in flight ({@code max.in.flight.requests.per.partition}): a partition sends the
 * next batch before the one before it is answered only while nothing went wrong on it, that is once it acknowledged
 * a batch built under the current producer id (a broker takes any first sequence of an id it does not know, so the
 * first batch under an id goes alone), to a broker that takes requests in order and is the one its batches in flight
 * went to (a leader that moved holds the partition until they are answered), and until any error; then it sends
 * one batch at a time, the oldest first, until one is acknowledged again. The sequences keep the order through
 * whatever happens to the batches in flight:
 * <ul>
 *   <li>a batch answered OUT_OF_ORDER_SEQUENCE while a batch sent before it is not settled yet came out of turn (the
 *       one before was not stored yet): it goes back into the queue in send order, with its sequence, and is resent
 *       once the ones before it are;</li>
 *   <li>a batch the broker refused (not stored) while batches sent after it have sequences: their sequences can
 *       never be filled, so the producer id is renewed instead of the sequence given back (as after a batch that
 *       failed without an answer);</li>
 *   <li>a batch answered OUT_OF_ORDER_SEQUENCE that was built under a producer id renewed since is rebuilt under the
 *       new one ({@link ProducerBatch#rebuilt}) and goes again in its place: the answer says this attempt was not
 *       stored, an earlier one would have made it a duplicate (answered with its offsets: the broker keeps a
 *       producer's last 5 batches, and at most 4 were sent behind it), and the old id is not used again;</li>
 *   <li>OUT_OF_ORDER_SEQUENCE for the oldest batch under the current id fails it, as with one batch in flight.</li>
 * </ul>
 *
 * <p>The broker refuses a batch as a whole when one of its records is bad (INVALID_TIMESTAMP, CORRUPT_BATCH,
 * RECORD_TOO_LARGE). Failing every record of it would fail good records for a neighbour's fault, so, as Kafka's
 * producer does for a batch that is too large, a refused batch of several records is split into single-record
 * batches that go again at the head of the partition's queue, in order and one at a time, within the original
 * delivery deadline: each record then gets its own answer. A single-record batch refused so fails its record.
 *
 * <p>Each cycle reads the clock once and passes it down.
 *
 * <p>Threading: one thread runs {@link #run} and owns the in-flight counts, the partitions' sent batches and the
 * refresh state. gRPC callbacks only queue their answer and wake it, so every batch ends on this thread, and so do
 * the user callbacks chained on record futures; they should be short. After the thread ended, {@link #failAll} ends
 * what is left.
 */
final class Sender implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Sender.class);
    /**
     * Longest wait of one cycle: the clock is injected and may jump or be stepped by a test, so the sender
     * re-reads it at least this often. An idle cycle costs a lock and a map walk.
     */
    static final long MAX_CYCLE_WAIT_MS = 100;
    /** Non-retriable errors about a record of the batch rather than about the request. */
    private static final Set<ErrorCode> RECORD_ERRORS = EnumSet.of(ErrorCode.INVALID_TIMESTAMP,
            ErrorCode.CORRUPT_BATCH, ErrorCode.RECORD_TOO_LARGE);

    private final RecordAccumulator accumulator;
    private final ClusterMetadata metadata;
    private final MemoryBudget memory;
    private final Partitioner partitioner;
    private final ProducerSequences sequences;
    private final Clock clock;
    private final long retryBackoffMs;
    private final int maxRequestBytes;
    private final ConcurrentLinkedQueue<Runnable> answers = new ConcurrentLinkedQueue<>();
    private final ProduceStreams streams;
    private final int maxInFlightPerPartition;
    /** Batches of each partition in flight. */
    private final Map<TopicPartition, Integer> inFlight = new HashMap<>();
    /**
     * The broker each partition's batches in flight went to: all of them went to the one broker, on its one stream,
     * so they reach it in send order; a partition sends nothing to another broker until they have landed.
     */
    private final Map<TopicPartition, String> inFlightTo = new HashMap<>();
    /** Each partition's batches given an order and not ended, by order: the oldest first. */
    private final Map<TopicPartition, TreeMap<ProducerBatch.SendOrder, ProducerBatch>> sent = new HashMap<>();
    /** The producer id under which each partition acknowledged a batch since its last error: it may pipeline. */
    private final Map<TopicPartition, Long> pipelining = new HashMap<>();
    private long firstSends;
    private boolean refreshWanted;
    private boolean refreshing;
    private long lastRefreshStartMs = Long.MIN_VALUE / 2;
    private volatile boolean closing;
    private volatile boolean forced;

    Sender(RecordAccumulator accumulator, ClusterMetadata metadata, BrokerChannels channels, MemoryBudget memory,
           Partitioner partitioner, ProducerSequences sequences, ProducerConfig config) {
        this.accumulator = accumulator;
        this.metadata = metadata;
        this.memory = memory;
        this.partitioner = partitioner;
        this.sequences = sequences;
        this.clock = config.clock();
        this.retryBackoffMs = config.retryBackoffMs();
        this.maxRequestBytes = config.maxRequestBytes();
        this.maxInFlightPerPartition = config.maxInFlightPerPartition();
        // an answer only queues a handler for the sender thread: completed on the transport thread, it wakes one thread
        this.streams = new ProduceStreams(channels, config.requestTimeoutMs(), clock,
                LeaderCaller.Callbacks.TRANSPORT_THREAD);
    }

    @Override
    public void run() {
        while (!forced && (!closing || accumulator.hasIncomplete())) {
            try {
                runOnce();
            } catch (RuntimeException e) {
                LOG.error("producer sender cycle failed; carrying on", e);
            }
        }
        streams.close();
    }

    /** Stops taking work once everything queued has ended; {@link #forceClose} stops at once. */
    void initiateClose() {
        closing = true;
        accumulator.wakeup();
    }

    void forceClose() {
        closing = true;
        forced = true;
        accumulator.wakeup();
    }

    /** Fails every batch not yet ended; only once the sender thread has ended. */
    void failAll(RuntimeException error) {
        for (ProducerBatch batch : accumulator.incomplete()) {
            end(batch, batch.fail(error));
        }
    }

    void runOnce() {
        handleAnswers();
        long nowMs = clock.millis();
        streams.expire(nowMs);
        for (ProducerBatch batch : accumulator.removeExpired(nowMs)) {
            failByTimeout(batch, nowMs);
        }
        maybeRefreshMetadata(nowMs);
        send(accumulator.drain(nowMs, this::claim), nowMs);
        long waitMs = Math.min(accumulator.nextEventInMs(nowMs, this::sendable), MAX_CYCLE_WAIT_MS);
        if (answers.isEmpty()) {
            accumulator.awaitWork(Math.max(1, waitMs));
        }
    }

    /**
     * Whether a ready batch can go now: its partition has nothing in flight or may pipeline it, the metadata is newer
     * than what its last error saw, and the partition's leader is known. Asks for a metadata refresh when the last two
     * fail and none is under way (the one under way will do).
     */
    private boolean sendable(ProducerBatch batch) {
        if (inFlight.getOrDefault(batch.partition, 0) > 0 && !mayPipeline(batch)) {
            return false;
        }
        if (metadata.version() <= batch.metadataVersionSeen() || metadata.leaderAddress(batch.partition).isEmpty()) {
            refreshWanted |= !refreshing;
            return false;
        }
        return true;
    }

    /**
     * Whether {@code batch} may go behind its partition's batches in flight: room under the limit, an acknowledgement
     * under the current producer id since the partition's last error, a batch never sent before (a retry, or a part
     * of a split batch, whose neighbours are likely refused too, goes alone) that will not grow
     * ({@link ProducerBatch#atFinalSize}), and a leader that takes requests in order and is the broker the batches in
     * flight went to. A partition whose leader moved while batches were in flight sends nothing to the new one until
     * they landed: one the old leader stored but answers late would otherwise find, when it is sent again, later
     * batches stored after it, too many for the broker to know it as a duplicate (it keeps a producer's last 5), and
     * fail OUT_OF_ORDER_SEQUENCE (issue 23: 253 records of a run).
     */
    private boolean mayPipeline(ProducerBatch batch) {
        return inFlight.get(batch.partition) < maxInFlightPerPartition && batch.attempts() == 0 && batch.atFinalSize()
                && Long.valueOf(sequences.producerId()).equals(pipelining.get(batch.partition))
                && metadata.leaderAddress(batch.partition).filter(address -> address.equals(
                        inFlightTo.get(batch.partition))).map(streams::ordered).orElse(false);
    }

    /**
     * {@link #sendable}, counting the batch in flight to its partition's leader when it is: the accumulator then offers
     * the next.
     */
    private boolean claim(ProducerBatch batch) {
        if (!sendable(batch)) {
            return false;
        }
        if (inFlight.merge(batch.partition, 1, Integer::sum) == 1) {
            inFlightTo.put(batch.partition, metadata.leaderAddress(batch.partition).orElseThrow());
        }
        return true;
    }

    private void landed(ProducerBatch batch) {
        if (inFlight.computeIfPresent(batch.partition, (p, n) -> n > 1 ? n - 1 : null) == null) {
            inFlightTo.remove(batch.partition);
        }
    }

    private void maybeRefreshMetadata(long nowMs) {
        if (!refreshWanted || refreshing || nowMs - lastRefreshStartMs < retryBackoffMs) {
            return;
        }
        refreshWanted = false;
        refreshing = true;
        lastRefreshStartMs = nowMs;
        metadata.refresh().whenComplete((ignored, error) -> answer(() -> {
            refreshing = false;
            if (error != null) {
                LOG.warn("metadata refresh failed: {}", error.getMessage());
            }
        }));
    }

    /**
     * Sends drained batches to their partitions' leaders, those of one leader together in ProduceMany requests of at
     * most {@code max.request.bytes} of batches each. A metadata refresh that completed since {@link #sendable} may
     * have forgotten a leader: that batch goes back to the head of its queue, to wait for the next refresh.
     */
    private void send(List<ProducerBatch> drained, long nowMs) {
        Map<String, List<ProducerBatch>> byLeader = new LinkedHashMap<>();
        List<ProducerBatch> noLeader = new ArrayList<>();
        for (ProducerBatch batch : drained) {
            String leader = inFlightTo.get(batch.partition);
            if (leader == null) {
                refreshWanted = true;
                landed(batch);
                noLeader.add(batch);
            } else {
                byLeader.computeIfAbsent(leader, address -> new ArrayList<>()).add(batch);
            }
        }
        accumulator.reenqueue(noLeader);
        byLeader.forEach((address, batches) -> send(address, batches, nowMs));
    }

    private void send(String address, List<ProducerBatch> batches, long nowMs) {
        ProduceManyRequest.Builder request = ProduceManyRequest.newBuilder();
        List<ProducerBatch> inRequest = new ArrayList<>();
        long requestBytes = 0;
        for (ProducerBatch batch : batches) {
            ByteString bytes;
            try {
                if (batch.order() == null) {
                    batch.ordered(firstSends++);
                }
                sent.computeIfAbsent(batch.partition, p -> new TreeMap<>()).put(batch.order(), batch);
                batch.attempted();
                partitioner.batchSent(batch.partition.topic(), batch.partition.partition(),
                        metadata.partitionCount(batch.partition.topic()).orElse(1));
                bytes = batch.bytes(sequences);
            } catch (RuntimeException e) {
                landed(batch);
                failUnhandled(batch, "sending it to " + address, e);
                continue;
            }
            if (!inRequest.isEmpty() && requestBytes + bytes.size() > maxRequestBytes) {
                call(address, request.build(), inRequest, nowMs);
                request = ProduceManyRequest.newBuilder();
                inRequest = new ArrayList<>();
                requestBytes = 0;
            }
            request.addBatches(ProduceRequest.newBuilder().setTopic(batch.partition.topic())
                    .setPartition(batch.partition.partition()).setBatch(bytes));
            inRequest.add(batch);
            requestBytes += bytes.size();
        }
        call(address, request.build(), inRequest, nowMs);
    }

    /** Sends a ProduceMany request; each batch is answered with its outcome, or all with the request's failure. */
    private void call(String address, ProduceManyRequest request, List<ProducerBatch> batches, long nowMs) {
        CompletableFuture<ProduceManyResponse> call;
        try {
            call = streams.send(address, request, nowMs);
        } catch (RuntimeException e) {
            call = CompletableFuture.failedFuture(e);
        }
        call.whenComplete((response, error) -> answer(() -> {
            for (int i = 0; i < batches.size(); i++) {
                ProducerBatch batch = batches.get(i);
                int index = i;
                handleOrFail(batch, address, error != null ? () -> onAnswer(batch, address, null, error)
                        : () -> ProduceStreams.outcome(response, index, batches.size(), address)
                        .handle((stored, refused) -> {
                            onAnswer(batch, address, stored, refused);
                            return null;
                        }).join());
            }
        }));
    }

    /**
     * Runs the handling of a batch's answer ({@link #onAnswer}); when it fails (a bug), the batch fails with
     * INTERNAL_ERROR naming why and the error is logged: the other batches of the answer are still handled, and no
     * batch is left neither ended nor queued, which a flush would wait for forever (DifferentConfigsIT, 2026-12-06:
     * three parts of a split batch, sent and never ended, held a flush after the rest of the run had ended; what lost
     * them is not known yet). The outcome's callback is joined, so its failure is not swallowed by the future.
     */
    private void handleOrFail(ProducerBatch batch, String address, Runnable handling) {
        try {
            handling.run();
        } catch (RuntimeException e) {
            failUnhandled(batch, "handling the answer of " + address,
                    e instanceof CompletionException && e.getCause() instanceof RuntimeException cause ? cause : e);
        }
    }

    /** Fails a batch with INTERNAL_ERROR after {@code what} failed with {@code e} (a bug), and logs it. */
    private void failUnhandled(ProducerBatch batch, String what, RuntimeException e) {
        LOG.error("{} for a batch of {} records of {} failed; the batch fails", what, batch.recordCount(),
                batch.partition, e);
        end(batch, batch.fail(new TidemarkException(ErrorCode.INTERNAL_ERROR, "the producer failed " + what
                + " for this batch of " + batch.partition + ": " + e)));
    }

    private void onAnswer(ProducerBatch batch, String address, ProduceResponse response, Throwable error) {
        landed(batch);
        if (error == null) {
            if (batch.producerId() == sequences.producerId()) {
                pipelining.put(batch.partition, batch.producerId());
            }
            end(batch, batch.complete(response));
            return;
        }
        pipelining.remove(batch.partition);
        TidemarkException e = GrpcFutures.asTidemark(error);
        long nowMs = clock.millis();
        if (e.code() == ErrorCode.OUT_OF_ORDER_SEQUENCE && batch.producerId() != sequences.producerId()) {
            LOG.debug("batch of {} was sent under producer id {}, renewed since; rebuilt: {}", batch.partition,
                    batch.producerId(), e);
            replace(batch, batch.rebuilt(e));
        } else if (e.code() == ErrorCode.OUT_OF_ORDER_SEQUENCE && !oldest(batch)) {
            LOG.debug("batch of {} came out of turn; resent after the ones before it: {}", batch.partition, e);
            batch.retryLater(e, nowMs, ProducerBatch.ANY_METADATA);
            accumulator.reenqueue(List.of(batch));
        } else if (splittable(batch, e)) {
            LOG.debug("splitting batch of {} records of {} after {}", batch.recordCount(), batch.partition, e);
            giveBackSequence(batch);
            replace(batch, batch.split(e));
        } else if (!ClusterMetadata.mayBeStale(e)) {
            giveBackSequence(batch);
            end(batch, batch.fail(e));
        } else if (nowMs >= batch.deadlineMs) {
            batch.retryLater(e, nowMs, metadata.version());
            failByTimeout(batch, nowMs);
        } else {
            retry(batch, address, e, nowMs);
        }
    }

    /**
     * Puts a batch back after a retriable error: resent after {@code retry.backoff.ms} once newer metadata came, or at
     * once when the broker answered NOT_LEADER naming another broker as the leader (as Kafka's producer does since
     * KIP-951), unless its previous attempt had ended so too: two brokers naming each other then wait like any retry.
     */
    private void retry(ProducerBatch batch, String address, TidemarkException e, long nowMs) {
        LOG.debug("retrying batch of {} after {} from {}", batch.partition, e, address);
        refreshWanted = true;
        boolean redirected = e.code() == ErrorCode.NOT_LEADER && !e.leaderAddress().isEmpty()
                && !e.leaderAddress().equals(address);
        if (e.code() == ErrorCode.NOT_LEADER) {
            metadata.notLeader(batch.partition, address, e);
        }
        boolean redirectedBefore = batch.lastError() != null && batch.lastError().code() == ErrorCode.NOT_LEADER
                && !batch.lastError().leaderAddress().isEmpty();
        if (redirected && !redirectedBefore) {
            batch.retryLater(e, nowMs, ProducerBatch.ANY_METADATA);
        } else {
            batch.retryLater(e, nowMs + retryBackoffMs, metadata.version());
        }
        accumulator.reenqueue(List.of(batch));
    }

    /** Whether no batch of the partition sent before {@code batch} is still waiting for its outcome. */
    private boolean oldest(ProducerBatch batch) {
        TreeMap<ProducerBatch.SendOrder, ProducerBatch> ofPartition = sent.get(batch.partition);
        return ofPartition == null || ofPartition.isEmpty() || ofPartition.firstKey().compareTo(batch.order()) >= 0;
    }

    /**
     * After the broker refused {@code batch} (it stored nothing of it): the next batch takes its sequence, unless
     * batches sent after it carry the sequences behind it, which can then never be filled: the producer id is renewed,
     * and those batches are rebuilt under the new one when they come back out of sequence.
     */
    private void giveBackSequence(ProducerBatch batch) {
        TreeMap<ProducerBatch.SendOrder, ProducerBatch> ofPartition = sent.get(batch.partition);
        boolean sequencedBehind = ofPartition != null && ofPartition.tailMap(batch.order(), false).values().stream()
                .anyMatch(later -> later.producerId() == batch.producerId());
        if (sequencedBehind) {
            sequences.renew();
        } else {
            sequences.rewind(batch.partition, batch.producerId(), batch.baseSequence());
        }
    }

    /** Puts {@code parts} (a split, or a rebuilt batch) in the ended batch's place among its partition's batches. */
    private void replace(ProducerBatch batch, List<ProducerBatch> parts) {
        forget(batch);
        for (ProducerBatch part : parts) {
            sent.computeIfAbsent(part.partition, p -> new TreeMap<>()).put(part.order(), part);
        }
        accumulator.replaceBySplit(batch, parts);
    }

    /** A batch of several records the broker refused for one record: its records may go one per batch. */
    private static boolean splittable(ProducerBatch batch, TidemarkException e) {
        return batch.recordCount() > 1 && RECORD_ERRORS.contains(e.code());
    }

    /** Fails a batch at its delivery timeout; one that was sent may have been stored, so the id is renewed. */
    private void failByTimeout(ProducerBatch batch, long nowMs) {
        if (batch.attempts() > 0) {
            sequences.renew();
        }
        end(batch, batch.fail(deliveryTimeout(batch, nowMs)));
    }

    private TidemarkException deliveryTimeout(ProducerBatch batch, long nowMs) {
        TidemarkException last = batch.lastError();
        ErrorCode code = last == null ? ErrorCode.NOT_AVAILABLE : last.code();
        String cause = last != null ? "the last error: " + last.getMessage()
                : metadata.leaderAddress(batch.partition).isEmpty() ? "no leader known: "
                + metadata.noLeader(batch.partition).getMessage() : "it was never sent";
        return new TidemarkException(code, batch.recordCount() + " record(s) of " + batch.partition
                + " not acknowledged within delivery.timeout.ms=" + (batch.deadlineMs - batch.createdMs) + " ("
                + (nowMs - batch.createdMs) + " ms since the batch was opened, " + batch.attempts() + " attempt(s)); "
                + cause);
    }

    private void end(ProducerBatch batch, boolean endedNow) {
        if (endedNow) {
            memory.release(batch.reservedBytes());
        }
        forget(batch);
        accumulator.ended(batch);
    }

    private void forget(ProducerBatch batch) {
        TreeMap<ProducerBatch.SendOrder, ProducerBatch> ofPartition = sent.get(batch.partition);
        if (ofPartition != null && batch.order() != null && ofPartition.get(batch.order()) == batch) {
            ofPartition.remove(batch.order());
            if (ofPartition.isEmpty()) {
                sent.remove(batch.partition);
            }
        }
    }

    private void answer(Runnable handler) {
        answers.add(handler);
        accumulator.wakeup();
    }

    private void handleAnswers() {
        for (Runnable handler = answers.poll(); handler != null; handler = answers.poll()) {
            handler.run();
        }
    }
}
