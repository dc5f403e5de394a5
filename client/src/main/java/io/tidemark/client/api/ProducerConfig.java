package io.tidemark.client.api;

import io.grpc.ManagedChannel;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.tls.TlsMaterial;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

import static io.tidemark.client.api.ConfigChecks.KIB;
import static io.tidemark.client.api.ConfigChecks.MIB;
import static io.tidemark.client.api.ConfigChecks.atLeast;
import static io.tidemark.client.api.ConfigChecks.inRange;
import static io.tidemark.client.api.ConfigChecks.notAbove;

/**
 * Settings of a {@link TidemarkProducer}, made with {@link #builder(String)}. Every value is checked when
 * {@link Builder#build()} runs; a bad one fails with an {@link IllegalArgumentException} naming the setting, the
 * value and what is allowed.
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>key</th><th>unit</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>bootstrap</td><td>host:port,...</td><td>(required)</td><td>brokers to ask for metadata</td></tr>
 *   <tr><td>batch.size</td><td>bytes</td><td>262144 (256 KiB)</td><td>a partition's batch is sent once it holds
 *       this much; a single larger record gets a batch of its own up to max.request.bytes. Larger than Kafka's
 *       16 KiB because every batch costs a request and a share of a Raft round whatever its size: with 16 KiB and
 *       one batch in flight a partition moved 15k records/s of 1 KiB on one node, with 256 KiB 50k
 *       (docs/benchmarks.md); linger.ms still bounds the wait when traffic is light</td></tr>
 *   <tr><td>linger.ms</td><td>ms</td><td>5</td><td>a batch that is not full is sent when it is this old</td></tr>
 *   <tr><td>buffer.memory</td><td>bytes</td><td>33554432 (32 MiB)</td><td>bytes of records accepted and not yet
 *       acknowledged or failed; send blocks while they would exceed it</td></tr>
 *   <tr><td>max.block.ms</td><td>ms</td><td>60000</td><td>how long send blocks for buffer.memory or for the
 *       topic's metadata before it throws</td></tr>
 *   <tr><td>max.request.bytes</td><td>bytes</td><td>1048576 (1 MiB)</td><td>largest batch, so largest record
 *       plus the 60-byte batch header (a larger record fails with RECORD_TOO_LARGE); also the most batch bytes one
 *       request carries: the batches ready for one broker go together in requests of up to this much</td></tr>
 *   <tr><td>retry.backoff.ms</td><td>ms</td><td>100</td><td>wait before a batch is resent after a retriable
 *       error</td></tr>
 *   <tr><td>delivery.timeout.ms</td><td>ms</td><td>120000</td><td>a record not acknowledged this long after its
 *       batch was opened fails with the last error</td></tr>
 *   <tr><td>request.timeout.ms</td><td>ms</td><td>30000</td><td>deadline of one call to one broker</td></tr>
 *   <tr><td>enable.idempotence</td><td>boolean</td><td>true</td><td>batches carry a producer id and per-partition
 *       sequence numbers, so the broker stores a batch once although it is resent (after a lost reply or a
 *       leader change) and refuses one that would leave a gap (OUT_OF_ORDER_SEQUENCE, not retried). On by default
 *       because retries are on by default: without it a retry after a lost reply stores the records twice. It
 *       costs nothing on the wire (the header fields are there either way) and little on the broker (the last
 *       few batches of each producer and partition). Off, batches carry producer id -1</td></tr>
 *   <tr><td>max.in.flight.requests.per.partition</td><td>batches</td><td>5</td><td>batches of one partition sent
 *       and not yet answered, 1..5 (the broker remembers a producer's last 5 batches per partition, which a resend
 *       must be among). Several go only while nothing went wrong: once the partition acknowledged a batch under the
 *       producer's current id, to a broker that takes requests in order (ProduceStream); after any error one at a
 *       time until a batch is acknowledged again. With enable.idempotence off, always 1: without sequences a retry
 *       could overtake the batches behind it</td></tr>
 *   <tr><td>transactional.id</td><td>name</td><td>(none)</td><td>makes the producer transactional: its records are
 *       sent inside transactions ({@link TidemarkProducer#initTransactions} first), and only one producer instance
 *       with this id works at a time (initializing a new one fences the old). Needs enable.idempotence; 1 to 255
 *       bytes</td></tr>
 *   <tr><td>transaction.timeout.ms</td><td>ms</td><td>60000</td><td>a transaction open longer than this is aborted
 *       by the coordinator, which fences the producer (at most the broker's transaction.max.timeout.ms, 15
 *       minutes)</td></tr>
 * </table>
 * The clock (default {@link Clock#systemUTC()}) gives SendTime when a record carries none, batch ages, backoffs
 * and delivery deadlines. The channel factory (default: plaintext netty, messages up to 64 MiB) makes the
 * channel to a {@code host:port}; tests pass in-process channels. A token ({@link Builder#token}) goes with every
 * call, over TLS only.
 *
 * <p>Immutable.
 */
public final class ProducerConfig {
    public static final int DEFAULT_BATCH_SIZE_BYTES = 256 * KIB;
    public static final long DEFAULT_LINGER_MS = 5;
    public static final long DEFAULT_BUFFER_MEMORY_BYTES = 32L * MIB;
    public static final long DEFAULT_MAX_BLOCK_MS = 60_000;
    public static final int DEFAULT_MAX_REQUEST_BYTES = MIB;
    public static final long DEFAULT_RETRY_BACKOFF_MS = 100;
    public static final long DEFAULT_DELIVERY_TIMEOUT_MS = 120_000;
    public static final boolean DEFAULT_ENABLE_IDEMPOTENCE = true;
    public static final int DEFAULT_MAX_IN_FLIGHT_PER_PARTITION = 5;
    public static final long DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000;
    /** Largest max.in.flight.requests.per.partition: the batches per producer a partition remembers. */
    public static final int MAX_IN_FLIGHT_PER_PARTITION_LIMIT = 5;
    /** Largest max.request.bytes: what a default channel accepts ({@link BrokerChannels#MAX_INBOUND_MESSAGE_BYTES}). */
    public static final int MAX_REQUEST_BYTES_LIMIT = 64 * MIB;
    /** Smallest max.request.bytes: a batch header and a small record. */
    static final int MIN_REQUEST_BYTES = KIB;
    /** Upper bound of every ms setting: about 24.8 days, so sums of them never overflow. */
    static final long MAX_MS = Integer.MAX_VALUE;

    private final ConnectionSettings connection;
    private final int batchSizeBytes;
    private final long lingerMs;
    private final long bufferMemoryBytes;
    private final long maxBlockMs;
    private final int maxRequestBytes;
    private final long retryBackoffMs;
    private final long deliveryTimeoutMs;
    private final boolean idempotence;
    private final int maxInFlightPerPartition;
    private final Optional<String> transactionalId;
    private final long transactionTimeoutMs;

    private ProducerConfig(Builder b) {
        this.connection = new ConnectionSettings(ConfigChecks.bootstrap(b.bootstrap), b.clock, b.channelFactory,
                Optional.ofNullable(b.token), b.requestTimeoutMs);
        this.maxRequestBytes = (int) inRange("max.request.bytes", b.maxRequestBytes, MIN_REQUEST_BYTES,
                MAX_REQUEST_BYTES_LIMIT, "bytes");
        this.batchSizeBytes = (int) inRange("batch.size", b.batchSizeBytes, 1, maxRequestBytes,
                "bytes (at most max.request.bytes)");
        this.lingerMs = inRange("linger.ms", b.lingerMs, 0, MAX_MS, "ms");
        this.bufferMemoryBytes = atLeast("buffer.memory", b.bufferMemoryBytes, maxRequestBytes,
                "bytes (max.request.bytes, so the largest record fits)");
        this.maxBlockMs = inRange("max.block.ms", b.maxBlockMs, 0, MAX_MS, "ms");
        this.retryBackoffMs = inRange("retry.backoff.ms", b.retryBackoffMs, 0, MAX_MS, "ms");
        this.deliveryTimeoutMs = inRange("delivery.timeout.ms", b.deliveryTimeoutMs, 1, MAX_MS, "ms");
        notAbove("linger.ms", lingerMs, "delivery.timeout.ms", deliveryTimeoutMs);
        this.idempotence = b.idempotence;
        this.maxInFlightPerPartition = (int) inRange("max.in.flight.requests.per.partition",
                b.maxInFlightPerPartition, 1, MAX_IN_FLIGHT_PER_PARTITION_LIMIT, "batches");
        if (b.transactionalId != null && (b.transactionalId.isBlank() || !b.idempotence
                || b.transactionalId.getBytes(StandardCharsets.UTF_8).length > 255)) {
            throw new IllegalArgumentException("transactional.id = \"" + b.transactionalId + "\" is not allowed: "
                    + "1 to 255 bytes, not blank, and enable.idempotence must be on");
        }
        this.transactionalId = Optional.ofNullable(b.transactionalId);
        this.transactionTimeoutMs = inRange("transaction.timeout.ms", b.transactionTimeoutMs, 1, MAX_MS, "ms");
    }

    /** A builder with every setting at its default; {@code bootstrap} is a comma-separated host:port list. */
    public static Builder builder(String bootstrap) {
        return new Builder(bootstrap);
    }

    ConnectionSettings connection() {
        return connection;
    }

    public int batchSizeBytes() {
        return batchSizeBytes;
    }

    public long lingerMs() {
        return lingerMs;
    }

    public long bufferMemoryBytes() {
        return bufferMemoryBytes;
    }

    public long maxBlockMs() {
        return maxBlockMs;
    }

    public int maxRequestBytes() {
        return maxRequestBytes;
    }

    public long retryBackoffMs() {
        return retryBackoffMs;
    }

    public long deliveryTimeoutMs() {
        return deliveryTimeoutMs;
    }

    /** {@code enable.idempotence}. */
    public boolean idempotence() {
        return idempotence;
    }

    /** {@code transactional.id}: set for a transactional producer. */
    public Optional<String> transactionalId() {
        return transactionalId;
    }

    public long transactionTimeoutMs() {
        return transactionTimeoutMs;
    }

    /**
     * {@code max.in.flight.requests.per.partition} as the producer uses it: 1 when idempotence is off, whatever was
     * set.
     */
    public int maxInFlightPerPartition() {
        return idempotence ? maxInFlightPerPartition : 1;
    }

    public long requestTimeoutMs() {
        return connection.requestTimeoutMs();
    }

    public Clock clock() {
        return connection.clock();
    }

    /** Builds a {@link ProducerConfig}; not thread-safe. Values are checked by {@link #build()}. */
    public static final class Builder {
        private final String bootstrap;
        private Clock clock = Clock.systemUTC();
        private Function<String, ManagedChannel> channelFactory = BrokerChannels.PLAINTEXT;
        private BearerToken token;
        private long requestTimeoutMs = ConnectionSettings.DEFAULT_REQUEST_TIMEOUT_MS;
        private long batchSizeBytes = DEFAULT_BATCH_SIZE_BYTES;
        private long lingerMs = DEFAULT_LINGER_MS;
        private long bufferMemoryBytes = DEFAULT_BUFFER_MEMORY_BYTES;
        private long maxBlockMs = DEFAULT_MAX_BLOCK_MS;
        private long maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private long retryBackoffMs = DEFAULT_RETRY_BACKOFF_MS;
        private long deliveryTimeoutMs = DEFAULT_DELIVERY_TIMEOUT_MS;
        private boolean idempotence = DEFAULT_ENABLE_IDEMPOTENCE;
        private long maxInFlightPerPartition = DEFAULT_MAX_IN_FLIGHT_PER_PARTITION;
        private String transactionalId;
        private long transactionTimeoutMs = DEFAULT_TRANSACTION_TIMEOUT_MS;

        private Builder(String bootstrap) {
            this.bootstrap = bootstrap;
        }

        /** The clock SendTime, ages and deadlines are read from. Default: {@link Clock#systemUTC()}. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Makes the channel to a broker's {@code host:port}. Default: plaintext netty, messages up to 64 MiB. */
        public Builder channelFactory(Function<String, ManagedChannel> channelFactory) {
            this.channelFactory = channelFactory;
            return this;
        }

        /**
         * Speaks TLS to the brokers with {@code tls}'s certificates (the caller closes it after the client): the
         * default channels, in TLS. Replaces {@link #channelFactory}.
         */
        public Builder tls(TlsMaterial tls) {
            this.channelFactory = BrokerChannels.tls(tls);
            return this;
        }

        /**
         * Sends {@code token} with every call ({@code authorization: Bearer <token>}), for brokers that take tokens
         * instead of client certificates. Needs TLS ({@link #tls}, or a {@link #channelFactory} of TLS channels): with
         * the default plain-text channels {@link #build()} refuses it, and a call on another plain-text channel fails
         * with AUTHENTICATION_FAILED without sending it.
         */
        public Builder token(BearerToken token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        /** {@code request.timeout.ms}: deadline of one call to one broker, ms, 1..86400000. Default 30000. */
        public Builder requestTimeoutMs(long requestTimeoutMs) {
            this.requestTimeoutMs = requestTimeoutMs;
            return this;
        }

        /** {@code batch.size}: bytes at which a partition's batch is sent, 1..max.request.bytes. Default 262144. */
        public Builder batchSizeBytes(long batchSizeBytes) {
            this.batchSizeBytes = batchSizeBytes;
            return this;
        }

        /** {@code linger.ms}: age at which a batch that is not full is sent, ms, 0..delivery.timeout.ms. Default 5. */
        public Builder lingerMs(long lingerMs) {
            this.lingerMs = lingerMs;
            return this;
        }

        /** {@code buffer.memory}: bytes of unacknowledged records, at least max.request.bytes. Default 32 MiB. */
        public Builder bufferMemoryBytes(long bufferMemoryBytes) {
            this.bufferMemoryBytes = bufferMemoryBytes;
            return this;
        }

        /** {@code max.block.ms}: how long send may block, ms, 0..2147483647. Default 60000. */
        public Builder maxBlockMs(long maxBlockMs) {
            this.maxBlockMs = maxBlockMs;
            return this;
        }

        /** {@code max.request.bytes}: largest batch, bytes, 1024..67108864. Default 1 MiB. */
        public Builder maxRequestBytes(long maxRequestBytes) {
            this.maxRequestBytes = maxRequestBytes;
            return this;
        }

        /** {@code retry.backoff.ms}: wait before a retry, ms, 0..2147483647. Default 100. */
        public Builder retryBackoffMs(long retryBackoffMs) {
            this.retryBackoffMs = retryBackoffMs;
            return this;
        }

        /** {@code delivery.timeout.ms}: how long a record may take to be acknowledged, ms. Default 120000. */
        public Builder deliveryTimeoutMs(long deliveryTimeoutMs) {
            this.deliveryTimeoutMs = deliveryTimeoutMs;
            return this;
        }

        /**
         * {@code enable.idempotence}: whether batches carry a producer id and sequences so the broker stores each
         * once however often it is resent. Default true.
         */
        public Builder idempotence(boolean idempotence) {
            this.idempotence = idempotence;
            return this;
        }

        /** {@code transactional.id}: makes the producer transactional. Default: none. */
        public Builder transactionalId(String transactionalId) {
            this.transactionalId = transactionalId;
            return this;
        }

        /** {@code transaction.timeout.ms}: when the coordinator aborts an open transaction, ms. Default 60000. */
        public Builder transactionTimeoutMs(long transactionTimeoutMs) {
            this.transactionTimeoutMs = transactionTimeoutMs;
            return this;
        }

        /**
         * {@code max.in.flight.requests.per.partition}: batches of a partition sent and not yet answered, 1..5.
         * Default 5. Several only with idempotence, while nothing went wrong on the partition.
         */
        public Builder maxInFlightPerPartition(long maxInFlightPerPartition) {
            this.maxInFlightPerPartition = maxInFlightPerPartition;
            return this;
        }

        /** @throws IllegalArgumentException naming the first setting whose value is not allowed */
        public ProducerConfig build() {
            return new ProducerConfig(this);
        }
    }
}
