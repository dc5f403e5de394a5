package io.tidemark.core.log;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.file.Disk;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.MirroredBatchScanner;
import io.tidemark.proto.record.MirroredBatchScanner.OriginRange;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.core.log.segment.CompactionMarker;
import io.tidemark.core.log.segment.LogSegment;
import io.tidemark.core.log.segment.SegmentClosedException;
import io.tidemark.core.log.segment.SegmentLoader;
import io.tidemark.core.log.segment.SegmentRecovery;
import io.tidemark.core.log.segment.SegmentSettings;
import io.tidemark.proto.v1.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * A partition's log on local disk: a directory of {@link LogSegment}s, the last of which takes appends.
 *
 * <ul>
 *   <li>{@link #append} takes a batch its leader admitted ({@link BatchAdmission}), stamps its base offset and the
 *       given ReceiveTime, and writes it; a ReceiveTime below the last one is refused, so ReceiveTime never
 *       decreases in the partition. A batch an
 *       idempotent producer sent again is answered with the first one's result and not stored twice
 *       ({@link ProducerStateTable}). A mirrored batch that starts at an origin offset the partition already holds
 *       is refused with ORIGIN_OFFSET_HELD ({@link OriginOffsetTable}).</li>
 *   <li>{@link #appendStamped} appends a batch another replica's log already stamped, unchanged, at its own
 *       offset; {@link #recreate} starts an empty log at any offset. Together they copy a log from another
 *       replica byte for byte (a replica catching up by segment copy).</li>
 *   <li>{@link #read} returns whole batches from an offset; {@link #lookupByReceiveTime} and
 *       {@link #lookupBySendTime} find the first record at or after a time, exactly.</li>
 *   <li>Segments roll on {@code segment.bytes}, on {@code segment.ms} measured on ReceiveTime, and when an
 *       index is full; {@link #deleteExpiredSegments} applies {@code retention.ms} (by a segment's largest
 *       ReceiveTime) and {@code retention.bytes}, oldest first, never the active segment.</li>
 *   <li>Flushing follows {@code flush.messages} and {@code flush.ms}; a segment is fsynced when it rolls and
 *       the whole log on {@link #close}, which also writes the clean-shutdown marker.</li>
 * </ul>
 *
 * <p>Time is never read here: every call that needs "now" takes it, so tests can skew and step it.
 *
 * <p>Open files: the segments' files are opened through the process's {@link OpenFileCache} (or the one given to
 * {@link #open(Path, TopicConfig, OpenFileCache, long)}), which bounds how many are open at once across all
 * partitions; a partition holds no file open between reads and appends.
 *
 * <p>Threading: appends, rolls, flushes and retention run under one lock (taken once per batch, never per
 * record). Reads and lookups take no lock: they work on a volatile snapshot of the segment array and each
 * segment's published size, so they never see a partial batch. A read racing with retention may find its
 * segment deleted and then reports the offset as out of range; one racing with a compaction swap or a truncation
 * finds its segment closed, waits for the lock and reads again.
 */
public final class PartitionLog implements Closeable {
    /** Marks a directory whose log was closed cleanly; removed when the log is opened. */
    public static final String CLEAN_SHUTDOWN_FILE = ".clean-shutdown";
    private static final Logger LOG = LoggerFactory.getLogger(PartitionLog.class);
    /**
     * One reader a thread for every log, not one a thread per log: a per-log thread-local costs an entry in each
     * thread's map for every partition the thread ever looked up, which with thousands of partitions and a pool of
     * fetch threads is megabytes for nothing. A lookup reads one log at a time, so a thread's reader is never in use
     * twice.
     */
    private static final ThreadLocal<RecordBatchReader> READERS = ThreadLocal.withInitial(RecordBatchReader::new);

    private final Path dir;
    private final OpenFileCache files;
    private volatile TopicConfig config;
    private final ReentrantLock lock = new ReentrantLock();
    private final RecordBatchValidator validator = new RecordBatchValidator();
    private final CRC32C crc = new CRC32C();
    private final ProducerStateTable producers = new ProducerStateTable();
    private final TransactionTable transactions = new TransactionTable();
    private final MirroredBatchScanner mirroredScanner = new MirroredBatchScanner();
    private final OriginOffsetTable origins = new OriginOffsetTable();

    private volatile LogSegment[] segments;
    private volatile long logEndOffset;
    private long lastReceiveTimeMs;
    private long unflushedRecords;
    private long lastFlushMs;
    /** The segment {@link #writeBack} last wrote back, and its size then. */
    private LogSegment writtenBack;
    private int writtenBackBytes;
    private boolean closed;
    /**
     * The disk error that failed a change of the log (an append, a cut, a flush, a segment swapped or deleted), or
     * null. From then on the log takes no change and its close leaves no clean-shutdown marker: what it holds in
     * memory may be ahead of its files, and only a restart's recovery (the segments scanned, the Raft group's
     * entries replayed from its last snapshot) knows what is durable.
     */
    private IOException diskFailure;
    /**
     * The log opened after a clean shutdown and its marker's deletion is not fsynced yet: done before the first write,
     * so a crash cannot bring the marker back over unchecked bytes, and a log never written pays nothing.
     */
    private boolean markerDeletionUnsynced;
    /** The end of the segments the last compaction pass covered, and when a tombstone it kept expires. */
    private volatile long compactedThroughOffset = -1;
    private volatile long nextTombstoneExpiryMs = Long.MAX_VALUE;

    private PartitionLog(Path dir, TopicConfig config, OpenFileCache files, LogSegment[] segments, long nowMs) {
        this.dir = dir;
        this.files = files;
        this.config = config;
        this.segments = segments;
        LogSegment active = segments[segments.length - 1];
        this.logEndOffset = active.nextOffset();
        this.lastReceiveTimeMs = lastReceiveTime(segments);
        this.lastFlushMs = nowMs;
    }

    /**
     * Opens the log in {@code dir}, creating it when empty. After an unclean shutdown the segments from the
     * recovery point on are scanned and a torn or corrupt tail is truncated ({@link LogLoader}).
     *
     * @param nowMs the current time, from the caller's clock
     */
    public static PartitionLog open(Path dir, TopicConfig config, long nowMs) throws IOException {
        return open(dir, config, OpenFileCache.shared(), nowMs);
    }

    /**
     * Opens the log in {@code dir} as {@link #open(Path, TopicConfig, long)} does, its files opened through
     * {@code files}.
     */
    public static PartitionLog open(Path dir, TopicConfig config, OpenFileCache files, long nowMs)
            throws IOException {
        PartitionLog log = load(dir, config, files, nowMs);
        log.rebuildProducerState();
        log.rebuildOrigins();
        return log;
    }

    /**
     * Opens the log in {@code dir} as it was when {@code state} was taken of it: recovered as {@link #open} does, cut
     * back to the state's log end offset, with the state's last ReceiveTime, producers and origin offsets instead of
     * what the segments left would rebuild (compaction and retention remove batches those were learnt from). A
     * replicated partition opens so from its group's snapshot, which every replica took of the same appends.
     *
     * @throws LogTooShortException when the log ends below the state's log end offset (its files were truncated or
     *                              lost)
     */
    public static PartitionLog openAt(Path dir, TopicConfig config, AppendState state, long nowMs)
            throws IOException {
        PartitionLog log = load(dir, config, OpenFileCache.shared(), nowMs);
        log.requireEndAtLeast(state.logEndOffset());
        log.lock.lock();
        try {
            log.cut(state.logEndOffset());
            log.lastReceiveTimeMs = state.lastReceiveTimeMs().orElse(LogSegment.NO_TIME);
            log.producers.reset(state.producers());
            log.transactions.reset(state.openTransactions(), state.abortedTransactions());
            log.origins.reset(state.origins());
        } finally {
            log.lock.unlock();
        }
        return log;
    }

    /**
     * Closes the log and throws unless it ends at {@code offset} or later: a log about to be cut back to a state taken
     * of it.
     *
     * @throws LogTooShortException when it ends below
     */
    public void requireEndAtLeast(long offset) throws IOException {
        if (logEndOffset < offset) {
            long end = logEndOffset;
            close();
            throw new LogTooShortException(dir, end, offset);
        }
    }

    /** Opens the segments of {@code dir}, recovering them after an unclean shutdown; the tables are left empty. */
    private static PartitionLog load(Path dir, TopicConfig config, OpenFileCache files, long nowMs)
            throws IOException {
        Files.createDirectories(dir);
        boolean clean = Files.exists(dir.resolve(CLEAN_SHUTDOWN_FILE));
        LogSegment[] segments = LogLoader.load(dir, config, files);
        PartitionLog log = new PartitionLog(dir, config, files, segments, nowMs);
        log.markerDeletionUnsynced = clean;
        return log;
    }

    /**
     * Deletes whatever {@code dir} holds and opens an empty log there whose first offset (log start and log end)
     * is {@code logStartOffset}: the destination of a log copied from another replica, which starts where that
     * replica's log starts. The segment and the recovery point are on disk when this returns, so the log
     * reopens at the same offset.
     *
     * @param nowMs the current time, from the caller's clock
     * @throws IllegalArgumentException when {@code logStartOffset} is negative
     */
    public static PartitionLog recreate(Path dir, TopicConfig config, long logStartOffset, long nowMs)
            throws IOException {
        return recreate(dir, config, OpenFileCache.shared(), logStartOffset, nowMs);
    }

    /**
     * Starts an empty log as {@link #recreate(Path, TopicConfig, long, long)} does, its files opened through
     * {@code files}.
     */
    public static PartitionLog recreate(Path dir, TopicConfig config, OpenFileCache files, long logStartOffset,
                                        long nowMs) throws IOException {
        if (logStartOffset < 0) {
            throw new IllegalArgumentException("a log cannot start at offset " + logStartOffset);
        }
        DurableFiles.deleteTree(dir);
        Files.createDirectories(dir);
        LogSegment first = LogSegment.create(dir, logStartOffset, SegmentSettings.of(config, files));
        RecoveryPointFile.write(dir, logStartOffset);
        LOG.info("Recreated {} empty at offset {}", dir, logStartOffset);
        return new PartitionLog(dir, config, files, new LogSegment[] {first}, nowMs);
    }

    /**
     * Rebuilds the idempotent producers' table and the transactions from the batch headers of the log (and the
     * markers' records).
     */
    private void rebuildProducerState() throws IOException {
        producers.clear();
        transactions.clear();
        for (LogSegment segment : segments) {
            segment.forEachBatch((header, whole) -> {
                // a marker's type is in its record; every other batch tells all it needs in its header
                ByteBuffer batch = RecordBatchFormat.control(header, 0) ? whole.read() : header;
                producerStored(batch, 0, new AppendResult(RecordBatchFormat.baseOffset(batch, 0),
                        RecordBatchFormat.lastOffset(batch, 0), RecordBatchFormat.receiveTime(batch, 0)));
            });
        }
    }

    /**
     * Rebuilds the origin offsets from the latest snapshot at or below the log end ({@link OriginSnapshotFile}) and
     * the mirrored batches after it: a bounded read, since the log snapshots the table at every roll. Snapshots
     * beyond the log end (after a truncation or a torn tail) are deleted first.
     */
    private void rebuildOrigins() throws IOException {
        long start = segments[0].baseOffset();
        TreeSet<Long> snapshots = OriginSnapshotFile.offsets(dir);
        for (long offset : snapshots.tailSet(logEndOffset, false)) {
            OriginSnapshotFile.delete(dir, offset);
        }
        Map<OriginPartition, HeldOrigin> entries = Map.of();
        long from = start;
        for (long offset : snapshots.headSet(logEndOffset, true).descendingSet()) {
            Optional<Map<OriginPartition, HeldOrigin>> read = OriginSnapshotFile.read(dir, offset);
            if (read.isPresent()) {
                entries = read.get();
                from = Math.max(offset, start);
                break;
            }
        }
        if (from > start || !entries.isEmpty() || start == 0) {
            LOG.debug("Origin offsets of {}: {} entries from the snapshot, scanning from offset {}", dir,
                    entries.size(), from);
        } else {
            LOG.warn("No origin snapshot in {} at or after its log start offset {}: origin offsets are rebuilt from "
                    + "the records left, and those of deleted segments are gone", dir, start);
        }
        origins.reset(entries);
        for (LogSegment segment : segments) {
            if (segment.nextOffset() > from) {
                scanMirroredBatches(segment, from);
            }
        }
    }

    private void scanMirroredBatches(LogSegment segment, long from) throws IOException {
        segment.forEachBatch((header, whole) -> {
            if (RecordBatchFormat.baseOffset(header, 0) >= from && RecordBatchFormat.mirrored(header, 0)) {
                origins.stored(mirroredScanner.scan(whole.read(), 0), RecordBatchFormat.lastOffset(header, 0));
            }
        });
    }

    private static long lastReceiveTime(LogSegment[] segments) {
        for (int i = segments.length - 1; i >= 0; i--) {
            if (segments[i].maxReceiveTimeMs() != LogSegment.NO_TIME) {
                return segments[i].maxReceiveTimeMs();
            }
        }
        return LogSegment.NO_TIME;
    }

    /**
     * Appends one batch a leader admitted ({@link BatchAdmission}: exactly one well-formed batch, within its topic's
     * limits, the buffer between position and limit), checking only what the log decides, the same on every replica
     * that applies the same batches in the same order: ReceiveTime not below the last, an idempotent producer's
     * sequence ({@link ProducerStateTable}: a batch sent again is answered with the first one's result and not stored
     * twice), a mirrored batch's origin offsets ({@link OriginOffsetTable}). Then it writes the batch to the log with
     * its base offset, {@code receiveTimeMs} and CRC stamped into a copy ({@link StagingBuffer}); the buffer given is
     * not changed. Nothing of a refused batch is written.
     * The topic's config is not consulted: replicas take its changes at different moments.
     *
     * @param receiveTimeMs the batch's ReceiveTime: at least {@link #lastReceiveTimeMs()}; the caller stamps
     *                      {@code max(now, last)}. It is also "now" for {@code segment.ms} and {@code flush.ms}.
     * @throws TidemarkException the idempotent producer's OUT_OF_ORDER_SEQUENCE or INVALID_PRODUCER_EPOCH,
     *                           ORIGIN_OFFSET_HELD for a mirrored batch, or INVALID_TIMESTAMP for a ReceiveTime below
     *                           the last, saying what is allowed
     * @throws IllegalStateException when the buffer is not one whole batch: it was not admitted
     */
    public AppendResult append(ByteBuffer batch, long receiveTimeMs) {
        lock.lock();
        try {
            checkOpen();
            int position = batch.position();
            int size = batch.remaining();
            if (size < RecordBatchFormat.HEADER_SIZE_BYTES || RecordBatchFormat.totalSize(batch, position) != size) {
                throw new IllegalStateException("an append to " + dir + " takes one admitted batch, not " + size
                        + " bytes");
            }
            checkReceiveTime(receiveTimeMs);
            OriginRange origin = originOf(batch, position);
            long producerId = RecordBatchFormat.producerId(batch, position);
            if (RecordBatchFormat.control(batch, position)) {
                producers.checkMarker(producerId, RecordBatchFormat.producerEpoch(batch, position),
                        TransactionMarker.coordinatorEpoch(batch, position));
            } else if (producerId != RecordBatchFormat.NO_PRODUCER_ID) {
                Optional<AppendResult> stored = producers.check(producerId,
                        RecordBatchFormat.producerEpoch(batch, position),
                        RecordBatchFormat.baseSequence(batch, position), RecordBatchFormat.recordCount(batch, position),
                        receiveTimeMs);
                if (stored.isPresent()) {
                    return stored.get();
                }
                transactions.checkData(producerId, RecordBatchFormat.transactional(batch, position));
            }
            if (origin != null) {
                origins.check(origin);
            }
            ByteBuffer staged = StagingBuffer.copyOf(batch);
            RecordBatchFormat.stamp(crc, staged, 0, logEndOffset, receiveTimeMs);
            return write(staged, 0, size, origin);
        } catch (IOException e) {
            throw failed("appending to " + dir, e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Checks a transaction marker (the buffer between position and limit) as {@link #append} would, changing nothing:
     * its producer and coordinator epochs against the last this partition saw of the producer.
     *
     * @throws TidemarkException INVALID_PRODUCER_EPOCH, as the append would
     */
    public void checkMarker(ByteBuffer marker) {
        int position = marker.position();
        lock.lock();
        try {
            producers.checkMarker(RecordBatchFormat.producerId(marker, position),
                    RecordBatchFormat.producerEpoch(marker, position),
                    TransactionMarker.coordinatorEpoch(marker, position));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Where this log stored the batch (the buffer between position and limit) when it repeats one of an idempotent
     * producer's last batches here; empty otherwise. Nothing is checked or changed: a leader that refuses a batch
     * under its own config (its SendTime window, its max.batch.bytes) may be refusing the resend of a batch another
     * leader stored, and the producer must hear where it is, not a refusal.
     */
    public Optional<AppendResult> storedAs(ByteBuffer batch) {
        int position = batch.position();
        if (batch.remaining() < RecordBatchFormat.HEADER_SIZE_BYTES) {
            return Optional.empty();
        }
        long producerId = RecordBatchFormat.producerId(batch, position);
        if (producerId == RecordBatchFormat.NO_PRODUCER_ID) {
            return Optional.empty();
        }
        lock.lock();
        try {
            return producers.storedAs(producerId, RecordBatchFormat.producerEpoch(batch, position),
                    RecordBatchFormat.baseSequence(batch, position), RecordBatchFormat.recordCount(batch, position));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Appends one batch (the buffer between position and limit) that another replica's log stamped, exactly as it
     * is: its base offset, ReceiveTime and CRC are kept. The batch is validated whole first (CRC, lengths, record
     * layout; SendTimes are not held to this topic's window, they were checked when the batch was first
     * appended). Idempotent producers' batches are recorded but never deduplicated: a copy holds what the
     * source holds.
     *
     * <p>A batch above the log end (the source's log was compacted) continues it across the gap ({@link #skipTo}),
     * whatever this replica's cleanup.policy says: the source's batches are what they are, and every replica taking
     * the same copy must end the same.
     *
     * @throws TidemarkException CORRUPT_BATCH when the bytes are not exactly one valid batch; OFFSET_OUT_OF_RANGE
     *                           when its base offset is below this log's end offset (a copy has no overlaps);
     *                           INVALID_TIMESTAMP when its ReceiveTime is below the log's last one.
     *                           Nothing of a refused batch is written.
     */
    public AppendResult appendStamped(ByteBuffer batch) {
        lock.lock();
        try {
            checkOpen();
            int position = batch.position();
            int size = batch.remaining();
            BatchAdmission.checkOneBatch(size, validator.validate(batch, position, size, SendTimeWindow.UNBOUNDED));
            long baseOffset = RecordBatchFormat.baseOffset(batch, position);
            if (baseOffset < logEndOffset) {
                throw new TidemarkException(ErrorCode.OFFSET_OUT_OF_RANGE, "a copied batch must continue the log: "
                        + "this one starts at offset " + baseOffset + " but the log " + dir + " ends at "
                        + logEndOffset);
            }
            checkReceiveTime(RecordBatchFormat.receiveTime(batch, position));
            if (baseOffset > logEndOffset) {
                skipToLocked(baseOffset);
            }
            return write(batch, position, size, originOf(batch, position));
        } catch (IOException e) {
            throw failed("appending a copied batch to " + dir, e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves the log end up to {@code endOffset} over offsets a compacted log no longer holds, so a copy of it ends
     * where its source does: the active segment is marked compacted ({@link LogSegment#endCompactedAt}). Nothing
     * when the log already ends there or later.
     */
    public void skipTo(long endOffset) {
        lock.lock();
        try {
            checkOpen();
            skipToLocked(endOffset);
        } catch (IOException e) {
            throw failed("moving the end of " + dir + " to offset " + endOffset, e);
        } finally {
            lock.unlock();
        }
    }

    private void skipToLocked(long endOffset) throws IOException {
        if (endOffset > logEndOffset) {
            segments[segments.length - 1].endCompactedAt(endOffset);
            logEndOffset = endOffset;
        }
    }

    /** The origin partition and offsets of a mirrored batch; null for any other batch. */
    private OriginRange originOf(ByteBuffer batch, int position) {
        return RecordBatchFormat.mirrored(batch, position) ? mirroredScanner.scan(batch, position) : null;
    }

    /**
     * Writes a validated, stamped batch at the log end: rolls when due, flushes when due, records its producer and,
     * for a mirrored batch ({@code origin} not null), the origin offsets it holds.
     */
    private AppendResult write(ByteBuffer batch, int position, int size, OriginRange origin) throws IOException {
        if (markerDeletionUnsynced) {
            DurableFiles.syncDirectory(dir);
            markerDeletionUnsynced = false;
        }
        long baseOffset = RecordBatchFormat.baseOffset(batch, position);
        long lastOffset = RecordBatchFormat.lastOffset(batch, position);
        long receiveTimeMs = RecordBatchFormat.receiveTime(batch, position);
        LogSegment active = maybeRoll(size, receiveTimeMs, lastOffset);
        active.append(batch, baseOffset, lastOffset, receiveTimeMs, RecordBatchFormat.maxSendTime(batch, position));
        lastReceiveTimeMs = receiveTimeMs;
        AppendResult result = new AppendResult(baseOffset, lastOffset, receiveTimeMs);
        // before the new end is published: a read_committed reader must never see a transaction's batch as stable
        producerStored(batch, position, result);
        logEndOffset = lastOffset + 1;
        unflushedRecords += lastOffset - baseOffset + 1;
        if (unflushedRecords >= TopicConfig.limit(config.flushMessages())
                || receiveTimeMs - lastFlushMs >= TopicConfig.limit(config.flushMs())) {
            flushLocked(receiveTimeMs);
        }
        if (origin != null) {
            origins.stored(origin, lastOffset);
        }
        return result;
    }

    /**
     * Records a stored batch of a producer (where {@code result} says) in the producers' and the transactions' tables:
     * a marker ends its producer's transaction; a data batch moves its producer's sequences on, and a transactional
     * one opens its transaction. A batch without a producer changes nothing.
     */
    private void producerStored(ByteBuffer batch, int position, AppendResult result) {
        long producerId = RecordBatchFormat.producerId(batch, position);
        short epoch = RecordBatchFormat.producerEpoch(batch, position);
        if (RecordBatchFormat.control(batch, position)) {
            producers.markerStored(producerId, epoch, TransactionMarker.coordinatorEpoch(batch, position),
                    result.receiveTimeMs());
            transactions.markerStored(producerId, TransactionMarker.commits(batch, position), result.baseOffset());
        } else if (producerId != RecordBatchFormat.NO_PRODUCER_ID) {
            producers.stored(producerId, epoch, RecordBatchFormat.baseSequence(batch, position), result);
            transactions.dataStored(producerId, RecordBatchFormat.transactional(batch, position), result.baseOffset());
        }
    }

    private void checkReceiveTime(long receiveTimeMs) {
        if (receiveTimeMs < 0) {
            throw new TidemarkException(ErrorCode.INVALID_TIMESTAMP, "ReceiveTime " + receiveTimeMs
                    + " is negative; it is ms since the epoch");
        }
        if (receiveTimeMs < lastReceiveTimeMs) {
            throw new TidemarkException(ErrorCode.INVALID_TIMESTAMP, "ReceiveTime " + receiveTimeMs
                    + " is below the partition's last ReceiveTime " + lastReceiveTimeMs
                    + "; ReceiveTime never decreases in a partition (stamp max(now, last))");
        }
    }

    private LogSegment maybeRoll(int size, long receiveTimeMs, long lastOffset) throws IOException {
        LogSegment active = segments[segments.length - 1];
        if (active.sizeBytes() == 0) {
            return active;
        }
        String reason = null;
        if ((long) active.sizeBytes() + size > config.segmentBytes()) {
            reason = "segment.bytes " + config.segmentBytes() + " reached";
        } else if (receiveTimeMs - active.firstReceiveTimeMs() >= config.segmentMs()) {
            reason = "segment.ms " + config.segmentMs() + " passed since its first ReceiveTime "
                    + active.firstReceiveTimeMs();
        } else if (active.indexesFull()) {
            reason = "an index is full";
        } else if (lastOffset - active.baseOffset() > Integer.MAX_VALUE) {
            reason = "relative offsets would overflow";
        }
        return reason == null ? active : roll(active, reason);
    }

    private LogSegment roll(LogSegment active, String reason) throws IOException {
        active.closeForAppends();
        OriginSnapshotFile.write(dir, logEndOffset, origins.entries());
        LogSegment next = LogSegment.create(dir, logEndOffset, SegmentSettings.of(config, files));
        LogSegment[] rolled = Arrays.copyOf(segments, segments.length + 1);
        rolled[rolled.length - 1] = next;
        segments = rolled;
        RecoveryPointFile.write(dir, next.baseOffset());
        LOG.debug("Rolled {} at offset {}: {}", dir, next.baseOffset(), reason);
        return next;
    }

    /**
     * Reads whole batches from the one that holds {@code offset} (in a compacted log, the first at or after it): at
     * most {@code maxBytes}, but always at least that batch.
     *
     * @throws TidemarkException OFFSET_OUT_OF_RANGE naming the log's offsets when {@code offset} is below the log
     *                           start or above the log end offset
     */
    public LogReadResult read(long offset, int maxBytes) {
        long end = logEndOffset;
        LogSegment[] snapshot = segments;
        long start = snapshot[0].baseOffset();
        if (offset < start || offset > end) {
            throw new TidemarkException(ErrorCode.OFFSET_OUT_OF_RANGE, "offset " + offset + " is outside the log: "
                    + "it holds offsets [" + start + ", " + end + "), and " + end + " is the next to be written");
        }
        if (offset == end) {
            return new LogReadResult(ByteBuffer.allocate(0), start, end, lastStableOffset(start, end), List.of());
        }
        int index = floorSegment(snapshot, offset);
        LogSegment segment = snapshot[index];
        try {
            ByteBuffer batches = segment.read(offset, maxBytes);
            // compaction may have removed every record from the offset to the segment's end: read on in the next
            while (!batches.hasRemaining() && index < snapshot.length - 1) {
                segment = snapshot[++index];
                batches = segment.read(segment.baseOffset(), maxBytes);
            }
            return new LogReadResult(batches, start, end, lastStableOffset(start, end), List.of());
        } catch (IOException e) {
            if (gone(segment, e)) {
                return read(offset, maxBytes);
            }
            throw new UncheckedIOException("reading " + segment.logFile() + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * Reads as {@link #read} does, for a {@code read_committed} reader: only batches below the last stable offset
     * ({@link #lastStableOffset}), with the aborted transactions among them, whose batches that reader skips.
     *
     * @throws TidemarkException OFFSET_OUT_OF_RANGE as {@link #read} does
     */
    public LogReadResult readCommitted(long offset, int maxBytes) {
        LogReadResult read = read(offset, maxBytes);
        long stable = read.lastStableOffset();
        ByteBuffer batches = read.batches();
        int position = batches.position();
        long readTo = offset;
        while (batches.limit() - position >= RecordBatchFormat.LOG_OVERHEAD_BYTES
                && RecordBatchFormat.baseOffset(batches, position) < stable) {
            readTo = RecordBatchFormat.lastOffset(batches, position) + 1;
            position += RecordBatchFormat.totalSize(batches, position);
        }
        batches.limit(Math.min(position, batches.limit()));
        return new LogReadResult(batches, read.logStartOffset(), read.logEndOffset(), stable,
                batches.hasRemaining() ? transactions.abortedOverlapping(offset, readTo) : List.of());
    }

    /**
     * The last stable offset: the first offset of the oldest transaction open in the log, or the log end offset when
     * none is. A {@code read_committed} reader reads below it only, where every transaction has its marker.
     */
    public long lastStableOffset() {
        long end = logEndOffset;
        return lastStableOffset(segments[0].baseOffset(), end);
    }

    private long lastStableOffset(long start, long end) {
        return Math.min(end, Math.max(start, transactions.firstOpenOffset()));
    }

    private static int floorSegment(LogSegment[] snapshot, long offset) {
        int low = 0;
        int high = snapshot.length - 1;
        while (low < high) {
            int mid = (low + high + 1) >>> 1;
            if (snapshot[mid].baseOffset() <= offset) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    /**
     * The first record whose ReceiveTime is at least {@code receiveTimeMs}: the log start offset when the time
     * is before every record, {@link TimeLookup.NotFound} with the log end offset when it is after all of them.
     */
    public TimeLookup lookupByReceiveTime(long receiveTimeMs) {
        long end = logEndOffset;
        LogSegment[] snapshot = segments;
        // ReceiveTime never decreases, so neither does a segment's largest: binary search for the first segment
        // that reaches the target. An empty segment is the active one, which sorts last, or a compacted one, which
        // carries the largest ReceiveTime before it (LogSegment.followReceiveTime).
        int low = 0;
        int high = snapshot.length;
        while (low < high) {
            int mid = (low + high) >>> 1;
            long max = snapshot[mid].maxReceiveTimeMs();
            if (max == LogSegment.NO_TIME || max >= receiveTimeMs) {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        for (int i = low; i < snapshot.length; i++) {
            LogSegment.SegmentMatch match = find(snapshot[i], s -> s.findByReceiveTime(receiveTimeMs));
            if (match != null) {
                return new TimeLookup.Found(match.offset(), match.receiveTimeMs(), match.sendTimeMs());
            }
        }
        return new TimeLookup.NotFound(end);
    }

    /**
     * The first record, in log order, whose SendTime is at least {@code sendTimeMs} (SendTimes may be in any
     * order): {@link TimeLookup.NotFound} with the log end offset when no record has one.
     */
    public TimeLookup lookupBySendTime(long sendTimeMs) {
        long end = logEndOffset;
        RecordBatchReader reader = READERS.get();
        for (LogSegment segment : segments) {
            LogSegment.SegmentMatch match = find(segment, s -> s.findBySendTime(sendTimeMs, reader));
            if (match != null) {
                return new TimeLookup.Found(match.offset(), match.receiveTimeMs(), match.sendTimeMs());
            }
        }
        return new TimeLookup.NotFound(end);
    }

    private interface SegmentSearch {
        LogSegment.SegmentMatch apply(LogSegment segment) throws IOException;
    }

    /**
     * Runs a search; a segment deleted by retention meanwhile counts as holding no match, and one compaction replaced
     * is searched again in its replacement.
     */
    private LogSegment.SegmentMatch find(LogSegment segment, SegmentSearch search) {
        try {
            return search.apply(segment);
        } catch (IOException e) {
            if (gone(segment, e)) {
                LogSegment[] current = segments;
                int i = floorSegment(current, segment.baseOffset());
                return current[i].baseOffset() == segment.baseOffset() ? find(current[i], search) : null;
            }
            throw new UncheckedIOException("searching " + segment.logFile() + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * Whether the log no longer holds this segment object, whose read failed with {@code failure}: retention deleted
     * it, or compaction replaced it. A swap closes the old segment under the log's lock before it publishes the
     * replacement, so a read that found the segment closed waits for the lock before it looks.
     */
    private boolean gone(LogSegment segment, IOException failure) {
        if (failure instanceof SegmentClosedException) {
            lock.lock();
            lock.unlock();
        }
        for (LogSegment s : segments) {
            if (s == segment) {
                return false;
            }
        }
        return true;
    }

    /**
     * Removes every record at or after {@code offset}, which must be where a batch starts (or the log end): a
     * replica replaying its Raft log from a snapshot first cuts what the replay will append again.
     *
     * @throws IllegalArgumentException when {@code offset} is below the log start or inside a batch
     */
    public void truncateTo(long offset) {
        lock.lock();
        try {
            checkOpen();
            if (offset >= logEndOffset) {
                return;
            }
            cut(offset);
            rebuildProducerState();
            rebuildOrigins();
            LOG.info("Truncated {} to offset {}", dir, offset);
        } catch (IOException e) {
            throw failed("truncating " + dir, e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes every record at or after {@code offset} (nothing when it is the log end or later); the producers and
     * origin offsets are left as they are. Under the lock.
     */
    private void cut(long offset) throws IOException {
        if (offset >= logEndOffset) {
            return;
        }
        LogSegment[] current = segments;
        if (offset < current[0].baseOffset()) {
            throw new IllegalArgumentException("cannot truncate " + dir + " to offset " + offset
                    + ", below its log start offset " + current[0].baseOffset());
        }
        int keep = floorSegment(current, offset);
        for (int i = current.length - 1; i > keep; i--) {
            current[i].delete();
        }
        LogSegment last = current[keep];
        current[keep].truncateBefore(offset, keep == 0 ? LogSegment.NO_TIME
                : lastReceiveTime(Arrays.copyOf(current, keep)), validator, SegmentSettings.of(config, files));
        segments = Arrays.copyOf(current, keep + 1);
        logEndOffset = last.nextOffset();
        lastReceiveTimeMs = lastReceiveTime(segments);
        RecoveryPointFile.write(dir, Math.min(logEndOffset, RecoveryPointFile.read(dir).orElse(0)));
    }

    /**
     * The segments compaction may rewrite, oldest first: the closed ones that end at or below
     * {@code keepFromOffset} and the last stable offset (an open transaction's records may still be aborted).
     */
    List<LogSegment> compactableSegments(long keepFromOffset) {
        LogSegment[] current = segments;
        long below = Math.min(keepFromOffset, lastStableOffset());
        List<LogSegment> closed = new ArrayList<>();
        for (int i = 0; i < current.length - 1 && current[i].nextOffset() <= below; i++) {
            closed.add(current[i]);
        }
        return closed;
    }

    /** The aborted transactions holding an offset in {@code [from, to)}, by marker offset. */
    List<AppendState.AbortedTransaction> abortedTransactions(long from, long to) {
        return transactions.abortedOverlapping(from, to);
    }

    /**
     * Whether a compaction pass over the segments up to {@code endOffset} may remove something the last did not: a
     * segment was closed since, or a tombstone it kept has expired by {@code nowMs}.
     */
    boolean compactionDue(long endOffset, long nowMs) {
        return endOffset > compactedThroughOffset || nowMs >= nextTombstoneExpiryMs;
    }

    /** Notes a compaction pass over the segments up to {@code endOffset}. */
    void compactedThrough(long endOffset, long tombstoneExpiryMs) {
        compactedThroughOffset = endOffset;
        nextTombstoneExpiryMs = tombstoneExpiryMs;
    }

    /**
     * Swaps the compacted copy of {@code segment} in {@code stagingDir} (its log, indexes and
     * {@link io.tidemark.core.log.segment.CompactionMarker}, fsynced) into the log. In this order, so that a crash
     * leaves a segment the loader opens: the marker, then the old indexes deleted, then the log renamed over the old
     * one (the switch), then the new indexes, then the directory fsynced. Reads that leased the old files finish on
     * them; later ones find the segment closed, wait for the lock and read its replacement.
     *
     * @return false, having deleted the staged files, when the log no longer holds {@code segment}
     * @throws UncheckedIOException when a step of the swap fails: the log takes no more changes from then on, and a
     *                              restart finishes or undoes the swap ({@link LogLoader})
     */
    boolean replaceCompacted(LogSegment segment, Path stagingDir) throws IOException {
        lock.lock();
        try {
            checkOpen();
            LogSegment[] current = segments;
            int index = Arrays.asList(current).indexOf(segment);
            if (index < 0 || index == current.length - 1) {
                DurableFiles.deleteTree(stagingDir);
                return false;
            }
            long base = segment.baseOffset();
            try {
                segment.close();
                Disk.move(CompactionMarker.file(stagingDir, base), CompactionMarker.file(dir, base),
                        StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                for (String suffix : LogSegment.INDEX_SUFFIXES) {
                    Files.deleteIfExists(LogSegment.file(dir, base, suffix));
                }
                List<String> logThenIndexes = new ArrayList<>(List.of(LogSegment.LOG_SUFFIX));
                logThenIndexes.addAll(LogSegment.INDEX_SUFFIXES);
                for (String suffix : logThenIndexes) {
                    Disk.move(LogSegment.file(stagingDir, base, suffix), LogSegment.file(dir, base, suffix),
                            StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                }
                DurableFiles.syncDirectory(dir);
                DurableFiles.deleteTree(stagingDir);
                SegmentSettings settings = SegmentSettings.of(config, files);
                LogSegment replacement = LogSegment.open(dir, base, settings, false);
                String problem = SegmentLoader.load(replacement);
                if (problem != null) {
                    LOG.warn("Recovering the compacted {} ({})", replacement.logFile(), problem);
                    SegmentRecovery.recover(replacement, index == 0 ? LogSegment.NO_TIME
                            : lastReceiveTime(Arrays.copyOf(current, index)), validator, settings);
                    replacement.closeForAppends();
                }
                replacement.followReceiveTime(index == 0 ? LogSegment.NO_TIME
                        : lastReceiveTime(Arrays.copyOf(current, index)));
                if (replacement.nextOffset() != segment.nextOffset()) {
                    throw new IOException("the compacted " + replacement.logFile() + " ends at offset "
                            + replacement.nextOffset() + ", not " + segment.nextOffset() + " as the segment it replaced");
                }
                LogSegment[] replaced = current.clone();
                replaced[index] = replacement;
                segments = replaced;
                return true;
            } catch (IOException e) {
                throw failed("swapping the compacted segment at offset " + base + " into " + dir, e);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Applies {@code retention.ms} and {@code retention.bytes}: deletes segments, oldest first, whose largest
     * ReceiveTime is older than {@code nowMs - retention.ms}, then while the log without the oldest segment
     * still holds at least {@code retention.bytes}. Never the active segment, nor any with {@code cleanup.policy}
     * {@code compact} alone. The log start offset moves up to the first segment kept.
     */
    public RetentionResult deleteExpiredSegments(long nowMs) {
        return deleteExpiredSegments(nowMs, Long.MAX_VALUE);
    }

    /**
     * Retention that keeps every segment holding offsets at or above {@code keepFromOffset}: a replicated partition
     * passes its last snapshot's log end offset, since after a restart it cuts the log back to that offset and
     * replays the Raft log from there, which needs those segments.
     */
    public RetentionResult deleteExpiredSegments(long nowMs, long keepFromOffset) {
        lock.lock();
        try {
            checkOpen();
            LogSegment[] current = segments;
            int wanted = expiredSegments(current, nowMs);
            int expired = 0;
            while (expired < wanted && current[expired].nextOffset() <= keepFromOffset) {
                expired++;
            }
            if (expired == 0) {
                return new RetentionResult(0, 0, current[0].baseOffset(), wanted);
            }
            segments = Arrays.copyOfRange(current, expired, current.length);
            long deletedBytes = 0;
            for (int i = 0; i < expired; i++) {
                deletedBytes += current[i].sizeBytes();
                current[i].delete();
                OriginSnapshotFile.delete(dir, current[i].baseOffset());
            }
            transactions.forgetAbortedBelow(segments[0].baseOffset());
            DurableFiles.syncDirectory(dir);
            LOG.info("Retention deleted {} segments ({} bytes) of {}; log start offset is now {}", expired,
                    deletedBytes, dir, segments[0].baseOffset());
            return new RetentionResult(expired, deletedBytes, segments[0].baseOffset(), wanted - expired);
        } catch (IOException e) {
            throw failed("deleting segments of " + dir, e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * How many of the oldest segments retention removes: those whose largest ReceiveTime is older than
     * {@code retention.ms}, then more while the log stays above {@code retention.bytes}; never the active segment.
     */
    private int expiredSegments(LogSegment[] current, long nowMs) {
        if (!config.cleanupPolicy().deletes()) {
            return 0;
        }
        int closed = current.length - 1;
        int expired = 0;
        long retentionMs = TopicConfig.limit(config.retentionMs());
        while (expired < closed && current[expired].maxReceiveTimeMs() < nowMs - retentionMs) {
            expired++;
        }
        long excess = -TopicConfig.limit(config.retentionBytes());
        for (int i = expired; i < current.length; i++) {
            excess += current[i].sizeBytes();
        }
        while (expired < closed && excess - current[expired].sizeBytes() >= 0) {
            excess -= current[expired].sizeBytes();
            expired++;
        }
        return expired;
    }

    /** fsyncs when {@code flush.ms} passed since the last fsync; for the broker's periodic flush. */
    public void maybeFlush(long nowMs) {
        flush(nowMs, true);
    }

    /** fsyncs everything appended so far. */
    public void flush(long nowMs) {
        flush(nowMs, false);
    }

    /**
     * fsyncs everything appended so far, unless the log was closed, which fsynced it: for a flush that may race with
     * the log's removal (a snapshot's, off the thread that closes logs). A log a disk error failed is not closed:
     * its flush fails, so no snapshot records it.
     */
    public void flushUnlessClosed(long nowMs) {
        lock.lock();
        try {
            if (!closed) {
                checkOpen();
                flushLocked(nowMs);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * fsyncs the active segment's log file when at least {@code minBytes} were appended to it since the last
     * write-back, so the page cache never holds a large backlog of the partition's writes: Linux writes dirty pages
     * back in bulk once they are 30 s old ({@code vm.dirty_expire_centisecs}), and on a disk that also holds the
     * Raft log, the Raft log's fsync of every entry then waits behind seconds' worth of a busy broker's segment
     * writes (docs/benchmarks.md, "Dirty pages"). Unlike a flush, it takes the lock only to pick the segment, not for
     * the fsync (appends go on meanwhile), and it moves no recovery point: it bounds the disk's work, not what a
     * crash keeps. A segment closed or replaced meanwhile was fsynced by whoever did that.
     *
     * @return whether it fsynced
     * @throws IOException when the fsync failed; the segment's next flush fails too
     */
    public boolean writeBack(long minBytes) throws IOException {
        LogSegment active;
        lock.lock();
        try {
            if (closed || diskFailure != null) {
                return false;
            }
            active = segments[segments.length - 1];
            int since = active == writtenBack ? writtenBackBytes : 0;
            if (active.sizeBytes() - since < minBytes) {
                return false;
            }
            writtenBack = active;
            writtenBackBytes = active.sizeBytes();
        } finally {
            lock.unlock();
        }
        try {
            active.writeBack();
            return true;
        } catch (SegmentClosedException e) {
            return false;
        }
    }

    private void flush(long nowMs, boolean onlyWhenDue) {
        lock.lock();
        try {
            checkOpen();
            if (!onlyWhenDue || (unflushedRecords > 0 && nowMs - lastFlushMs >= TopicConfig.limit(config.flushMs()))) {
                flushLocked(nowMs);
            }
        } finally {
            lock.unlock();
        }
    }

    private void flushLocked(long nowMs) {
        try {
            segments[segments.length - 1].flush();
            RecoveryPointFile.write(dir, logEndOffset);
        } catch (IOException e) {
            throw failed("flushing " + dir, e);
        }
        unflushedRecords = 0;
        lastFlushMs = nowMs;
    }

    /** Offset of the first record the log holds. */
    public long logStartOffset() {
        return segments[0].baseOffset();
    }

    /** Offset the next record will get. */
    public long logEndOffset() {
        return logEndOffset;
    }

    /** ReceiveTime of the last batch, or empty when the log never held one. */
    public OptionalLong lastReceiveTimeMs() {
        lock.lock();
        try {
            return lastReceiveTimeMs == LogSegment.NO_TIME ? OptionalLong.empty() : OptionalLong.of(lastReceiveTimeMs);
        } finally {
            lock.unlock();
        }
    }

    public TopicConfig config() {
        return config;
    }

    /** The partition's directory. */
    public Path dir() {
        return dir;
    }

    /** The last origin offset of {@code origin} this partition holds through mirrored batches, and where it is. */
    public Optional<HeldOrigin> heldOrigin(OriginPartition origin) {
        lock.lock();
        try {
            return origins.held(origin);
        } finally {
            lock.unlock();
        }
    }

    /**
     * What the next appends depend on besides their batches, now: a replicated partition's group keeps it in its
     * snapshot and reopens the log from it ({@link #openAt}).
     */
    public AppendState appendState() {
        lock.lock();
        try {
            return new AppendState(logEndOffset, lastReceiveTimeMs == LogSegment.NO_TIME ? OptionalLong.empty()
                    : OptionalLong.of(lastReceiveTimeMs), producers.entries(), origins.entries(),
                    transactions.openEntries(), transactions.abortedEntries());
        } finally {
            lock.unlock();
        }
    }

    /**
     * How long after its last stored batch, in ReceiveTime, an idempotent producer is forgotten
     * ({@code producer.id.expiration.ms}; a day until set): from the next append on. Replicas must take it at the
     * same append, as a group's entries give it to them.
     */
    public void producerIdExpirationMs(long expirationMs) {
        lock.lock();
        try {
            producers.expiryMs(expirationMs);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes a topic's new configuration: limits, flushing and retention apply from the next call; segment and
     * index sizes from the next segment.
     */
    public void updateConfig(TopicConfig newConfig) {
        lock.lock();
        try {
            config = newConfig;
        } finally {
            lock.unlock();
        }
    }

    /** The segments, oldest first. */
    public List<SegmentInfo> segments() {
        List<SegmentInfo> infos = new ArrayList<>();
        for (LogSegment s : segments) {
            infos.add(new SegmentInfo(s.baseOffset(), s.nextOffset(), s.sizeBytes(), s.firstReceiveTimeMs(),
                    s.maxReceiveTimeMs(), s.maxSendTimeMs(), s.indexEntries(), s.compacted()));
        }
        return infos;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("log " + dir + " is closed");
        }
        if (diskFailure != null) {
            throw new UncheckedIOException("the log " + dir + " takes no more changes since a disk error ("
                    + diskFailure.getMessage() + "); restart the broker once the disk is repaired: the log recovers "
                    + "from what is durable", diskFailure);
        }
    }

    /** Fails the log for good on a disk error in a change ({@link #diskFailure}); the error for the caller. */
    private UncheckedIOException failed(String doing, IOException e) {
        if (diskFailure == null) {
            diskFailure = e;
            LOG.error("{} failed; the log takes no more changes until the broker restarts", doing, e);
        }
        return new UncheckedIOException(doing + " failed: " + e.getMessage(), e);
    }

    /** Whether a disk error failed a change of the log, which then takes none until a restart recovers it. */
    public boolean diskFailed() {
        lock.lock();
        try {
            return diskFailure != null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * fsyncs the log, trims the active segment's indexes, records the recovery point and writes the
     * clean-shutdown marker, so the next open trusts the files without scanning them.
     */
    @Override
    public void close() throws IOException {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (diskFailure != null) {
                for (LogSegment segment : segments) {
                    segment.close();
                }
                return;
            }
            LogSegment active = segments[segments.length - 1];
            active.closeForAppends();
            RecoveryPointFile.write(dir, logEndOffset);
            for (LogSegment segment : segments) {
                segment.close();
            }
            DurableFiles.writeAtomically(dir.resolve(CLEAN_SHUTDOWN_FILE), new byte[0]);
        } finally {
            lock.unlock();
        }
    }
}
