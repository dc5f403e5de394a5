package io.tidemark.client.api;

import io.grpc.ManagedChannel;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.tls.TlsMaterial;

import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

import static io.tidemark.client.api.ConfigChecks.MIB;
import static io.tidemark.client.api.ConfigChecks.inRange;

/**
 * Settings of a {@link TidemarkConsumer}, made with {@link #builder(String)}. Every value is checked when
 * {@link Builder#build()} runs; a bad one fails with an {@link IllegalArgumentException} naming the setting, the
 * value and what is allowed.
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>key</th><th>unit</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>bootstrap</td><td>host:port,...</td><td>(required)</td><td>brokers to ask for metadata and group
 *       offsets</td></tr>
 *   <tr><td>group</td><td>name</td><td>(none)</td><td>the consumer group whose offsets are committed and read;
 *       without one, commits are refused and positions start by auto.offset.reset</td></tr>
 *   <tr><td>group.instance.id</td><td>name</td><td>(none)</td><td>makes a subscribed consumer a static member: one
 *       that restarts with the same id within the group's session timeout gets its partitions back without a
 *       rebalance</td></tr>
 *   <tr><td>enable.auto.commit</td><td>true|false</td><td>true</td><td>a subscribed consumer commits the positions
 *       of its partitions every auto.commit.interval.ms (from poll), before the group takes a partition away, and when
 *       it leaves; a consumer assigned partitions by hand commits only when asked</td></tr>
 *   <tr><td>auto.commit.interval.ms</td><td>ms</td><td>5000</td><td>how often auto commit commits</td></tr>
 *   <tr><td>client.id</td><td>name</td><td>tidemark-consumer</td><td>names the consumer to the group coordinator
 *       (shown with the group's members)</td></tr>
 *   <tr><td>auto.offset.reset</td><td>earliest|latest|none</td><td>latest</td><td>where a partition without a
 *       committed offset starts, and where an out-of-range position goes</td></tr>
 *   <tr><td>isolation.level</td><td>read_uncommitted|read_committed</td><td>read_uncommitted</td><td>
 *       read_committed returns records of transactions only once they committed (reading stops at the oldest
 *       transaction still open in a partition) and never those of aborted ones; read_uncommitted returns every
 *       record as soon as it is stored. Transaction markers are never returned either way.</td></tr>
 *   <tr><td>max.poll.records</td><td>records</td><td>500</td><td>most records one poll returns</td></tr>
 *   <tr><td>fetch.max.bytes</td><td>bytes</td><td>1048576 (1 MiB)</td><td>most bytes one fetch asks a partition
 *       for (the broker always returns at least the whole batch holding the position)</td></tr>
 *   <tr><td>fetch.request.max.bytes</td><td>bytes</td><td>16777216 (16 MiB)</td><td>most bytes one fetch asks a
 *       broker for over all the partitions it reads there (one FetchMany per broker; the broker caps it at its
 *       max.fetch.bytes, and returns at least one whole batch)</td></tr>
 *   <tr><td>fetch.max.wait.ms</td><td>ms</td><td>500</td><td>how long a broker holds a fetch that finds nothing
 *       new (long poll); also bounded by poll's timeout</td></tr>
 *   <tr><td>retry.backoff.ms</td><td>ms</td><td>100</td><td>wait before a partition whose fetch failed with a
 *       retriable error is fetched again</td></tr>
 *   <tr><td>request.timeout.ms</td><td>ms</td><td>30000</td><td>deadline of one call to one broker (a fetch gets
 *       fetch.max.wait.ms on top)</td></tr>
 * </table>
 * The clock (default {@link Clock#systemUTC()}) times retry backoffs. The channel factory (default: plaintext
 * netty, messages up to 64 MiB) makes the channel to a {@code host:port}; tests pass in-process channels. A token
 * ({@link Builder#token}) goes with every call, over TLS only.
 *
 * <p>Immutable.
 */
public final class ConsumerConfig {
    public static final int DEFAULT_MAX_POLL_RECORDS = 500;
    public static final int DEFAULT_FETCH_MAX_BYTES = MIB;
    public static final int DEFAULT_FETCH_REQUEST_MAX_BYTES = 16 * MIB;
    public static final long DEFAULT_FETCH_MAX_WAIT_MS = 500;
    public static final long DEFAULT_RETRY_BACKOFF_MS = 100;
    public static final long DEFAULT_AUTO_COMMIT_INTERVAL_MS = 5_000;
    /** Largest fetch.max.bytes: leaves 1 MiB of the 64 MiB a default channel accepts for one oversized batch. */
    static final int MAX_FETCH_BYTES = 63 * MIB;
    /** Largest max.poll.records. */
    static final int MAX_POLL_RECORDS_LIMIT = 1_000_000;

    /** Where a partition without a committed offset, or whose position fell out of the log, starts. */
    public enum OffsetReset {
        /** The log start offset. */
        EARLIEST,
        /** The log end offset: only records produced from now on. */
        LATEST,
        /**
         * No position by itself: poll fails with OFFSET_OUT_OF_RANGE naming the partitions that have none, until the
         * application seeks them.
         */
        NONE
    }

    /** Which records of transactions a consumer reads. */
    public enum IsolationLevel {
        /** Every record as soon as it is stored, aborted transactions' included. */
        READ_UNCOMMITTED,
        /** Records of committed transactions only, once committed; records outside transactions as ever. */
        READ_COMMITTED
    }

    private final ConnectionSettings connection;
    private final Optional<String> group;
    private final Optional<String> groupInstanceId;
    private final String clientId;
    private final boolean enableAutoCommit;
    private final long autoCommitIntervalMs;
    private final OffsetReset autoOffsetReset;
    private final IsolationLevel isolationLevel;
    private final int maxPollRecords;
    private final int fetchMaxBytes;
    private final int fetchRequestMaxBytes;
    private final long fetchMaxWaitMs;
    private final long retryBackoffMs;

    private ConsumerConfig(Builder b) {
        this.connection = new ConnectionSettings(ConfigChecks.bootstrap(b.bootstrap), b.clock, b.channelFactory,
                Optional.ofNullable(b.token), b.requestTimeoutMs);
        if (b.group != null && b.group.isBlank()) {
            throw new IllegalArgumentException("group = \"" + b.group + "\" is not allowed; it must be a non-blank"
                    + " name, or not set for a consumer without a group");
        }
        this.group = Optional.ofNullable(b.group);
        if (b.groupInstanceId != null && (b.groupInstanceId.isBlank() || b.group == null)) {
            throw new IllegalArgumentException("group.instance.id = \"" + b.groupInstanceId + "\" is not allowed; it "
                    + "must be a non-blank name, and needs a group");
        }
        this.groupInstanceId = Optional.ofNullable(b.groupInstanceId);
        this.clientId = ConfigChecks.notNull("client.id", b.clientId);
        this.enableAutoCommit = b.enableAutoCommit;
        this.autoCommitIntervalMs = inRange("auto.commit.interval.ms", b.autoCommitIntervalMs, 1, ProducerConfig.MAX_MS,
                "ms");
        this.autoOffsetReset = ConfigChecks.notNull("auto.offset.reset", b.autoOffsetReset);
        this.isolationLevel = ConfigChecks.notNull("isolation.level", b.isolationLevel);
        this.maxPollRecords = (int) inRange("max.poll.records", b.maxPollRecords, 1, MAX_POLL_RECORDS_LIMIT,
                "records");
        this.fetchMaxBytes = (int) inRange("fetch.max.bytes", b.fetchMaxBytes, 1, MAX_FETCH_BYTES, "bytes");
        this.fetchRequestMaxBytes = (int) inRange("fetch.request.max.bytes", b.fetchRequestMaxBytes, 1,
                MAX_FETCH_BYTES, "bytes");
        this.fetchMaxWaitMs = inRange("fetch.max.wait.ms", b.fetchMaxWaitMs, 0, ProducerConfig.MAX_MS, "ms");
        this.retryBackoffMs = inRange("retry.backoff.ms", b.retryBackoffMs, 0, ProducerConfig.MAX_MS, "ms");
    }

    /** A builder with every setting at its default; {@code bootstrap} is a comma-separated host:port list. */
    public static Builder builder(String bootstrap) {
        return new Builder(bootstrap);
    }

    ConnectionSettings connection() {
        return connection;
    }

    public Optional<String> group() {
        return group;
    }

    public Optional<String> groupInstanceId() {
        return groupInstanceId;
    }

    public String clientId() {
        return clientId;
    }

    public boolean enableAutoCommit() {
        return enableAutoCommit;
    }

    public long autoCommitIntervalMs() {
        return autoCommitIntervalMs;
    }

    public OffsetReset autoOffsetReset() {
        return autoOffsetReset;
    }

    public IsolationLevel isolationLevel() {
        return isolationLevel;
    }

    public int maxPollRecords() {
        return maxPollRecords;
    }

    public int fetchMaxBytes() {
        return fetchMaxBytes;
    }

    public int fetchRequestMaxBytes() {
        return fetchRequestMaxBytes;
    }

    public long fetchMaxWaitMs() {
        return fetchMaxWaitMs;
    }

    public long retryBackoffMs() {
        return retryBackoffMs;
    }

    public long requestTimeoutMs() {
        return connection.requestTimeoutMs();
    }

    /** Builds a {@link ConsumerConfig}; not thread-safe. Values are checked by {@link #build()}. */
    public static final class Builder {
        private final String bootstrap;
        private Clock clock = Clock.systemUTC();
        private Function<String, ManagedChannel> channelFactory = BrokerChannels.PLAINTEXT;
        private BearerToken token;
        private long requestTimeoutMs = ConnectionSettings.DEFAULT_REQUEST_TIMEOUT_MS;
        private String group;
        private String groupInstanceId;
        private String clientId = "tidemark-consumer";
        private boolean enableAutoCommit = true;
        private long autoCommitIntervalMs = DEFAULT_AUTO_COMMIT_INTERVAL_MS;
        private OffsetReset autoOffsetReset = OffsetReset.LATEST;
        private IsolationLevel isolationLevel = IsolationLevel.READ_UNCOMMITTED;
        private long maxPollRecords = DEFAULT_MAX_POLL_RECORDS;
        private long fetchMaxBytes = DEFAULT_FETCH_MAX_BYTES;
        private long fetchRequestMaxBytes = DEFAULT_FETCH_REQUEST_MAX_BYTES;
        private long fetchMaxWaitMs = DEFAULT_FETCH_MAX_WAIT_MS;
        private long retryBackoffMs = DEFAULT_RETRY_BACKOFF_MS;

        private Builder(String bootstrap) {
            this.bootstrap = bootstrap;
        }

        /** The clock retry backoffs are timed on. Default: {@link Clock#systemUTC()}. */
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

        /** {@code group}: the consumer group, a non-blank name. Default: none. */
        public Builder group(String group) {
            this.group = group;
            return this;
        }

        /** {@code group.instance.id}: the static member's name, non-blank; needs a group. Default: none. */
        public Builder groupInstanceId(String groupInstanceId) {
            this.groupInstanceId = groupInstanceId;
            return this;
        }

        /** {@code client.id}: the consumer's name to the group coordinator. Default tidemark-consumer. */
        public Builder clientId(String clientId) {
            this.clientId = clientId;
            return this;
        }

        /** {@code enable.auto.commit}: whether a subscribed consumer commits on its own. Default true. */
        public Builder enableAutoCommit(boolean enableAutoCommit) {
            this.enableAutoCommit = enableAutoCommit;
            return this;
        }

        /** {@code auto.commit.interval.ms}: how often auto commit commits, ms, 1..2147483647. Default 5000. */
        public Builder autoCommitIntervalMs(long autoCommitIntervalMs) {
            this.autoCommitIntervalMs = autoCommitIntervalMs;
            return this;
        }

        /** {@code auto.offset.reset}: earliest, latest or none. Default latest. */
        public Builder autoOffsetReset(OffsetReset autoOffsetReset) {
            this.autoOffsetReset = autoOffsetReset;
            return this;
        }

        /** {@code isolation.level}: read_uncommitted or read_committed. Default read_uncommitted. */
        public Builder isolationLevel(IsolationLevel isolationLevel) {
            this.isolationLevel = isolationLevel;
            return this;
        }

        /** {@code max.poll.records}: most records per poll, 1..1000000. Default 500. */
        public Builder maxPollRecords(long maxPollRecords) {
            this.maxPollRecords = maxPollRecords;
            return this;
        }

        /** {@code fetch.max.bytes}: bytes one fetch asks a partition for, 1..66060288. Default 1 MiB. */
        public Builder fetchMaxBytes(long fetchMaxBytes) {
            this.fetchMaxBytes = fetchMaxBytes;
            return this;
        }

        /**
         * {@code fetch.request.max.bytes}: bytes one fetch asks a broker for over all its partitions, 1..66060288.
         * Default 16 MiB.
         */
        public Builder fetchRequestMaxBytes(long fetchRequestMaxBytes) {
            this.fetchRequestMaxBytes = fetchRequestMaxBytes;
            return this;
        }

        /** {@code fetch.max.wait.ms}: long-poll wait, ms, 0..2147483647. Default 500. */
        public Builder fetchMaxWaitMs(long fetchMaxWaitMs) {
            this.fetchMaxWaitMs = fetchMaxWaitMs;
            return this;
        }

        /** {@code retry.backoff.ms}: wait before refetching after a retriable error, ms. Default 100. */
        public Builder retryBackoffMs(long retryBackoffMs) {
            this.retryBackoffMs = retryBackoffMs;
            return this;
        }

        /** @throws IllegalArgumentException naming the first setting whose value is not allowed */
        public ConsumerConfig build() {
            return new ConsumerConfig(this);
        }
    }
}
