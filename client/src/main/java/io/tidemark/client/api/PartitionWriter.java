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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Writes batches the caller builds, one Produce call per batch, to partition leaders: for a caller that decides
 * where batches begin and end and must know a batch's fate before it sends the next one of its partition (the
 * mirror, whose batches each copy one origin partition and may be refused with ORIGIN_OFFSET_HELD). Unlike
 * {@link TidemarkProducer} it does not accumulate, linger, split or queue: a partition has at most one batch
 * outstanding, and what follows a refused batch is the caller's decision.
 *
 * <p>Always idempotent. Each partition gets a random producer id (epoch 0) and numbers its batches' records from 0. A
 * batch takes the partition's next sequence; a retriable error (NOT_LEADER, NOT_AVAILABLE) resends the same bytes
 * after {@code retry.backoff.ms}, until {@code delivery.timeout.ms} (a {@link Retry}), so a batch that was stored
 * although its reply was lost is answered with its first offsets. UNKNOWN_TOPIC and UNKNOWN_PARTITION are not retried here (unlike
 * {@link TidemarkProducer}): each call already refreshed the metadata and asked again, and a caller writes to
 * partitions it asked about first, so the topic is gone, and the caller must know at once: a batch still being
 * retried when the topic is created again would land at the start of the new one. Any other error means nothing was
 * stored: the sequence is given back. A batch still unacknowledged at
 * the deadline may or may not have been stored: the partition then takes a new producer id (its sequences would
 * otherwise be stuck behind the unknown batch), and the caller finds out what the partition holds (a mirror asks
 * {@link #originOffset}).
 *
 * <p>Of {@link ProducerConfig} it uses the bootstrap, clock, channel factory, {@code request.timeout.ms},
 * {@code retry.backoff.ms}, {@code delivery.timeout.ms} and {@code max.request.bytes}.
 *
 * <p>Thread-safe. Futures complete on gRPC or the writer's retry thread; a partition's bookkeeping is settled before
 * its future completes, so a callback may write the partition's next batch at once.
 */
public final class PartitionWriter implements Closeable {
    private final Clock clock;
    private final BrokerChannels channels;
    private final LeaderCaller leaders;
    private final long retryBackoffMs;
    private final long deliveryTimeoutMs;
    private final int maxRequestBytes;
    private final SecureRandom random = new SecureRandom();
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "tidemark-partition-writer-retries");
        thread.setDaemon(true);
        return thread;
    });
    private final Map<TopicPartition, Identity> identities = new ConcurrentHashMap<>();
    private final Map<TopicPartition, CompletableFuture<ProduceResponse>> outstanding = new ConcurrentHashMap<>();

    /** A partition's producer id and next sequence; only the writer of its one outstanding batch touches it. */
    private static final class Identity {
        private final long producerId;
        private int nextSequence;

        private Identity(long producerId) {
            this.producerId = producerId;
        }
    }

    public PartitionWriter(ProducerConfig config) {
        ConnectionSettings connection = config.connection();
        this.clock = connection.clock();
        this.channels = new BrokerChannels(connection.channelFactory());
        this.leaders = new LeaderCaller(new ClusterMetadata(new AnyBrokerCaller(connection.bootstrap(), channels,
                connection.requestTimeoutMs())), channels, connection.requestTimeoutMs(),
                LeaderCaller.Callbacks.CHANNEL_EXECUTOR);
        this.retryBackoffMs = config.retryBackoffMs();
        this.deliveryTimeoutMs = config.deliveryTimeoutMs();
        this.maxRequestBytes = config.maxRequestBytes();
    }

    /**
     * Builds the batch with the partition's producer id and next sequence and writes it.
     *
     * @param batch records appended, not built yet; this call builds it
     * @return completes with where the batch went, or fails with the broker's TidemarkException (after retries for
     *         retriable ones, with the last error once {@code delivery.timeout.ms} passed)
     * @throws IllegalStateException when the partition has a batch outstanding
     */
    public CompletableFuture<ProduceResponse> write(TopicPartition tp, RecordBatchBuilder batch) {
        CompletableFuture<ProduceResponse> result = new CompletableFuture<>();
        if (outstanding.putIfAbsent(tp, result) != null) {
            throw new IllegalStateException(tp + " has a batch outstanding; a PartitionWriter writes one batch of a "
                    + "partition at a time");
        }
        Identity identity = identities.computeIfAbsent(tp, p -> new Identity(newProducerId()));
        int baseSequence = identity.nextSequence;
        int records = batch.recordCount();
        ByteBuffer bytes = batch.producer(identity.producerId, (short) 0, baseSequence).build();
        if (bytes.remaining() > maxRequestBytes) {
            settle(tp, result, null, new TidemarkException(ErrorCode.RECORD_TOO_LARGE, "a batch of "
                    + bytes.remaining() + " bytes for " + tp + " is above max.request.bytes=" + maxRequestBytes));
            return result;
        }
        ProduceRequest request = ProduceRequest.newBuilder().setTopic(tp.topic()).setPartition(tp.partition())
                .setBatch(UnsafeByteOperations.unsafeWrap(bytes)).build();
        Retry.within(clock, deliveryTimeoutMs, retryBackoffMs)
                .onDeadline((last, attempts) -> new TidemarkException(last.code(), "batch of " + tp
                        + " not acknowledged within delivery.timeout.ms=" + deliveryTimeoutMs + " (" + attempts
                        + " attempt(s)); the last error: " + last.getMessage()))
                .callAsync(() -> leaders.produce(request),
                        (task, delayMs) -> retries.schedule(task, delayMs, TimeUnit.MILLISECONDS))
                .whenComplete((response, error) -> {
                    if (error == null) {
                        identity.nextSequence = ProducerSequences.increment(baseSequence, records);
                    } else if (error instanceof TidemarkException e && e.retriable()) {
                        identities.put(tp, new Identity(newProducerId()));
                    }
                    settle(tp, result, response, error);
                });
        return result;
    }

    /**
     * The last origin offset of {@code origin} that {@code tp} holds through mirrored batches, from its leader.
     *
     * @return fails with the broker's TidemarkException
     */
    public CompletableFuture<OriginOffsetResponse> originOffset(TopicPartition tp, OriginPartition origin) {
        return leaders.originOffset(tp, origin);
    }

    /** Ends the partition's outstanding batch, then completes its future. */
    private void settle(TopicPartition tp, CompletableFuture<ProduceResponse> result, ProduceResponse response,
                        Throwable error) {
        outstanding.remove(tp, result);
        if (error == null) {
            result.complete(response);
        } else {
            result.completeExceptionally(error);
        }
    }

    private long newProducerId() {
        return random.nextLong() & Long.MAX_VALUE;
    }

    /** Fails what is outstanding with NOT_AVAILABLE and shuts the channels down. */
    @Override
    public void close() {
        retries.shutdownNow();
        TidemarkException closed = new TidemarkException(ErrorCode.NOT_AVAILABLE, "the writer was closed before the"
                + " batch was acknowledged");
        outstanding.forEach((tp, result) -> settle(tp, result, null, closed));
        channels.closeNow();
    }
}
