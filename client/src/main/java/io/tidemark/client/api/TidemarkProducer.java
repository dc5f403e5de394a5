package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.io.Closeable;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.OptionalInt;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sends records to Tidemark partitions. {@link #send} chooses the partition (the record's own, else by key hash,
 * else a sticky one), stamps SendTime from the clock when the record has none, and adds the record to its
 * partition's batch; a background sender sends a batch when it reaches {@code batch.size} or is {@code linger.ms}
 * old, at most one request per partition at a time so each partition keeps the order of sends, and retries
 * retriable errors until {@code delivery.timeout.ms}. The returned future completes with the record's offset and
 * ReceiveTime, or fails with a {@link TidemarkException}. When the broker refuses a whole batch because of one
 * record (a SendTime outside the topic's window, say), the batch's records are resent one per batch, in order, so
 * only the bad record fails and the others are stored.
 *
 * <p>With {@code enable.idempotence} (the default) the producer picks a random producer id once (see
 * {@link ProducerSequences}) and numbers each partition's batches with sequences, so the broker stores a batch
 * once even when it is resent after a lost reply or a leader change.
 *
 * <p>With {@code transactional.id} the producer sends inside transactions: {@link #initTransactions} once, then
 * {@link #beginTransaction}, sends, and {@link #commitTransaction} or {@link #abortTransaction}. The records of a
 * transaction, across partitions and topics, become visible to {@code read_committed} consumers together when it
 * commits, and never when it aborts ({@link TransactionManager}).
 *
 * <p>Memory is bounded by {@code buffer.memory}: bytes of records accepted and not yet acknowledged or failed.
 * {@code send} blocks while they would pass it, up to {@code max.block.ms}.
 *
 * <p>Thread-safe: any number of threads may send, flush and close. Futures complete on the sender thread, so
 * callbacks chained on them should be short.
 */
public final class TidemarkProducer implements Closeable {
    /** How long {@link #close()} lets the sender thread end after the flush finished or timed out. */
    private static final long SENDER_JOIN_MS = 5_000;
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /**
     * The time {@code max.block.ms} is measured on: real time elapsed, not the producer's clock, since it bounds how
     * long a caller's thread blocks (as {@link MemoryBudget}'s wait, which shares the budget), and a wall clock that
     * jumps or a test clock that stands still must not change that.
     */
    private static final InstantSource ELAPSED = () -> Instant.ofEpochMilli(
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime()));

    private final ProducerConfig config;
    private final Clock clock;
    private final BrokerChannels channels;
    private final ClusterMetadata metadata;
    private final Partitioner partitioner;
    private final MemoryBudget memory;
    private final RecordAccumulator accumulator;
    private final Sender sender;
    private final Thread senderThread;
    /** Null for a producer without transactional.id. */
    private final TransactionManager transactions;
    private final AtomicBoolean closed = new AtomicBoolean();

    public TidemarkProducer(ProducerConfig config) {
        this.config = config;
        ConnectionSettings connection = config.connection();
        this.clock = connection.clock();
        this.channels = new BrokerChannels(connection);
        this.metadata = new ClusterMetadata(new AnyBrokerCaller(connection.bootstrap(), channels,
                connection.requestTimeoutMs()));
        this.partitioner = new Partitioner(new Random());
        this.memory = new MemoryBudget(config.bufferMemoryBytes(), config.maxBlockMs());
        this.accumulator = new RecordAccumulator(config.batchSizeBytes(), config.maxRequestBytes(),
                config.lingerMs(), config.deliveryTimeoutMs());
        ProducerSequences sequences = config.transactionalId().isPresent() ? ProducerSequences.forTransactions()
                : ProducerSequences.create(config.idempotence());
        this.transactions = config.transactionalId().map(id -> new TransactionManager(id,
                config.transactionTimeoutMs(), new LeaderCaller(metadata, channels, connection.requestTimeoutMs(),
                LeaderCaller.Callbacks.TRANSPORT_THREAD), sequences, clock, config.maxBlockMs(),
                config.retryBackoffMs())).orElse(null);
        this.sender = new Sender(accumulator, metadata, channels, memory, partitioner, sequences, config);
        this.senderThread = new Thread(sender, "tidemark-producer-sender-" + INSTANCES.incrementAndGet());
        this.senderThread.setDaemon(true);
        this.senderThread.start();
    }

    /**
     * Adds a record to its partition's batch. Blocks while the topic's metadata is unknown or
     * {@code buffer.memory} is full, for at most {@code max.block.ms} together.
     *
     * @return completes with where the record was stored; fails with RECORD_TOO_LARGE when the record alone is
     *         larger than {@code max.request.bytes}, UNKNOWN_PARTITION for a partition the topic does not have,
     *         the broker's TidemarkException for a non-retriable error about this record or its request (never
     *         for another record that shared its batch), or the last error once
     *         {@code delivery.timeout.ms} passed
     * @throws TidemarkException UNKNOWN_TOPIC when the topic is not in the metadata within {@code max.block.ms}
     *                           (a refresh that fails with an error that is not retriable throws that error at once);
     *                           NOT_AVAILABLE naming buffer.memory and max.block.ms when no room came in time
     * @throws IllegalStateException after {@link #close}
     */
    public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
        if (closed.get()) {
            throw new IllegalStateException("the producer is closed");
        }
        long startNanos = System.nanoTime();
        CompletableFuture<RecordMetadata> future = new CompletableFuture<>();
        int batchBytes = ProducerBatch.singleRecordBatchBytes(record.key(), record.value(), record.headers());
        if (batchBytes > config.maxRequestBytes()) {
            future.completeExceptionally(new TidemarkException(ErrorCode.RECORD_TOO_LARGE, "a record of "
                    + record.topic() + " needs a batch of " + batchBytes + " bytes, more than max.request.bytes="
                    + config.maxRequestBytes() + "; raise max.request.bytes (and the topic's max.batch.bytes)"));
            return future;
        }
        int partitionCount = partitionCount(record.topic(), startNanos);
        if (record.partition() != null && record.partition() >= partitionCount) {
            future.completeExceptionally(new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "topic "
                    + record.topic() + " has " + partitionCount + " partitions (0.." + (partitionCount - 1)
                    + "); partition " + record.partition() + " does not exist"));
            return future;
        }
        int partition = record.partition() != null ? record.partition()
                : partitioner.partition(record.topic(), record.key(), partitionCount);
        if (transactions != null) {
            transactions.beforeSend(new TopicPartition(record.topic(), partition));
            future.whenComplete((stored, failure) -> {
                if (failure != null) {
                    transactions.recordFailed(failure);
                }
            });
        }
        long sendTimeMs = record.sendTimeMs() != null ? record.sendTimeMs() : clock.millis();
        long reserved = ProducerBatch.maxRecordSizeBytes(record.key(), record.value(), record.headers());
        memory.reserve(reserved, remainingBlockMs(startNanos));
        try {
            accumulator.append(new TopicPartition(record.topic(), partition), sendTimeMs, record.key(),
                    record.value(), record.headers(), reserved, future, clock.millis());
        } catch (RuntimeException e) {
            memory.release(reserved);
            throw e;
        }
        return future;
    }

    /**
     * Takes the producer id and a new epoch for {@code transactional.id} from the transaction coordinator: every
     * earlier producer instance with the id is fenced from then on, and a transaction one left open is aborted. Call
     * once, before the first transaction.
     *
     * @throws IllegalStateException without transactional.id, or when called twice
     * @throws TidemarkException     when the coordinator could not be reached within max.block.ms
     */
    public void initTransactions() {
        transactions().init();
    }

    /** Opens a transaction: the records sent until it ends belong to it. */
    public void beginTransaction() {
        transactions().begin();
    }

    /**
     * Adds a consumer's offsets to the open transaction: the group's committed offsets move to them when the
     * transaction commits, in the same write as the decision, and stay where they were if it aborts. With
     * {@link TidemarkConsumer#groupMetadata()}, so a consumer fenced from its group cannot commit this way either.
     *
     * @throws TidemarkException INVALID_PRODUCER_EPOCH when this producer was fenced; STALE_MEMBER_EPOCH or
     *                           UNKNOWN_MEMBER_ID when the group no longer takes the member's commits
     */
    public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets,
                                         ConsumerGroupMetadata groupMetadata) {
        transactions().sendOffsets(offsets, groupMetadata);
    }

    /**
     * Waits until every record of the transaction is acknowledged, then commits it: its records become visible to
     * read_committed consumers, in every partition.
     *
     * @throws TidemarkException when a record of it failed (the transaction stays open: abort it), or
     *                           INVALID_PRODUCER_EPOCH when this producer was fenced (close it)
     */
    public void commitTransaction() {
        transactions().commit(this::flush);
    }

    /**
     * Aborts the transaction: no read_committed consumer ever sees its records. Waits for the records in flight
     * first.
     *
     * @throws TidemarkException INVALID_PRODUCER_EPOCH when this producer was fenced (close it)
     */
    public void abortTransaction() {
        transactions().abort(this::flush);
    }

    private TransactionManager transactions() {
        if (transactions == null) {
            throw new IllegalStateException("transactions need transactional.id in the producer's config");
        }
        return transactions;
    }

    /** Sends every batch at once and waits until every record sent before the call is acknowledged or failed. */
    public void flush() {
        accumulator.beginFlush();
        try {
            CompletableFuture.allOf(accumulator.incomplete().stream().map(ProducerBatch::done)
                    .toArray(CompletableFuture[]::new)).join();
        } finally {
            accumulator.endFlush();
        }
    }

    /** Closes with a flush bounded by {@code delivery.timeout.ms}. */
    @Override
    public void close() {
        close(Duration.ofMillis(config.deliveryTimeoutMs()));
    }

    /**
     * Refuses new records, sends what is queued and waits up to {@code timeout} for it to be acknowledged; what is
     * still unacknowledged then fails with NOT_AVAILABLE. Shuts the channels down. Later calls do nothing.
     */
    public void close(Duration timeout) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        accumulator.close();
        sender.initiateClose();
        try {
            CompletableFuture.allOf(accumulator.incomplete().stream().map(ProducerBatch::done)
                    .toArray(CompletableFuture[]::new)).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // what is left fails below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            sender.forceClose();
            joinSender();
            boolean allEnded = !accumulator.hasIncomplete();
            sender.failAll(new TidemarkException(ErrorCode.NOT_AVAILABLE, "the producer was closed (close timeout "
                    + timeout.toMillis() + " ms) before the record was acknowledged"));
            if (allEnded) {
                channels.close();
            } else {
                channels.closeNow();
            }
        }
    }

    private void joinSender() {
        try {
            senderThread.join(SENDER_JOIN_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The topic's partition count; while the metadata does not know the topic, refreshes it every
     * {@code retry.backoff.ms} ({@link Retry}) until it does or what is left of {@code max.block.ms} passed.
     */
    private int partitionCount(String topic, long startNanos) {
        OptionalInt known = metadata.partitionCount(topic);
        if (known.isPresent()) {
            return known.getAsInt();
        }
        return Retry.within(ELAPSED, Math.max(0, remainingBlockMs(startNanos)), config.retryBackoffMs())
                .onDeadline((last, refreshes) -> new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic " + topic
                        + " is not in the cluster metadata after max.block.ms=" + config.maxBlockMs() + " ("
                        + refreshes + " refreshes; the last: " + last.getMessage() + ")"))
                .call(() -> {
                    refreshMetadata(topic, startNanos);
                    return metadata.partitionCount(topic).orElseThrow(() -> new TidemarkException(
                            ErrorCode.NOT_AVAILABLE, "the cluster metadata does not list topic " + topic));
                });
    }

    /** One metadata refresh, waited for within what is left of max.block.ms. */
    private void refreshMetadata(String topic, long startNanos) {
        try {
            metadata.refresh().get(Math.max(1, remainingBlockMs(startNanos)), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw GrpcFutures.asTidemark(e);
        } catch (TimeoutException e) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "a metadata refresh was still running");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "interrupted while waiting for the metadata"
                    + " of topic " + topic);
        }
    }

    private long remainingBlockMs(long startNanos) {
        return config.maxBlockMs() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }
}
