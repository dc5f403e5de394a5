package io.tidemark.client.api;

import com.google.protobuf.UnsafeByteOperations;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.OriginOffsetResponse;
import io.tidemark.proto.v1.ProduceRequest;
import io.tidemark.proto.v1.ProduceResponse;

import java.io.Closeable;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Writes batches the caller builds, one batch per request, to partition leaders: for a caller that decides where
 * batches begin and end and must know each batch's fate (the mirror, whose batches each copy one origin partition and
 * may be refused with ORIGIN_OFFSET_HELD). Unlike {@link TidemarkProducer} it does not accumulate, linger or split,
 * and what follows a refused batch is the caller's decision.
 *
 * <p><b>Order.</b> A partition's batches are stored in the order they were written, or not at all past one that
 * failed. Up to {@code max.in.flight.requests.per.partition} batches of a partition may be unanswered
 * ({@link #maxInFlight}); they go over the leader's produce stream ({@link ProduceStreams}), which the broker takes in
 * send order. A batch is sent while others of its partition are in flight only when the partition's producer id has
 * had a batch stored since its last error (a broker takes the first batch of a producer id it does not know whatever
 * its sequence, so a second batch sent with an unknown first could be stored alone), and the leader has the stream (a
 * broker without it gets one call at a time) and is the broker the batches in flight went to (a leader that moved gets
 * nothing until they are answered); otherwise it waits for the answer before it.
 *
 * <p><b>Idempotence.</b> Each partition has a random producer id (epoch 0), and a batch takes the partition's next
 * sequence when it is first sent. A retriable error (NOT_LEADER, NOT_AVAILABLE, a cut stream) resends the same bytes
 * after {@code retry.backoff.ms}, until {@code delivery.timeout.ms} from the write, so a batch stored although its
 * answer was lost is answered with its first offsets; resends go in write order, the first one alone. A batch sent
 * while one before it was unanswered and refused OUT_OF_ORDER_SEQUENCE came out of turn (the one before was not
 * stored yet: it failed and is being resent) and is resent once the ones before it are stored; if one of them fails
 * instead, it fails with it. UNKNOWN_TOPIC and UNKNOWN_PARTITION are not retried here (unlike
 * {@link TidemarkProducer}): each call already refreshed the metadata and asked again, and a caller writes to
 * partitions it asked about first, so the topic is gone, and the caller must know at once: a batch still being retried
 * when the topic is created again would land at the start of the new one.
 *
 * <p><b>A failed batch</b> (refused, or unacknowledged at its deadline, whose fate is then unknown) fails the batches
 * written after it: those not sent yet at once, with OUT_OF_ORDER_SEQUENCE naming the failure; those in flight with
 * their own answers, without resends (a batch after a refused one is refused out of order; after one of unknown fate
 * it may have been stored, and its answer says so). Once none of them is in flight, the partition takes a new producer
 * id, so batches written after the failure are numbered afresh. A caller that resumes after a failure waits for every
 * batch it wrote before to be answered, then finds out what the partition holds (a mirror asks {@link #originOffset}),
 * and says so with {@link #resume}: until then every batch written to the partition fails at once the same way. A
 * batch written while the failure was on its way to the caller is one the caller wrote not knowing, and must not be
 * stored past the failed one under the new producer id (seen in MirrorIT: the mirror's copier wrote the next batch
 * while the answer refusing a record waited for the copier's lock, and that batch was stored past the refused
 * record).
 *
 * <p>Of {@link ProducerConfig} it uses the bootstrap, clock, channel factory, {@code request.timeout.ms},
 * {@code retry.backoff.ms}, {@code delivery.timeout.ms}, {@code max.request.bytes} and
 * {@code max.in.flight.requests.per.partition}.
 *
 * <p>Thread-safe. Every partition's bookkeeping and every send runs on the writer's one thread, in the order writes
 * and answers arrived there; futures complete on it, after their partition's bookkeeping is settled, so a callback may
 * write the partition's next batch at once (it is queued to that thread). Callbacks must not block.
 */
public final class PartitionWriter implements Closeable {
    /** How often requests without an answer within {@code request.timeout.ms} are failed ({@link ProduceStreams}). */
    static final long EXPIRE_EVERY_MS = 100;

    private final Clock clock;
    private final BrokerChannels channels;
    private final ClusterMetadata metadata;
    private final LeaderCaller leaders;
    private final ProduceStreams streams;
    private final long retryBackoffMs;
    private final long deliveryTimeoutMs;
    private final int maxRequestBytes;
    private final int maxInFlight;
    private final SecureRandom random = new SecureRandom();
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread writerThread = new Thread(r, "tidemark-partition-writer");
        writerThread.setDaemon(true);
        return writerThread;
    });
    /** Writes not answered yet per partition, for the {@link #maxInFlight} check on the caller's thread. */
    private final Map<TopicPartition, Integer> unanswered = new ConcurrentHashMap<>();
    /** The writer thread's own. */
    private final Map<TopicPartition, Lane> lanes = new HashMap<>();

    public PartitionWriter(ProducerConfig config) {
        ConnectionSettings connection = config.connection();
        this.clock = connection.clock();
        this.channels = new BrokerChannels(connection);
        this.metadata = new ClusterMetadata(new AnyBrokerCaller(connection.bootstrap(), channels,
                connection.requestTimeoutMs()));
        this.leaders = new LeaderCaller(metadata, channels, connection.requestTimeoutMs(),
                LeaderCaller.Callbacks.CHANNEL_EXECUTOR);
        this.streams = new ProduceStreams(channels, connection.requestTimeoutMs(), clock,
                LeaderCaller.Callbacks.CHANNEL_EXECUTOR);
        this.retryBackoffMs = config.retryBackoffMs();
        this.deliveryTimeoutMs = config.deliveryTimeoutMs();
        this.maxRequestBytes = config.maxRequestBytes();
        this.maxInFlight = config.maxInFlightPerPartition();
        thread.scheduleWithFixedDelay(() -> streams.expire(clock.millis()), EXPIRE_EVERY_MS, EXPIRE_EVERY_MS,
                TimeUnit.MILLISECONDS);
    }

    /** Batches of one partition that may be written and not answered yet. */
    public int maxInFlight() {
        return maxInFlight;
    }

    /**
     * Writes the batch after the partition's earlier ones, with the partition's producer id and the next sequence.
     *
     * @param batch records appended, not built yet; the writer builds it when it first sends it
     * @return completes with where the batch went, or fails with the broker's TidemarkException (after retries for
     *         retriable ones, with the last error once {@code delivery.timeout.ms} passed)
     * @throws IllegalStateException when the partition has {@link #maxInFlight} batches unanswered
     */
    public CompletableFuture<ProduceResponse> write(TopicPartition tp, RecordBatchBuilder batch) {
        unanswered.compute(tp, (p, count) -> {
            int written = count == null ? 0 : count;
            if (written >= maxInFlight) {
                throw new IllegalStateException(tp + " has " + written + " batches unanswered; a PartitionWriter "
                        + "takes max.in.flight.requests.per.partition=" + maxInFlight + " of a partition");
            }
            return written + 1;
        });
        Write write = new Write(tp, batch, clock.millis() + deliveryTimeoutMs);
        onThread(() -> {
            Lane lane = lanes.computeIfAbsent(tp, p -> new Lane(p, newProducerId()));
            if (lane.fenced) {
                settle(write, null, new TidemarkException(ErrorCode.OUT_OF_ORDER_SEQUENCE, "batch of " + tp
                        + " not sent: a batch of " + tp + " failed before it, and the writer takes " + tp
                        + "'s batches again once its caller resumes it"));
                return;
            }
            lane.writes.addLast(write);
            pump(lane);
        }, write);
        return write.result;
    }

    /**
     * The caller has the answers to every batch of {@code tp} it wrote and knows what the partition holds: after a
     * failure, the partition takes batches again (numbered under a new producer id). Nothing to do without one.
     */
    public void resume(TopicPartition tp) {
        try {
            thread.execute(() -> {
                Lane lane = lanes.get(tp);
                if (lane != null) {
                    lane.fenced = false;
                }
            });
        } catch (RejectedExecutionException closed) {
            // the writer is closed: every write fails anyway
        }
    }

    /**
     * The last origin offset of {@code origin} that {@code tp} holds through mirrored batches, from its leader.
     *
     * @return fails with the broker's TidemarkException
     */
    public CompletableFuture<OriginOffsetResponse> originOffset(TopicPartition tp, OriginPartition origin) {
        return leaders.originOffset(tp, origin);
    }

    /** A partition's producer id and sequences, and its writes not answered yet, in write order. */
    private static final class Lane {
        private final TopicPartition tp;
        private final ArrayDeque<Write> writes = new ArrayDeque<>();
        private long producerId;
        private int nextSequence;
        /** Whether a batch under the current producer id was stored since the partition's last error. */
        private boolean acknowledged;
        /** A batch failed: the partition takes a new producer id once none is in flight. */
        private boolean renew;
        /** A batch failed: writes fail at once until the caller {@link #resume resumes} the partition. */
        private boolean fenced;
        /** When a timer is set to send a write waiting out its backoff, else 0. */
        private long wakeAtMs;
        /** The leader the partition's writes in flight went to; meaningful while one is. */
        private String inFlightTo;

        private Lane(TopicPartition tp, long producerId) {
            this.tp = tp;
            this.producerId = producerId;
        }

        private int inFlight() {
            int count = 0;
            for (Write write : writes) {
                if (write.inFlight) {
                    count++;
                }
            }
            return count;
        }
    }

    /** One batch written and not answered yet. */
    private static final class Write {
        private final TopicPartition tp;
        private final RecordBatchBuilder batch;
        private final CompletableFuture<ProduceResponse> result = new CompletableFuture<>();
        private final long deadlineMs;
        /** Built when first sent, then resent as it is. */
        private ProduceRequest request;
        private long producerId;
        private boolean inFlight;
        /** Sent while a batch before it was unanswered: refused out of order, it may just have come too early. */
        private boolean pipelined;
        /** A batch before it failed: its answer, whatever it is, is its outcome. */
        private boolean noResend;
        private long sendAtMs;
        private int attempts;

        private Write(TopicPartition tp, RecordBatchBuilder batch, long deadlineMs) {
            this.tp = tp;
            this.batch = batch;
            this.deadlineMs = deadlineMs;
        }
    }

    /** Sends what may go now, in write order, and sets a timer for a write waiting out its backoff. */
    private void pump(Lane lane) {
        if (lane.renew) {
            if (lane.inFlight() > 0) {
                return;
            }
            lane.renew = false;
            lane.producerId = newProducerId();
            lane.nextSequence = 0;
            lane.acknowledged = false;
        }
        long nowMs = clock.millis();
        int inFlight = lane.inFlight();
        boolean first = true;
        for (Write write : new ArrayList<>(lane.writes)) {
            if (write.inFlight) {
                first = false;
                continue;
            }
            if (write.sendAtMs > nowMs) {
                wakeAt(lane, write.sendAtMs);
                return;
            }
            if (!first && !pipelines(lane, inFlight)) {
                return;
            }
            if (write.request == null && !build(lane, write)) {
                return;
            }
            send(lane, write);
            inFlight++;
            first = false;
        }
    }

    /**
     * Whether a write may go while others of its partition are in flight: to a leader that takes requests in order and
     * is the one they went to. A write the old leader stored but answers late must find itself among the partition's
     * last batches when it is sent again, to be answered as the duplicate it is (a broker knows a producer's last 5);
     * writes sent to a new leader meanwhile would be stored after it.
     */
    private boolean pipelines(Lane lane, int inFlight) {
        if (!lane.acknowledged || inFlight >= maxInFlight) {
            return false;
        }
        Optional<String> leader = metadata.leaderAddress(lane.tp);
        return leader.isPresent() && leader.get().equals(lane.inFlightTo) && streams.ordered(leader.get());
    }

    /** Builds the batch with the partition's producer id and next sequence; false when it is refused here. */
    private boolean build(Lane lane, Write write) {
        ByteBuffer bytes = write.batch.producer(lane.producerId, (short) 0, lane.nextSequence).build();
        if (bytes.remaining() > maxRequestBytes) {
            fail(lane, write, new TidemarkException(ErrorCode.RECORD_TOO_LARGE, "a batch of " + bytes.remaining()
                    + " bytes for " + lane.tp + " is above max.request.bytes=" + maxRequestBytes));
            return false;
        }
        write.producerId = lane.producerId;
        lane.nextSequence = ProducerSequences.increment(lane.nextSequence, write.batch.recordCount());
        write.request = ProduceRequest.newBuilder().setTopic(lane.tp.topic()).setPartition(lane.tp.partition())
                .setBatch(UnsafeByteOperations.unsafeWrap(bytes)).build();
        return true;
    }

    private void send(Lane lane, Write write) {
        if (lane.inFlight() == 0) {
            lane.inFlightTo = metadata.leaderAddress(lane.tp).orElse(null);
        }
        write.inFlight = true;
        write.pipelined = lane.writes.peekFirst() != write;
        write.attempts++;
        leaders.produce(write.request, streams, clock).whenComplete((response, error) -> onThread(
                () -> answered(lane, write, response, error), write));
    }

    private void answered(Lane lane, Write write, ProduceResponse response, Throwable error) {
        write.inFlight = false;
        if (write.result.isDone()) {
            return;
        }
        if (error == null) {
            if (write.producerId == lane.producerId) {
                lane.acknowledged = true;
            }
            lane.writes.remove(write);
            settle(write, response, null);
        } else {
            lane.acknowledged = false;
            TidemarkException e = GrpcFutures.asTidemark(error);
            long nowMs = clock.millis();
            boolean outOfTurn = e.code() == ErrorCode.OUT_OF_ORDER_SEQUENCE && write.pipelined;
            if (!write.noResend && (outOfTurn || e.retriable() && nowMs < write.deadlineMs)) {
                write.sendAtMs = outOfTurn ? nowMs : nowMs + retryBackoffMs;
            } else {
                fail(lane, write, e.retriable() && !write.noResend ? deadlinePassed(write, e) : e);
                lane.renew = true;
            }
        }
        pump(lane);
    }

    private TidemarkException deadlinePassed(Write write, TidemarkException last) {
        return new TidemarkException(last.code(), "batch of " + write.tp + " not acknowledged within "
                + "delivery.timeout.ms=" + deliveryTimeoutMs + " (" + write.attempts + " attempt(s)); the last error: "
                + last.getMessage());
    }

    /**
     * Fails {@code failed} with {@code e}, and the writes after it: those not sent at once, those in flight with their
     * own answers.
     */
    private void fail(Lane lane, Write failed, TidemarkException e) {
        lane.fenced = true;
        boolean after = false;
        for (Iterator<Write> it = lane.writes.iterator(); it.hasNext(); ) {
            Write write = it.next();
            if (write == failed) {
                after = true;
                it.remove();
                settle(write, null, e);
            } else if (after && write.inFlight) {
                write.noResend = true;
            } else if (after) {
                it.remove();
                settle(write, null, new TidemarkException(ErrorCode.OUT_OF_ORDER_SEQUENCE, "batch of " + lane.tp
                        + " not sent: the batch written before it failed (" + e.code() + ": " + e.getMessage()
                        + ")"));
            }
        }
    }

    private void wakeAt(Lane lane, long atMs) {
        if (lane.wakeAtMs != 0 && lane.wakeAtMs <= atMs) {
            return;
        }
        lane.wakeAtMs = atMs;
        thread.schedule(() -> {
            if (lane.wakeAtMs == atMs) {
                lane.wakeAtMs = 0;
                pump(lane);
            }
        }, Math.max(0, atMs - clock.millis()), TimeUnit.MILLISECONDS);
    }

    /** Ends a write: counts it answered, then completes its future. */
    private void settle(Write write, ProduceResponse response, Throwable error) {
        unanswered.computeIfPresent(write.tp, (p, count) -> count > 1 ? count - 1 : null);
        if (error == null) {
            write.result.complete(response);
        } else {
            write.result.completeExceptionally(error);
        }
    }

    /** Runs {@code task} on the writer's thread; once the writer is closed, {@code write} fails instead. */
    private void onThread(Runnable task, Write write) {
        try {
            thread.execute(task);
        } catch (RejectedExecutionException closed) {
            write.result.completeExceptionally(closedError());
        }
    }

    private static TidemarkException closedError() {
        return new TidemarkException(ErrorCode.NOT_AVAILABLE, "the writer was closed before the batch was "
                + "acknowledged");
    }

    private long newProducerId() {
        return random.nextLong() & Long.MAX_VALUE;
    }

    /** Fails what is unanswered with NOT_AVAILABLE and shuts the streams and channels down. */
    @Override
    public void close() {
        try {
            thread.submit(() -> {
                for (Lane lane : lanes.values()) {
                    for (Write write : lane.writes) {
                        settle(write, null, closedError());
                    }
                    lane.writes.clear();
                }
                streams.close();
            }).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
            // the thread did not get to it: an answer arriving later finds the thread stopped and fails its write
        }
        thread.shutdownNow();
        channels.closeNow();
    }
}
