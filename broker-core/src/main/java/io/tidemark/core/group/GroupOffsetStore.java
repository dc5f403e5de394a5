package io.tidemark.core.group;

import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

/**
 * Committed consumer-group offsets, durable in the broker's own log: every commit is appended to the internal
 * topic {@code __group_offsets} ({@link OffsetCommitFormat}) before it is acknowledged, and the topic is
 * replayed when the broker starts. The topic is fsynced on every commit (flush.messages=1): commits are few and
 * a consumer must not re-read after a power loss more than it committed.
 *
 * <p>The topic grows with every commit and is never compacted yet; its retention is unlimited so no group
 * loses its offsets. Compaction (keeping the latest record per key) is the known next step.
 *
 * <p>Thread-safe: commits are serialized, so the order of the map's updates is the order of the log.
 */
public final class GroupOffsetStore {
    public static final String TOPIC = "__group_offsets";
    /** Config of the internal topic: unlimited retention, fsync per commit. */
    public static final Map<String, String> TOPIC_CONFIG = Map.of("retention.ms", "-1", "flush.messages", "1",
            "send.time.before.max.ms", "-1");
    private static final Logger LOG = LoggerFactory.getLogger(GroupOffsetStore.class);
    private static final int REPLAY_FETCH_BYTES = 1 << 20;

    /** A committed offset. */
    public record Committed(long offset, String metadata, long commitTimeMs) {
    }

    private final Partition partition;
    private final InstantSource clock;
    private final Map<String, Map<TopicPartition, Committed>> groups = new ConcurrentHashMap<>();

    private GroupOffsetStore(Partition partition, InstantSource clock) {
        this.partition = partition;
        this.clock = clock;
    }

    /** Replays the internal topic's partition into memory. */
    public static GroupOffsetStore load(Partition partition, InstantSource clock) {
        GroupOffsetStore store = new GroupOffsetStore(partition, clock);
        RecordBatchReader reader = new RecordBatchReader();
        long offset = partition.logStartOffset();
        long records = 0;
        while (offset < partition.highWatermark()) {
            LogReadResult read = partition.read(offset, REPLAY_FETCH_BYTES);
            List<Record> batch = reader.records(read.batches());
            for (Record record : batch) {
                if (record.offset() >= offset) {
                    store.apply(record);
                    records++;
                }
            }
            offset = batch.get(batch.size() - 1).offset() + 1;
        }
        LOG.info("Loaded committed offsets of {} groups from {} records of {}", store.groups.size(), records,
                partition.id());
        return store;
    }

    private void apply(Record record) {
        OffsetCommitFormat.Key key = OffsetCommitFormat.readKey(record.key());
        OffsetCommitFormat.Value value = OffsetCommitFormat.readValue(record.value());
        groups.computeIfAbsent(key.group(), g -> new ConcurrentHashMap<>())
                .put(key.partition(), new Committed(value.offset(), value.metadata(), value.commitTimeMs()));
    }

    /**
     * Stores the offsets of one group in one batch, so they are committed together or not at all.
     *
     * @param offsets partition -> (offset, metadata), validated by the caller
     */
    public synchronized void commit(String group, Map<TopicPartition, Committed> offsets)
            throws InterruptedException, ExecutionException {
        long now = clock.millis();
        RecordBatchBuilder builder = new RecordBatchBuilder();
        for (Map.Entry<TopicPartition, Committed> entry : offsets.entrySet()) {
            builder.append(now, OffsetCommitFormat.key(group, entry.getKey()), OffsetCommitFormat.value(
                    new OffsetCommitFormat.Value(entry.getValue().offset(), now, entry.getValue().metadata())));
        }
        partition.append(builder.build()).get();
        Map<TopicPartition, Committed> committed = groups.computeIfAbsent(group, g -> new ConcurrentHashMap<>());
        offsets.forEach((tp, c) -> committed.put(tp, new Committed(c.offset(), c.metadata(), now)));
    }

    public Optional<Committed> committed(String group, TopicPartition partition) {
        return Optional.ofNullable(groups.getOrDefault(group, Map.of()).get(partition));
    }

    /** Every partition the group committed, ordered by topic and partition. */
    public Map<TopicPartition, Committed> committed(String group) {
        Map<TopicPartition, Committed> sorted = new TreeMap<>((a, b) -> a.topic().equals(b.topic())
                ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
        sorted.putAll(groups.getOrDefault(group, Map.of()));
        return sorted;
    }

    public SortedSet<String> groups() {
        return new TreeSet<>(groups.keySet());
    }
}
