package io.tidemark.core.config;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.ErrorCode;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static io.tidemark.core.config.ConfigKey.Allowed.atLeast;
import static io.tidemark.core.config.ConfigKey.Allowed.atLeastOrUnlimited;
import static io.tidemark.core.config.ConfigKey.Type.INT;
import static io.tidemark.core.config.ConfigKey.Type.LONG;

/**
 * A topic's configuration, typed. Every key is declared once below with its type, default, unit, allowed
 * values and doc; {@link #parse} refuses unknown keys and bad values, and the record's constructor checks the
 * same rules for values set in code. Limits that allow it take -1 ({@link ConfigKey#UNLIMITED}) for
 * unlimited; {@link #limit} turns that into {@link Long#MAX_VALUE} for arithmetic.
 *
 * <p>The table in docs/configuration.md is generated from {@link #KEYS} ({@link ConfigDocs}).
 */
public record TopicConfig(int segmentBytes, long segmentMs, int segmentIndexBytes, int indexIntervalBytes,
                          long retentionMs, long retentionBytes, long flushMessages, long flushMs,
                          long sendTimeAfterMaxMs, long sendTimeBeforeMaxMs, int maxBatchBytes,
                          CleanupPolicy cleanupPolicy, long deleteRetentionMs) {
    private static final long DAY_MS = 24L * 60 * 60 * 1000;

    public static final ConfigKey SEGMENT_BYTES = new ConfigKey("segment.bytes", INT, 1L << 30, "bytes",
            atLeast(RecordBatchFormat.HEADER_SIZE_BYTES, Integer.MAX_VALUE),
            "Roll to a new segment before an append would make the active one larger than this. A batch larger "
                    + "than this still goes into a segment of its own. Positions in a segment are int32, hence the maximum.");
    public static final ConfigKey SEGMENT_MS = new ConfigKey("segment.ms", LONG, 7 * DAY_MS, "ms",
            atLeast(1, Long.MAX_VALUE),
            "Roll to a new segment when a batch's ReceiveTime is this much later than the active segment's first "
                    + "ReceiveTime, so a quiet topic does not keep one ever-active segment that retention cannot delete. "
                    + "Measured on ReceiveTime only: lagged or future SendTimes never make small segments.");
    public static final ConfigKey SEGMENT_INDEX_BYTES = new ConfigKey("segment.index.bytes", INT, 10L << 20, "bytes",
            atLeast(12, Integer.MAX_VALUE),
            "Most bytes each index file of the active segment is preallocated (sparse) and memory-mapped to; it "
                    + "gets no more than segment.bytes can fill at one entry per index.interval.bytes (with the "
                    + "defaults 2 MiB of offsets and 3 MiB of each time index). The segment rolls when one is full, "
                    + "and the files are trimmed to their entries on roll.");
    public static final ConfigKey INDEX_INTERVAL_BYTES = new ConfigKey("index.interval.bytes", INT, 4096, "bytes",
            atLeast(0, Integer.MAX_VALUE),
            "Add one entry to each index (offset, ReceiveTime, SendTime) once this many bytes of batches were "
                    + "appended since the last entry. Smaller: denser indexes, shorter scans, larger files.");
    public static final ConfigKey RETENTION_MS = new ConfigKey("retention.ms", LONG, 7 * DAY_MS, "ms",
            atLeastOrUnlimited(0),
            "Delete a segment, oldest first, once its largest ReceiveTime is older than this. Never the active "
                    + "segment, never by SendTime.");
    public static final ConfigKey RETENTION_BYTES = new ConfigKey("retention.bytes", LONG, ConfigKey.UNLIMITED,
            "bytes", atLeastOrUnlimited(0),
            "Delete segments, oldest first, while the partition would still hold at least this many bytes "
                    + "without them. Never the active segment.");
    public static final ConfigKey FLUSH_MESSAGES = new ConfigKey("flush.messages", LONG, ConfigKey.UNLIMITED,
            "messages", atLeastOrUnlimited(1),
            "fsync the active segment after this many records. Unlimited by default: like Kafka, durability "
                    + "comes from replication and the OS writes pages back; segments are fsynced on roll and on close.");
    public static final ConfigKey FLUSH_MS = new ConfigKey("flush.ms", LONG, ConfigKey.UNLIMITED, "ms",
            atLeastOrUnlimited(0),
            "fsync the active segment when this long passed since the last fsync (checked on append and by the "
                    + "broker's periodic flush). Unlimited by default, as flush.messages.");
    public static final ConfigKey SEND_TIME_AFTER_MAX_MS = new ConfigKey("send.time.after.max.ms", LONG, 3_600_000,
            "ms", atLeastOrUnlimited(0),
            "Reject a batch holding a SendTime later than its ReceiveTime plus this (a producer clock far in the "
                    + "future). The same default as Kafka's message.timestamp.after.max.ms. A mirror's copy is held "
                    + "to its origin ReceiveTime (provenance) instead, as the source took the record.");
    public static final ConfigKey SEND_TIME_BEFORE_MAX_MS = new ConfigKey("send.time.before.max.ms", LONG,
            ConfigKey.UNLIMITED, "ms", atLeastOrUnlimited(0),
            "Reject a batch holding a SendTime earlier than its ReceiveTime minus this. Unlimited by default: "
                    + "mirrors and replays legitimately carry old SendTimes. A mirror's copy is held to its origin "
                    + "ReceiveTime (provenance) instead, so a day-old backlog copied now is not refused.");
    public static final ConfigKey MAX_BATCH_BYTES = new ConfigKey("max.batch.bytes", INT, 1L << 20, "bytes",
            atLeast(RecordBatchFormat.HEADER_SIZE_BYTES, Integer.MAX_VALUE),
            "Largest batch an append accepts, header included; a larger one is refused with RECORD_TOO_LARGE. In a "
                    + "cluster a batch travels as one Raft entry, which must fit in the Raft log's write buffer "
                    + "(raft.log.write.buffer.bytes less 4161 bytes): 1 MiB (as Kafka's max.message.bytes) leaves "
                    + "room under the 2 MiB default and is four times the producer's batch.size. A mirror's batch "
                    + "may exceed it by the bytes of its tidemark.origin headers (its records as the source held "
                    + "them are held to it), but never what a Raft entry holds.");
    public static final TextKey CLEANUP_POLICY = new TextKey("cleanup.policy",
            Optional.of(CleanupPolicy.DELETE.text()), v -> CleanupPolicy.parse(v).isPresent(), CleanupPolicy.ALLOWED,
            "delete: retention.ms and retention.bytes delete whole segments. compact: the cleaner keeps the latest "
                    + "record of each key in the segments before the active one and removes the older ones (records "
                    + "keep their offsets, so offsets have gaps; a record without a key is kept); a record with a null "
                    + "value (a tombstone) is removed too, delete.retention.ms after its ReceiveTime. compact,delete: "
                    + "both. A segment whose records all go stays, empty, with a marker of where it ends, so offsets "
                    + "and lookups by time still hold.");
    public static final ConfigKey DELETE_RETENTION_MS = new ConfigKey("delete.retention.ms", LONG, DAY_MS, "ms",
            atLeast(0, Long.MAX_VALUE),
            "How long a compacted topic keeps a tombstone (a record with a null value that is the latest of its key) "
                    + "after its ReceiveTime, so a consumer reading the topic from the start within this time sees "
                    + "the delete. The same default as Kafka's.");

    /** The keys a topic takes: the numeric ones ({@link ConfigKey}) and {@link #CLEANUP_POLICY}. */
    public static final List<DeclaredKey> KEYS = List.of(SEGMENT_BYTES, SEGMENT_MS, SEGMENT_INDEX_BYTES,
            INDEX_INTERVAL_BYTES, RETENTION_MS, RETENTION_BYTES, FLUSH_MESSAGES, FLUSH_MS, SEND_TIME_AFTER_MAX_MS,
            SEND_TIME_BEFORE_MAX_MS, MAX_BATCH_BYTES, CLEANUP_POLICY, DELETE_RETENTION_MS);

    public TopicConfig {
        SEGMENT_BYTES.validate(segmentBytes);
        SEGMENT_MS.validate(segmentMs);
        SEGMENT_INDEX_BYTES.validate(segmentIndexBytes);
        INDEX_INTERVAL_BYTES.validate(indexIntervalBytes);
        RETENTION_MS.validate(retentionMs);
        RETENTION_BYTES.validate(retentionBytes);
        FLUSH_MESSAGES.validate(flushMessages);
        FLUSH_MS.validate(flushMs);
        SEND_TIME_AFTER_MAX_MS.validate(sendTimeAfterMaxMs);
        SEND_TIME_BEFORE_MAX_MS.validate(sendTimeBeforeMaxMs);
        MAX_BATCH_BYTES.validate(maxBatchBytes);
        Objects.requireNonNull(cleanupPolicy, "cleanupPolicy");
        DELETE_RETENTION_MS.validate(deleteRetentionMs);
    }

    public static TopicConfig defaults() {
        return parse(Map.of());
    }

    /**
     * Parses {@code name -> value} pairs; a key not given takes its default.
     *
     * @throws TidemarkException {@link ErrorCode#INVALID_CONFIG} naming an unknown key, or a bad value with what
     *         is allowed
     */
    public static TopicConfig parse(Map<String, String> values) {
        Map<String, DeclaredKey> byName = KEYS.stream().collect(Collectors.toMap(DeclaredKey::name, k -> k));
        for (String name : new TreeMap<>(values).keySet()) {
            if (!byName.containsKey(name)) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIG, "unknown topic config key '" + name
                        + "'; known keys: " + String.join(", ", byName.keySet().stream().sorted().toList()));
            }
        }
        Map<ConfigKey, Long> v = new HashMap<>();
        for (DeclaredKey declared : KEYS) {
            if (declared instanceof ConfigKey key) {
                String text = values.get(key.name());
                v.put(key, text == null ? key.defaultValue() : key.parse(text));
            }
        }
        String policy = CLEANUP_POLICY.validate(values.getOrDefault(CLEANUP_POLICY.name(),
                CLEANUP_POLICY.defaultValue().orElseThrow()));
        return new TopicConfig(v.get(SEGMENT_BYTES).intValue(), v.get(SEGMENT_MS), v.get(SEGMENT_INDEX_BYTES).intValue(),
                v.get(INDEX_INTERVAL_BYTES).intValue(), v.get(RETENTION_MS), v.get(RETENTION_BYTES),
                v.get(FLUSH_MESSAGES), v.get(FLUSH_MS), v.get(SEND_TIME_AFTER_MAX_MS), v.get(SEND_TIME_BEFORE_MAX_MS),
                v.get(MAX_BATCH_BYTES).intValue(), CleanupPolicy.parse(policy).orElseThrow(),
                v.get(DELETE_RETENTION_MS));
    }

    /** A copy with {@code name} set to {@code value}, validated like {@link #parse}. */
    public TopicConfig with(String name, String value) {
        Map<String, String> values = new HashMap<>(toMap());
        values.put(name, value);
        return parse(values);
    }

    /** Every key with its value, as text. */
    public Map<String, String> toMap() {
        long[] v = {segmentBytes, segmentMs, segmentIndexBytes, indexIntervalBytes, retentionMs, retentionBytes,
                flushMessages, flushMs, sendTimeAfterMaxMs, sendTimeBeforeMaxMs, maxBatchBytes};
        Map<String, String> map = new TreeMap<>();
        for (int i = 0; i < v.length; i++) {
            map.put(KEYS.get(i).name(), Long.toString(v[i]));
        }
        map.put(CLEANUP_POLICY.name(), cleanupPolicy.text());
        map.put(DELETE_RETENTION_MS.name(), Long.toString(deleteRetentionMs));
        return map;
    }

    /** A limit for arithmetic: {@link ConfigKey#UNLIMITED} becomes {@link Long#MAX_VALUE}. */
    public static long limit(long value) {
        return value == ConfigKey.UNLIMITED ? Long.MAX_VALUE : value;
    }
}
