package io.tidemark.core.config;

import io.tidemark.core.auth.AuthSettings;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.tls.TlsSettings;
import io.tidemark.proto.v1.ErrorCode;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.tidemark.core.config.ConfigKey.Allowed.atLeast;
import static io.tidemark.core.config.ConfigKey.Allowed.atLeastOrUnlimited;
import static io.tidemark.core.config.ConfigKey.Type.INT;
import static io.tidemark.core.config.ConfigKey.Type.LONG;

/**
 * A broker's configuration: who it is and where it listens (from command-line flags), its cluster's name, limits and
 * intervals (the keys below), and the defaults of topic config keys ({@link TopicConfig#KEYS}). Both kinds of
 * keys may be set in the config file, a Java properties file; an unknown key or a bad value stops the broker
 * at start with the key named.
 *
 * @param clusterName   {@code cluster.name}; empty when not set
 * @param tls           the {@code tls.*} keys ({@link TlsSettings}): every listener and every connection to another
 *                      broker speaks TLS with them; empty for plain text
 * @param auth          the keys that name callers and decide what they may do ({@link AuthSettings})
 * @param topicDefaults topic config keys set in the file; every topic takes them unless it overrides them
 */
public record BrokerConfig(int nodeId, Optional<String> clusterName, Path dataDir, HostPort listen,
                           Optional<HostPort> metricsListen, int maxRequestBytes, int maxFetchBytes,
                           long maxFetchWaitMs, int maxTopicsPerRequest, int maxPartitionsPerTopic,
                           int maxOffsetsPerCommit, long retentionCheckIntervalMs, long flushCheckIntervalMs,
                           long logWriteBackBytes,
                           long logCompactionIoMaxBytesPerSecond, int logOpenFilesMax, long producerIdExpirationMs,
                           long produceBacklogMaxBytes, long fetchMemoryMaxBytes, int maxConnectionsPerIp,
                           int maxPartitionsPerCluster,
                           long quotaProduceBytesPerSecond, long quotaFetchBytesPerSecond,
                           long clockOffsetMs, long receiveTimeMaxAheadMs, RaftTuning raft, LeaderBalance leaderBalance,
                           GroupSettings groups, Optional<TlsSettings> tls, AuthSettings auth,
                           Map<String, String> topicDefaults) {
    public static final TextKey CLUSTER_NAME = new TextKey("cluster.name", Optional.empty(),
            OriginPartition::isClusterName, OriginPartition.CLUSTER_NAME_RULE,
            "The cluster's name; every broker of a cluster needs the same (a broker logs a warning when another "
                    + "answers its probes with a different one). Clients read it in ClusterStatus and tidemark status "
                    + "prints it; a mirror takes its target's name from it and checks its source's against "
                    + "--source-name, and tidemark failover names the cluster it moves a group to. None by default, "
                    + "so two clusters never share a name by accident: a mirror into a cluster without one needs "
                    + "--target-name, and a source without one is not checked.");
    /** Room in a Produce request for its fields besides the batch (topic name, partition, framing). */
    public static final int REQUEST_ROOM_BYTES = 1024;
    public static final ConfigKey MAX_REQUEST_BYTES = new ConfigKey("max.request.bytes", INT, 16L << 20, "bytes",
            atLeast(1024, 1L << 30),
            "Largest request the broker accepts (the gRPC inbound message limit). Every topic's max.batch.bytes "
                    + "must stay below it, with room for the request's other fields.");
    public static final ConfigKey MAX_FETCH_BYTES = new ConfigKey("max.fetch.bytes", INT, 16L << 20, "bytes",
            atLeast(1024, 1L << 30),
            "Largest max_bytes a Fetch may ask for; a larger one is refused with INVALID_REQUEST. A fetch still "
                    + "returns one whole batch when the first batch is larger.");
    public static final ConfigKey MAX_FETCH_WAIT_MS = new ConfigKey("max.fetch.wait.ms", LONG, 30_000, "ms",
            atLeast(0, 600_000), "Longest max_wait_ms a Fetch may ask for (long poll).");
    public static final ConfigKey MAX_TOPICS_PER_REQUEST = new ConfigKey("max.topics.per.request", INT, 1000,
            "topics", atLeast(1, 1_000_000), "Most topics one Metadata or DescribeTopics request may name.");
    public static final ConfigKey MAX_PARTITIONS_PER_TOPIC = new ConfigKey("max.partitions.per.topic", INT, 10_000,
            "partitions", atLeast(1, 1_000_000), "Most partitions a topic may be created with.");
    public static final ConfigKey MAX_CONNECTIONS_PER_IP = new ConfigKey("max.connections.per.ip", INT, 1000,
            "connections", atLeast(1, 1_000_000),
            "Most connections one client address may hold open to the client listener (Kafka's max.connections.per.ip); "
                    + "one beyond it is closed as it is accepted, counted in connections.refused and logged. The "
                    + "brokers' own connections to each other count as any client's.");
    public static final ConfigKey MAX_PARTITIONS_PER_CLUSTER = new ConfigKey("max.partitions.per.cluster", INT,
            100_000, "partitions", atLeast(1, 10_000_000),
            "Most partitions the cluster's topics may have together; a create beyond it is refused with "
                    + "INVALID_REQUEST naming the count. Checked by the broker taking the create, against the topics "
                    + "it knows: two creates at once on different brokers may pass it by the smaller one.");
    public static final ConfigKey QUOTA_PRODUCE_BYTES_PER_SECOND = new ConfigKey("quota.produce.bytes.per.second",
            LONG, -1, "bytes", atLeastOrUnlimited(1),
            "Bytes a second each principal may produce through this broker, unless tidemark quotas gives it its own "
                    + "(Kafka's producer_byte_rate). A principal above it gets its answers late, by the time that "
                    + "brings it back within the rate, and told so in throttle_time_ms. Brokers are never held.");
    public static final ConfigKey QUOTA_FETCH_BYTES_PER_SECOND = new ConfigKey("quota.fetch.bytes.per.second",
            LONG, -1, "bytes", atLeastOrUnlimited(1),
            "Bytes a second each principal may fetch through this broker, as quota.produce.bytes.per.second "
                    + "(Kafka's consumer_byte_rate).");
    public static final ConfigKey MAX_OFFSETS_PER_COMMIT = new ConfigKey("max.offsets.per.commit", INT, 10_000,
            "offsets", atLeast(1, 1_000_000), "Most partitions one CommitOffsets request may carry.");
    public static final ConfigKey RETENTION_CHECK_INTERVAL_MS = new ConfigKey("retention.check.interval.ms", LONG,
            300_000, "ms", atLeast(10, Long.MAX_VALUE),
            "How often retention runs over every partition (Kafka's log.retention.check.interval.ms).");
    public static final ConfigKey LOG_COMPACTION_IO_MAX_BYTES_PER_SECOND = new ConfigKey(
            "log.compaction.io.max.bytes.per.second", LONG, 20L << 20, "bytes", atLeastOrUnlimited(1),
            "Most bytes log compaction reads and writes a second, over every compacted partition of the broker "
                    + "together, so it never takes the disk from appends and fetches. Compaction passes run every "
                    + "retention.check.interval.ms, on one of the broker's two maintenance threads (the other keeps "
                    + "flushes and retention going), over topics whose cleanup.policy includes compact.");
    public static final ConfigKey FLUSH_CHECK_INTERVAL_MS = new ConfigKey("flush.check.interval.ms", LONG, 1000, "ms",
            atLeast(10, Long.MAX_VALUE), "How often partitions are checked for a due fsync (flush.ms) and for a "
                    + "write-back (log.writeback.bytes).");
    public static final ConfigKey LOG_WRITEBACK_BYTES = new ConfigKey("log.writeback.bytes", LONG, 1L << 20,
            "bytes", atLeastOrUnlimited(1),
            "When a partition replica's active segment took this many bytes since its last write-back, the "
                    + "broker fsyncs them at its next flush.check.interval.ms, off the append path and without "
                    + "moving the recovery point (it is not a flush: durability comes from the Raft log), so the page "
                    + "cache never holds a large backlog of segment writes. Linux writes dirty pages back in bulk "
                    + "once they are 30 s old, and the Raft log's fsync of every produce on the same disk waits "
                    + "behind that bulk: unbounded, a 3-broker cluster on one disk saw fsyncs of 0.6-1.4 s and "
                    + "leaders losing their followers' heartbeats (docs/benchmarks.md). -1 leaves writing back to "
                    + "the kernel. RocksDB's bytes_per_sync does the same.");
    public static final ConfigKey LOG_OPEN_FILES_MAX = new ConfigKey("log.open.files.max", INT, 12_000, "files",
            atLeast(1, 1_000_000),
            "Most segment files the broker's process holds open at once, whatever its number of partitions and "
                    + "segments: a segment's log file is opened when it is read or appended to, and when more are "
                    + "needed the least recently used one that no read or append is using is closed (the active "
                    + "segment too: it is fsynced first when written since its last fsync, and its next append "
                    + "opens it again). Each open segment also maps up to its 3 index files, so 3 times this plus a "
                    + "few thousand must stay below vm.max_map_count (65530 by default). 12000 holds the active "
                    + "segments of 10,000 partition replicas with room for reads of older ones, and leaves 8000 of a "
                    + "20,000 ulimit -n for sockets, Raft logs and jars; the broker warns at start when this does not "
                    + "fit the process's limits.");
    public static final ConfigKey PRODUCER_ID_EXPIRATION_MS = new ConfigKey("producer.id.expiration.ms", LONG,
            86_400_000, "ms", atLeast(1, Long.MAX_VALUE),
            "How long a partition remembers an idempotent producer after its last batch, measured on ReceiveTime: "
                    + "a producer silent for longer is forgotten, and its next batch is taken as a new producer's "
                    + "(a resend of a batch stored before that is then stored again). Kafka's default, a day. The "
                    + "leader of each partition group puts its value into the group's log, so every replica forgets "
                    + "a producer at the same batch; a new leader with another value changes it from there on.");
    public static final ConfigKey PRODUCE_BACKLOG_MAX_BYTES = new ConfigKey("produce.backlog.max.bytes", LONG,
            256L << 20, "bytes", atLeast(1L << 20, 1L << 40),
            "Most bytes of produced batches a broker holds for its partition groups, from when it takes a batch "
                    + "until the batch is stored or refused (waiting for a Raft entry, in one, or through a "
                    + "handover). A batch beyond it is refused NOT_AVAILABLE at once, which producers and the mirror "
                    + "retry after their backoff: partitions that cannot keep up (a slow disk, a group without a "
                    + "majority) slow their producers down instead of filling the heap. Metric: "
                    + "produce.backlog.bytes.");
    public static final ConfigKey FETCH_MEMORY_MAX_BYTES = new ConfigKey("fetch.memory.max.bytes", LONG,
            256L << 20, "bytes", atLeast(1L << 20, 1L << 40),
            "Most bytes of fetch answers a broker holds, from the read of a partition until the answer left for the "
                    + "client (gRPC keeps an answer the client does not read in its buffers). A fetch reads at most "
                    + "the room left (still one whole batch when the first batch is larger), and is refused "
                    + "NOT_AVAILABLE, which consumers retry after their backoff, when none is left: many large "
                    + "fetches at once, or clients that fetch and never read, cannot take the broker's memory. "
                    + "Metric: fetch.memory.bytes.");

    public static final ConfigKey CLOCK_OFFSET_MS = new ConfigKey("clock.offset.ms", LONG, 0, "ms",
            atLeast(-86_400_000, 86_400_000),
            "For tests only: shifts this broker's clock by this much, to run brokers whose clocks disagree "
                    + "(ReceiveTime stays monotonic through leader changes between them). Leave it at 0.");

    public static final ConfigKey RECEIVE_TIME_MAX_AHEAD_MS = new ConfigKey("receive.time.max.ahead.ms", LONG,
            60_000, "ms", atLeast(1_000, 86_400_000),
            "Furthest ahead of the cluster's clock (the median of the brokers' clocks, from their probes) a leader "
                    + "stamps ReceiveTime: a broker whose clock jumps ahead stamps the median plus this instead, logs "
                    + "an error and shows how far ahead it is in clock.ahead-of-cluster.ms, so it cannot pin its "
                    + "partitions' ReceiveTime, and their retention, in the future. A broker with no other to compare "
                    + "with (a cluster of one) stamps by its own clock.");
    public static final ConfigKey RAFT_ELECTION_TIMEOUT_MIN_MS = new ConfigKey("raft.election.timeout.min.ms", LONG,
            200, "ms", atLeast(50, 60_000),
            "A follower that hears nothing from its leader for a random time between this and the max starts an "
                    + "election; Ratis sleeps one such random time between checks, so a dead leader is noticed 1 to "
                    + "2 timeouts after its last heartbeat. 200-400 ms failed over in p50 0.47 s, p99 0.67 s after "
                    + "a SIGKILL (20 kills; 300-600 ms: p50 0.84 s, p99 0.88-1.32 s; 300-350 ms: p99 1.32 s, split "
                    + "votes). Under a load saturating 2 cores it started more elections than 300-600 ms (97 against "
                    + "36; 150-300 ms: about 200) with the same throughput and fixed-rate latency "
                    + "(docs/benchmarks.md). Heartbeats go at half the min.");
    public static final ConfigKey RAFT_ELECTION_TIMEOUT_MAX_MS = new ConfigKey("raft.election.timeout.max.ms", LONG,
            400, "ms", atLeast(100, 120_000), "See raft.election.timeout.min.ms; must be above it.");
    public static final ConfigKey RAFT_LOG_SEGMENT_BYTES = new ConfigKey("raft.log.segment.bytes", LONG, 32L << 20,
            "bytes", atLeast(1 << 20, 1L << 30), "Size of each Raft log segment file (Ratis' default).");
    public static final ConfigKey RAFT_LOG_WRITE_BUFFER_BYTES = new ConfigKey("raft.log.write.buffer.bytes", LONG,
            2L << 20, "bytes", atLeast(64 << 10, 64L << 20),
            "Direct-memory write buffer of each partition group replica's Raft log; the largest Raft entry (group "
                    + "commit's, or one batch) must fit in it. 2 MiB holds a batch of the 1 MiB max.batch.bytes "
                    + "default with its mirror provenance; a broker holds a few groups, not one per partition, so "
                    + "Ratis' 8 MiB would also fit, but 4 MiB gained nothing measured.");
    public static final ConfigKey RAFT_SNAPSHOT_INTERVAL_ENTRIES = new ConfigKey("raft.snapshot.interval.entries",
            LONG, 10_000, "entries", atLeast(100, Long.MAX_VALUE),
            "Every Raft group takes a snapshot every this many Raft entries (a partition group fsyncs its "
                    + "partitions' logs, the metadata group writes its whole state), so Ratis can purge the group's "
                    + "log behind what every member has: this bounds the Raft logs. Ratis reads one threshold for "
                    + "all the groups of a broker.");
    public static final ConfigKey RAFT_LOG_SYNC = new ConfigKey("raft.log.sync", INT, 1, "0 or 1",
            atLeast(0, 1),
            "1: every replica fsyncs a Raft entry before acknowledging it (a produce survives the loss of all "
                    + "replicas' page caches). 0: Ratis' unsafe flush, acknowledging before the fsync (faster; a "
                    + "produce survives any minority of broker crashes, not a power loss of a majority).");
    public static final ConfigKey RAFT_GROUPS_PER_REPLICA_SET = new ConfigKey("raft.groups.per.replica.set", INT, 1,
            "groups", atLeast(1, 64),
            "How many partition groups (Raft groups) the partitions of one replica list spread over. A group's "
                    + "leader leads all of its partitions and its produce requests share its entries, one fsync and "
                    + "one round per entry: one group per replica list makes the fewest, largest entries. Placement "
                    + "gives each broker the first place in as many replica lists, so leadership spreads over the "
                    + "brokers with one. Read by the broker that creates a topic or moves a partition.");

    public static final ConfigKey LEADER_BALANCE_ENABLED = new ConfigKey("leader.balance.enabled", INT, 1, "0 or 1",
            atLeast(0, 1),
            "1: every interval, a broker hands each partition group it leads back to the group's preferred "
                    + "replica (the first of its replica list) once that replica is up and caught up, so leaders spread "
                    + "evenly again after a failover; a tidemark leader transfer away from the preferred replica is "
                    + "undone too, one interval later. 0: leadership stays where elections and transfers put it.");
    public static final ConfigKey LEADER_BALANCE_INTERVAL_MS = new ConfigKey("leader.balance.interval.ms", LONG,
            5000, "ms", atLeast(100, 3_600_000),
            "How often a broker looks for partition groups to hand back, and how long it must have led a group "
                    + "before it does, so leadership does not bounce right after an election. 5 s: a few "
                    + "election timeouts, and a restarted broker gets its groups back within seconds.");
    public static final ConfigKey LEADER_BALANCE_MAX_TRANSFERS_PER_INTERVAL = new ConfigKey(
            "leader.balance.max.transfers.per.interval", INT, 2, "transfers", atLeast(1, 10_000),
            "Most leadership transfers a broker starts in any window of leader.balance.interval.ms. Each one "
                    + "pauses produce to its group's partitions for a moment (the target catching up and "
                    + "an election, about 0.1-0.3 s), so a small number keeps a restart from stalling many "
                    + "groups at once.");

    public static final ConfigKey GROUP_SESSION_TIMEOUT_MS = new ConfigKey("group.consumer.session.timeout.ms", LONG,
            45_000, "ms", atLeast(1_000, 3_600_000),
            "A member of a consumer group that has not heartbeated for this long is removed and its partitions go to "
                    + "the others; a static member (group.instance.id) that left keeps its partitions this long. "
                    + "Kafka's default.");
    public static final ConfigKey GROUP_HEARTBEAT_INTERVAL_MS = new ConfigKey("group.consumer.heartbeat.interval.ms",
            LONG, 5_000, "ms", atLeast(100, 600_000),
            "How often members of consumer groups heartbeat (the coordinator tells them); a member also heartbeats "
                    + "at once when it has released partitions, and within 250 ms while it has not reached its "
                    + "assignment. Must be below group.consumer.session.timeout.ms. Kafka's default.");
    public static final ConfigKey GROUP_MAX_SIZE = new ConfigKey("group.consumer.max.size", INT, 1_000, "members",
            atLeast(1, 100_000),
            "Most members a consumer group may have; a join beyond it is refused with INVALID_REQUEST, so one "
                    + "misbehaving application cannot grow a coordinator's memory without bound.");
    public static final ConfigKey GROUP_MAX_COUNT = new ConfigKey("group.max.count", INT, 100_000, "groups",
            atLeast(1, 10_000_000),
            "Most consumer groups the cluster keeps (with members or committed offsets); a heartbeat or offset commit "
                    + "that would start one more is refused with INVALID_REQUEST naming the count, so clients "
                    + "inventing group names cannot grow the coordinator's memory and __group_offsets without bound. "
                    + "Groups without members leave by offsets.retention.minutes or tidemark groups delete.");
    public static final ConfigKey OFFSETS_RETENTION_MINUTES = new ConfigKey("offsets.retention.minutes", LONG,
            10_080, "min", atLeast(1, 5_256_000),
            "A consumer group without members whose last commit and last membership change are older than this "
                    + "is deleted (its offsets and stored membership), checked every retention.check.interval.ms "
                    + "by the coordinator. 7 days, Kafka's default.");

    public static final List<ConfigKey> KEYS = List.of(MAX_REQUEST_BYTES, MAX_FETCH_BYTES, MAX_FETCH_WAIT_MS,
            MAX_TOPICS_PER_REQUEST, MAX_PARTITIONS_PER_TOPIC, MAX_CONNECTIONS_PER_IP, MAX_PARTITIONS_PER_CLUSTER,
            QUOTA_PRODUCE_BYTES_PER_SECOND, QUOTA_FETCH_BYTES_PER_SECOND, MAX_OFFSETS_PER_COMMIT,
            RETENTION_CHECK_INTERVAL_MS, FLUSH_CHECK_INTERVAL_MS, LOG_WRITEBACK_BYTES, LOG_COMPACTION_IO_MAX_BYTES_PER_SECOND,
            LOG_OPEN_FILES_MAX,
            PRODUCER_ID_EXPIRATION_MS, PRODUCE_BACKLOG_MAX_BYTES, FETCH_MEMORY_MAX_BYTES, CLOCK_OFFSET_MS,
            RECEIVE_TIME_MAX_AHEAD_MS,
            RAFT_ELECTION_TIMEOUT_MIN_MS,
            RAFT_ELECTION_TIMEOUT_MAX_MS, RAFT_LOG_SEGMENT_BYTES, RAFT_LOG_WRITE_BUFFER_BYTES,
            RAFT_SNAPSHOT_INTERVAL_ENTRIES, RAFT_LOG_SYNC, RAFT_GROUPS_PER_REPLICA_SET, LEADER_BALANCE_ENABLED,
            LEADER_BALANCE_INTERVAL_MS, LEADER_BALANCE_MAX_TRANSFERS_PER_INTERVAL, GROUP_SESSION_TIMEOUT_MS,
            GROUP_HEARTBEAT_INTERVAL_MS, GROUP_MAX_SIZE, GROUP_MAX_COUNT, OFFSETS_RETENTION_MINUTES);

    /** Every broker key, {@link #CLUSTER_NAME} and {@link #KEYS}: what docs/configuration.md lists. */
    public static final List<DeclaredKey> ALL_KEYS = Stream.<DeclaredKey>concat(Stream.of(CLUSTER_NAME),
            KEYS.stream()).toList();

    /** The Raft keys, typed (used by the replication module). */
    public record RaftTuning(long electionTimeoutMinMs, long electionTimeoutMaxMs, long logSegmentBytes,
                             long logWriteBufferBytes, long snapshotIntervalEntries, boolean logSync,
                             int groupsPerReplicaSet) {
        public RaftTuning {
            if (electionTimeoutMaxMs <= electionTimeoutMinMs) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIG, "raft.election.timeout.max.ms "
                        + electionTimeoutMaxMs + " must be above raft.election.timeout.min.ms " + electionTimeoutMinMs);
            }
        }
    }

    /** The leader balancing keys, typed (used by the replication module). */
    public record LeaderBalance(boolean enabled, long intervalMs, int maxTransfersPerInterval) {
    }

    /** The consumer group keys, typed. */
    public record GroupSettings(long sessionTimeoutMs, long heartbeatIntervalMs, int maxSize, int maxCount,
                                long offsetsRetentionMs) {
        public GroupSettings {
            if (heartbeatIntervalMs >= sessionTimeoutMs) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIG, "group.consumer.heartbeat.interval.ms "
                        + heartbeatIntervalMs + " must be below group.consumer.session.timeout.ms " + sessionTimeoutMs);
            }
        }
    }

    public BrokerConfig {
        if (nodeId < 0) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "invalid node id " + nodeId
                    + "; allowed: an integer >= 0");
        }
        Objects.requireNonNull(clusterName, "clusterName").ifPresent(CLUSTER_NAME::validate);
        Objects.requireNonNull(tls, "tls").filter(t -> t.certFile().isEmpty()).ifPresent(t -> {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "a broker's TLS needs its own certificate: set "
                    + TlsSettings.CERT_FILE + " and " + TlsSettings.KEY_FILE + " beside " + TlsSettings.CA_FILE);
        });
        topicDefaults = Map.copyOf(topicDefaults);
        TopicConfig defaults = TopicConfig.parse(topicDefaults);
        if (defaults.maxBatchBytes() > maxRequestBytes - REQUEST_ROOM_BYTES) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "max.batch.bytes " + defaults.maxBatchBytes()
                    + " does not fit in max.request.bytes " + maxRequestBytes + " with " + REQUEST_ROOM_BYTES
                    + " bytes for the request");
        }
    }

    /**
     * A topic's config: its {@code overrides} over this broker's topic defaults.
     *
     * @throws io.tidemark.proto.error.TidemarkException INVALID_CONFIG naming a key that is unknown or a value that is
     *                                                   not allowed
     */
    public TopicConfig topicConfig(Map<String, String> overrides) {
        Map<String, String> merged = new HashMap<>(topicDefaults);
        merged.putAll(overrides);
        return TopicConfig.parse(merged);
    }

    /** The largest batch a Produce request to this broker can carry, besides the request's other fields. */
    public int largestBatchBytes() {
        return maxRequestBytes - REQUEST_ROOM_BYTES;
    }

    /**
     * Builds the configuration from flags and the config file's keys.
     *
     * @param file    the config file's {@code key -> value} pairs (empty without a file)
     * @param fileName where they came from, for error messages
     */
    public static BrokerConfig of(int nodeId, Path dataDir, HostPort listen, Optional<HostPort> metricsListen,
                                  Map<String, String> file, String fileName) {
        Map<String, Long> values = new HashMap<>();
        Map<String, String> topicDefaults = new TreeMap<>();
        Optional<String> clusterName = CLUSTER_NAME.defaultValue();
        List<String> topicKeys = TopicConfig.KEYS.stream().map(DeclaredKey::name).toList();
        for (Map.Entry<String, String> entry : new TreeMap<>(file).entrySet()) {
            Optional<ConfigKey> key = KEYS.stream().filter(k -> k.name().equals(entry.getKey())).findFirst();
            if (key.isPresent()) {
                values.put(entry.getKey(), key.get().parse(entry.getValue()));
            } else if (entry.getKey().equals(CLUSTER_NAME.name())) {
                clusterName = Optional.of(CLUSTER_NAME.validate(entry.getValue()));
            } else if (topicKeys.contains(entry.getKey())) {
                topicDefaults.put(entry.getKey(), entry.getValue());
            } else if (!TlsSettings.KEYS.contains(entry.getKey()) && !AuthSettings.KEYS.contains(entry.getKey())) {
                TreeSet<String> known = new TreeSet<>(topicKeys);
                ALL_KEYS.forEach(k -> known.add(k.name()));
                known.addAll(TlsSettings.KEYS);
                known.addAll(AuthSettings.KEYS);
                throw new TidemarkException(ErrorCode.INVALID_CONFIG, "unknown key '" + entry.getKey() + "' in "
                        + fileName + "; known keys: " + String.join(", ", known));
            }
        }
        Optional<TlsSettings> tls = TlsSettings.fromProperties(file, fileName);
        return new BrokerConfig(nodeId, clusterName, dataDir, listen, metricsListen,
                (int) value(values, MAX_REQUEST_BYTES), (int) value(values, MAX_FETCH_BYTES),
                value(values, MAX_FETCH_WAIT_MS), (int) value(values, MAX_TOPICS_PER_REQUEST),
                (int) value(values, MAX_PARTITIONS_PER_TOPIC), (int) value(values, MAX_OFFSETS_PER_COMMIT),
                value(values, RETENTION_CHECK_INTERVAL_MS), value(values, FLUSH_CHECK_INTERVAL_MS),
                value(values, LOG_WRITEBACK_BYTES),
                value(values, LOG_COMPACTION_IO_MAX_BYTES_PER_SECOND), (int) value(values, LOG_OPEN_FILES_MAX),
                value(values, PRODUCER_ID_EXPIRATION_MS), value(values, PRODUCE_BACKLOG_MAX_BYTES),
                value(values, FETCH_MEMORY_MAX_BYTES),
                (int) value(values, MAX_CONNECTIONS_PER_IP), (int) value(values, MAX_PARTITIONS_PER_CLUSTER),
                value(values, QUOTA_PRODUCE_BYTES_PER_SECOND), value(values, QUOTA_FETCH_BYTES_PER_SECOND),
                value(values, CLOCK_OFFSET_MS), value(values, RECEIVE_TIME_MAX_AHEAD_MS),
                new RaftTuning(value(values, RAFT_ELECTION_TIMEOUT_MIN_MS), value(values, RAFT_ELECTION_TIMEOUT_MAX_MS),
                        value(values, RAFT_LOG_SEGMENT_BYTES), value(values, RAFT_LOG_WRITE_BUFFER_BYTES),
                        value(values, RAFT_SNAPSHOT_INTERVAL_ENTRIES), value(values, RAFT_LOG_SYNC) == 1,
                        (int) value(values, RAFT_GROUPS_PER_REPLICA_SET)),
                new LeaderBalance(value(values, LEADER_BALANCE_ENABLED) == 1, value(values, LEADER_BALANCE_INTERVAL_MS),
                        (int) value(values, LEADER_BALANCE_MAX_TRANSFERS_PER_INTERVAL)),
                new GroupSettings(value(values, GROUP_SESSION_TIMEOUT_MS), value(values, GROUP_HEARTBEAT_INTERVAL_MS),
                        (int) value(values, GROUP_MAX_SIZE), (int) value(values, GROUP_MAX_COUNT),
                        TimeUnit.MINUTES.toMillis(value(values, OFFSETS_RETENTION_MINUTES))),
                tls, AuthSettings.fromProperties(file, fileName, tls.isPresent()), topicDefaults);
    }

    private static long value(Map<String, Long> values, ConfigKey key) {
        return values.getOrDefault(key.name(), key.defaultValue());
    }

    /** Reads a config file's {@code key=value} pairs (Java properties syntax). */
    public static Map<String, String> readFile(Path file) throws IOException {
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
        }
        Map<String, String> values = new TreeMap<>();
        properties.stringPropertyNames().forEach(k -> values.put(k, properties.getProperty(k).trim()));
        return values;
    }
}
