package io.tidemark.core.log;

import com.codahale.metrics.Counter;
import com.codahale.metrics.MetricRegistry;
import com.google.common.util.concurrent.RateLimiter;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.segment.CompactionMarker;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.core.log.segment.LogSegment;
import io.tidemark.core.log.segment.SegmentSettings;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Compacts the logs of topics whose {@code cleanup.policy} includes {@code compact}: in the segments before the
 * active one, a record is removed when a later record of those segments has the same key, and a tombstone (a null
 * value that is the latest of its key) once its ReceiveTime is {@code delete.retention.ms} old. Records without a
 * key stay. What is left keeps its offsets, ReceiveTimes and SendTimes, so lookups by time stay exact over what is
 * left, and a fetch at a removed offset starts at the next record kept.
 *
 * <p>A pass over a log, oldest segment first:
 * <ol>
 *   <li>reads every record of the segments it may compact (closed, and below {@code keepFromOffset}: what a replica
 *       replays after a restart is not touched) and maps each key to its latest offset;</li>
 *   <li>for each segment that loses a record, writes the records kept into a new segment in the log's staging
 *       directory ({@value #STAGING_DIR}): a batch that keeps every record is copied byte for byte; one that loses
 *       some becomes one batch per run of consecutive offsets kept (the batch format has no gaps inside a batch),
 *       each with the original ReceiveTime, producer id and epoch, the sequence of its first record and the
 *       mirrored and transactional attributes; then fsyncs it and writes its {@link CompactionMarker} (where the
 *       segment ends);</li>
 *   <li>swaps it in under the log's lock ({@link PartitionLog#replaceCompacted}).</li>
 * </ol>
 * A log is passed over again only when a segment was closed since its last pass or a tombstone it kept has expired.
 * Reading and writing are held to {@code log.compaction.io.max.bytes.per.second} together, so compaction never takes
 * the disk from appends and fetches.
 *
 * <p>Transactions: only segments below the last stable offset are compacted (an open transaction's records may still
 * be aborted); a transaction marker is always kept (a reader, and a log opened on its own, learn from it where a
 * transaction ended); every record of an aborted transaction is removed and never counts as its key's latest, so it
 * never hides a committed value of its key. Kept records of a transactional batch stay in transactional batches.
 *
 * <p>Compaction never changes what the log's next appends decide: a log keeps its producers' last sequences and its
 * origin offsets in its {@link AppendState}, which only appends change and a replicated partition carries over restarts
 * in its group's snapshot, so a producer whose last batches were compacted away is still deduplicated and sequenced
 * as on the replicas that did not compact. Only a log opened on its own ({@link PartitionLog#open}) rebuilds them from
 * what its segments hold.
 *
 * <p>Threading: one compactor per broker, used from one thread (the maintenance thread) at a time. It reads only closed
 * segments, which nothing else writes, beside the log's appends and reads.
 */
public final class LogCompactor {
    /** The subdirectory of a partition directory where a compacted segment is written before it is swapped in. */
    static final String STAGING_DIR = "compacting.tmp";
    private static final Logger LOG = LoggerFactory.getLogger(LogCompactor.class);

    /** Null when unlimited. */
    private final RateLimiter throttle;
    private final Counter rewrittenSegments;
    private final Counter removedRecords;
    /**
     * The staged segment's files: a cache of its own, since a rewrite writes them while it leases the segment it
     * reads from the log's cache, and one cache must not lease two files at once ({@link OpenFileCache}).
     */
    private final OpenFileCache stagingFiles = new OpenFileCache(1);
    private final RecordBatchReader reader = new RecordBatchReader();
    private final CRC32C crc = new CRC32C();

    /**
     * @param maxBytesPerSecond bytes read and written per second by every compaction together, or -1 for unlimited
     * @param registry          gets the counters {@code log-compaction.rewritten-segments} and
     *                          {@code log-compaction.removed-records}
     */
    public LogCompactor(long maxBytesPerSecond, MetricRegistry registry) {
        if (maxBytesPerSecond == 0 || maxBytesPerSecond < -1) {
            throw new IllegalArgumentException("a compaction rate of " + maxBytesPerSecond
                    + " bytes/s: must be positive, or -1 for unlimited");
        }
        this.throttle = maxBytesPerSecond == -1 ? null : RateLimiter.create(maxBytesPerSecond);
        this.rewrittenSegments = registry.counter("log-compaction.rewritten-segments");
        this.removedRecords = registry.counter("log-compaction.removed-records");
    }

    /** Where compaction stages the segments of the log in {@code dir}; the loader deletes what a crash left. */
    public static Path stagingDir(Path dir) {
        return dir.resolve(STAGING_DIR);
    }

    /**
     * One pass over {@code log}, when its policy compacts and something may have changed since its last pass.
     *
     * @param keepFromOffset segments holding offsets at or above this are left alone (a replica replays them)
     */
    public CompactionResult compact(PartitionLog log, long nowMs, long keepFromOffset) throws IOException {
        TopicConfig config = log.config();
        if (!config.cleanupPolicy().compacts()) {
            return CompactionResult.NONE;
        }
        List<LogSegment> segments = log.compactableSegments(keepFromOffset);
        if (segments.isEmpty()) {
            return CompactionResult.NONE;
        }
        long end = segments.get(segments.size() - 1).nextOffset();
        if (!log.compactionDue(end, nowMs)) {
            return CompactionResult.NONE;
        }
        List<AppendState.AbortedTransaction> aborted = log.abortedTransactions(segments.get(0).baseOffset(), end);
        Map<ByteBuffer, Long> latest = latestOffsets(segments, aborted);
        long tombstonesBefore = nowMs - config.deleteRetentionMs();
        Decisions totals = new Decisions();
        int rewritten = 0;
        for (LogSegment segment : segments) {
            Decisions decisions = decide(segment, latest, aborted, tombstonesBefore, config.deleteRetentionMs());
            totals.add(decisions);
            if (decisions.removed > 0 && rewrite(log, segment, latest, aborted, tombstonesBefore)) {
                rewritten++;
            }
        }
        log.compactedThrough(end, totals.nextTombstoneExpiryMs);
        rewrittenSegments.inc(rewritten);
        if (rewritten > 0) {
            removedRecords.inc(totals.removed);
            LOG.info("Compacted {} segments of {}: removed {} of {} records; next pass at a new segment or at {}",
                    rewritten, log.dir(), totals.removed, totals.removed + totals.kept,
                    totals.nextTombstoneExpiryMs == Long.MAX_VALUE ? "never" : totals.nextTombstoneExpiryMs);
        }
        return new CompactionResult(rewritten, totals.removed, totals.kept);
    }

    /** Each key's latest offset in {@code segments}, among the batches that are neither markers nor aborted. */
    private Map<ByteBuffer, Long> latestOffsets(List<LogSegment> segments,
                                                List<AppendState.AbortedTransaction> aborted) throws IOException {
        Map<ByteBuffer, Long> latest = new HashMap<>();
        for (LogSegment segment : segments) {
            forEachBatch(segment, (batch, records) -> {
                if (fate(batch, aborted) != Fate.BY_RECORD) {
                    return;
                }
                for (Record record : records) {
                    if (record.key() != null) {
                        latest.put(ByteBuffer.wrap(record.key()), record.offset());
                    }
                }
            });
        }
        return latest;
    }

    /** How many records of a segment stay and go, and when the earliest tombstone kept expires. */
    private static final class Decisions {
        long kept;
        long removed;
        long nextTombstoneExpiryMs = Long.MAX_VALUE;

        void add(Decisions other) {
            kept += other.kept;
            removed += other.removed;
            nextTombstoneExpiryMs = Math.min(nextTombstoneExpiryMs, other.nextTombstoneExpiryMs);
        }
    }

    /** What becomes of a batch's records: all kept (a marker), all removed (an aborted transaction's), each decided. */
    private enum Fate { KEEP_ALL, REMOVE_ALL, BY_RECORD }

    private static Fate fate(ByteBuffer batch, List<AppendState.AbortedTransaction> aborted) {
        if (RecordBatchFormat.control(batch, 0)) {
            return Fate.KEEP_ALL;
        }
        if (RecordBatchFormat.transactional(batch, 0)) {
            long producerId = RecordBatchFormat.producerId(batch, 0);
            long offset = RecordBatchFormat.baseOffset(batch, 0);
            for (AppendState.AbortedTransaction transaction : aborted) {
                if (transaction.producerId() == producerId && transaction.firstOffset() <= offset
                        && offset < transaction.lastOffset()) {
                    return Fate.REMOVE_ALL;
                }
            }
        }
        return Fate.BY_RECORD;
    }

    private Decisions decide(LogSegment segment, Map<ByteBuffer, Long> latest,
                             List<AppendState.AbortedTransaction> aborted, long tombstonesBefore,
                             long deleteRetentionMs) throws IOException {
        Decisions decisions = new Decisions();
        forEachBatch(segment, (batch, records) -> {
            Fate fate = fate(batch, aborted);
            for (Record record : records) {
                if (fate == Fate.KEEP_ALL || (fate == Fate.BY_RECORD && keeps(record, latest, tombstonesBefore))) {
                    decisions.kept++;
                    if (record.key() != null && record.value() == null) {
                        decisions.nextTombstoneExpiryMs = Math.min(decisions.nextTombstoneExpiryMs,
                                record.receiveTimeMs() + deleteRetentionMs + 1);
                    }
                } else {
                    decisions.removed++;
                }
            }
        });
        return decisions;
    }

    /**
     * Whether a record stays: it has no key, or it is its key's latest and not a tombstone whose ReceiveTime is
     * before {@code tombstonesBefore} (more than {@code delete.retention.ms} ago).
     */
    private static boolean keeps(Record record, Map<ByteBuffer, Long> latest, long tombstonesBefore) {
        if (record.key() == null) {
            return true;
        }
        Long last = latest.get(ByteBuffer.wrap(record.key()));
        if (last == null || last != record.offset()) {
            return false;
        }
        return record.value() != null || record.receiveTimeMs() >= tombstonesBefore;
    }

    /**
     * Writes what {@code segment} keeps into the staging directory and swaps it in.
     *
     * @return false when the log no longer holds the segment (retention deleted it meanwhile)
     */
    private boolean rewrite(PartitionLog log, LogSegment segment, Map<ByteBuffer, Long> latest,
                            List<AppendState.AbortedTransaction> aborted, long tombstonesBefore) throws IOException {
        Path staging = stagingDir(log.dir());
        DurableFiles.deleteTree(staging);
        Files.createDirectories(staging);
        LogSegment compacted = LogSegment.create(staging, segment.baseOffset(),
                SegmentSettings.of(log.config(), stagingFiles));
        try {
            forEachBatch(segment, (batch, records) -> {
                Fate fate = fate(batch, aborted);
                List<Record> kept = fate == Fate.KEEP_ALL ? records : fate == Fate.REMOVE_ALL ? List.of()
                        : records.stream().filter(r -> keeps(r, latest, tombstonesBefore)).toList();
                if (kept.size() == records.size()) {
                    append(compacted, batch);
                } else {
                    for (List<Record> run : consecutiveRuns(kept)) {
                        append(compacted, rebuild(batch, run));
                    }
                }
            });
            compacted.closeForAppends();
        } finally {
            compacted.close();
        }
        CompactionMarker.write(staging, segment.baseOffset(), segment.nextOffset());
        return log.replaceCompacted(segment, staging);
    }

    private void append(LogSegment segment, ByteBuffer batch) throws IOException {
        acquire(batch.remaining());
        segment.append(batch, RecordBatchFormat.baseOffset(batch, 0), RecordBatchFormat.lastOffset(batch, 0),
                RecordBatchFormat.receiveTime(batch, 0), RecordBatchFormat.maxSendTime(batch, 0));
    }

    /** The records kept, split where offsets jump: each run becomes one batch. */
    private static List<List<Record>> consecutiveRuns(List<Record> kept) {
        List<List<Record>> runs = new ArrayList<>();
        List<Record> run = new ArrayList<>();
        for (Record record : kept) {
            if (!run.isEmpty() && run.get(run.size() - 1).offset() + 1 != record.offset()) {
                runs.add(run);
                run = new ArrayList<>();
            }
            run.add(record);
        }
        if (!run.isEmpty()) {
            runs.add(run);
        }
        return runs;
    }

    /** A batch of {@code run}, the records kept of {@code original} at consecutive offsets, stamped as it was. */
    private ByteBuffer rebuild(ByteBuffer original, List<Record> run) {
        RecordBatchBuilder builder = new RecordBatchBuilder(original.remaining());
        long first = run.get(0).offset();
        long producerId = RecordBatchFormat.producerId(original, 0);
        if (producerId != RecordBatchFormat.NO_PRODUCER_ID) {
            builder.producer(producerId, RecordBatchFormat.producerEpoch(original, 0), ProducerStateTable.advance(
                    RecordBatchFormat.baseSequence(original, 0), first - RecordBatchFormat.baseOffset(original, 0)));
        }
        if (RecordBatchFormat.mirrored(original, 0)) {
            builder.mirrored();
        }
        if (RecordBatchFormat.transactional(original, 0)) {
            builder.transactional();
        }
        for (Record record : run) {
            builder.append(record.sendTimeMs(), record.key(), record.value(), record.headers());
        }
        ByteBuffer batch = builder.build();
        RecordBatchFormat.stamp(crc, batch, 0, first, RecordBatchFormat.receiveTime(original, 0));
        return batch;
    }

    /** Receives each batch of a segment with its records. */
    private interface DecodedBatchVisitor {
        void visit(ByteBuffer batch, List<Record> records) throws IOException;
    }

    private void forEachBatch(LogSegment segment, DecodedBatchVisitor visitor) throws IOException {
        segment.forEachBatch((header, whole) -> {
            ByteBuffer batch = whole.read();
            acquire(batch.remaining());
            visitor.visit(batch, reader.records(batch.duplicate()));
        });
    }

    private void acquire(int bytes) {
        if (throttle != null && bytes > 0) {
            throttle.acquire(bytes);
        }
    }

    /** What a pass did: segments rewritten, and records removed and kept over the segments it could compact. */
    public record CompactionResult(int rewrittenSegments, long removedRecords, long keptRecords) {
        static final CompactionResult NONE = new CompactionResult(0, 0, 0);
    }
}
