package io.tidemark.core.log.segment;

import io.tidemark.core.log.file.Disk;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.core.log.index.IndexFile;
import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.OptionalLong;

/**
 * A segment's four files, by name and state, and the way to them while they are open. The segment keeps only this
 * on the heap (its {@link IndexFile}s: a few hundred bytes); the log file's descriptor and the index maps exist while
 * the process's {@link OpenFileCache} holds the segment open ({@link OpenSegment}), and {@link #acquire()} opens them
 * again when the cache had closed them.
 *
 * <p>Threading: {@link #acquire()} takes no lock while the files are open. Opening them takes this object's monitor,
 * so a segment is never opened twice at once; so do {@link #close()} and {@link #resetIndexes}, so nothing is
 * opened after the segment closed, nor over index files being replaced.
 */
final class SegmentFiles {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentFiles.class);

    private final Path dir;
    private final long baseOffset;
    private final OpenFileCache cache;
    private volatile IndexFile offsetIndex;
    private volatile IndexFile receiveTimeIndex;
    private volatile IndexFile sendTimeIndex;
    private volatile OpenSegment open;
    private volatile boolean closed;
    /** The end offset of a compacted segment ({@link CompactionMarker}): read at open, or since written. */
    private volatile OptionalLong compactedEnd;
    /**
     * The first fsync of the log file that failed, in a flush or as the cache closed the file
     * ({@link OpenSegment#closeFiles()}); sticky.
     */
    private volatile IOException fsyncFailure;

    private SegmentFiles(Path dir, long baseOffset, OpenFileCache cache, IndexFile offsetIndex,
                         IndexFile receiveTimeIndex, IndexFile sendTimeIndex, OptionalLong compactedEnd) {
        this.compactedEnd = compactedEnd;
        this.dir = dir;
        this.baseOffset = baseOffset;
        this.cache = cache;
        this.offsetIndex = offsetIndex;
        this.receiveTimeIndex = receiveTimeIndex;
        this.sendTimeIndex = sendTimeIndex;
    }

    /**
     * Creates the files of an empty segment that takes appends, deleting any left under its names (a compaction
     * marker too).
     */
    static SegmentFiles create(Path dir, long baseOffset, SegmentSettings settings) throws IOException {
        Path log = LogSegment.file(dir, baseOffset, LogSegment.LOG_SUFFIX);
        Files.deleteIfExists(log);
        Files.deleteIfExists(CompactionMarker.file(dir, baseOffset));
        Files.createFile(log);
        return new SegmentFiles(dir, baseOffset, settings.files(),
                IndexFile.create(indexPath(dir, baseOffset, OffsetIndex.SUFFIX), baseOffset, OffsetIndex.ENTRY_SIZE,
                        settings.indexPreallocationBytes(OffsetIndex.ENTRY_SIZE, 0)),
                IndexFile.create(indexPath(dir, baseOffset, TimeIndex.RECEIVE_TIME_SUFFIX), baseOffset,
                        TimeIndex.ENTRY_SIZE, settings.indexPreallocationBytes(TimeIndex.ENTRY_SIZE, 0)),
                IndexFile.create(indexPath(dir, baseOffset, TimeIndex.SEND_TIME_SUFFIX), baseOffset,
                        TimeIndex.ENTRY_SIZE, settings.indexPreallocationBytes(TimeIndex.ENTRY_SIZE, 0)),
                OptionalLong.empty());
    }

    /**
     * Opens the files of a segment on disk (index files that are missing start empty).
     *
     * @param writable whether it will take appends: its index files are then preallocated
     */
    static SegmentFiles open(Path dir, long baseOffset, SegmentSettings settings, boolean writable)
            throws IOException {
        Path log = LogSegment.file(dir, baseOffset, LogSegment.LOG_SUFFIX);
        if (!writable) {
            return new SegmentFiles(dir, baseOffset, settings.files(),
                    IndexFile.open(indexPath(dir, baseOffset, OffsetIndex.SUFFIX), baseOffset, OffsetIndex.ENTRY_SIZE),
                    IndexFile.open(indexPath(dir, baseOffset, TimeIndex.RECEIVE_TIME_SUFFIX), baseOffset,
                            TimeIndex.ENTRY_SIZE),
                    IndexFile.open(indexPath(dir, baseOffset, TimeIndex.SEND_TIME_SUFFIX), baseOffset,
                            TimeIndex.ENTRY_SIZE), CompactionMarker.read(dir, baseOffset));
        }
        long logBytes = Files.size(log);
        return new SegmentFiles(dir, baseOffset, settings.files(),
                IndexFile.openWritable(indexPath(dir, baseOffset, OffsetIndex.SUFFIX), baseOffset,
                        OffsetIndex.ENTRY_SIZE, settings.indexPreallocationBytes(OffsetIndex.ENTRY_SIZE, logBytes)),
                IndexFile.openWritable(indexPath(dir, baseOffset, TimeIndex.RECEIVE_TIME_SUFFIX), baseOffset,
                        TimeIndex.ENTRY_SIZE, settings.indexPreallocationBytes(TimeIndex.ENTRY_SIZE, logBytes)),
                IndexFile.openWritable(indexPath(dir, baseOffset, TimeIndex.SEND_TIME_SUFFIX), baseOffset,
                        TimeIndex.ENTRY_SIZE, settings.indexPreallocationBytes(TimeIndex.ENTRY_SIZE, logBytes)),
                CompactionMarker.read(dir, baseOffset));
    }

    private static Path indexPath(Path dir, long baseOffset, String suffix) {
        return LogSegment.file(dir, baseOffset, suffix);
    }

    /**
     * Leases the open files, opening them first when the cache closed them (one file descriptor; the index maps
     * follow when first used). End the lease with {@link OpenSegment#close()}, and lease no other segment until
     * then ({@link OpenFileCache}).
     *
     * @throws SegmentClosedException when the segment was closed or deleted
     */
    OpenSegment acquire() throws IOException {
        OpenSegment current = open;
        if (current != null && current.tryRetain()) {
            return current;
        }
        return reopen();
    }

    private synchronized OpenSegment reopen() throws IOException {
        if (closed) {
            throw new SegmentClosedException(logFile());
        }
        OpenSegment current = open;
        if (current != null && current.tryRetain()) {
            return current;
        }
        IndexFile offsets = offsetIndex;
        IndexFile receiveTimes = receiveTimeIndex;
        IndexFile sendTimes = sendTimeIndex;
        current = cache.open(() -> new OpenSegment(cache, this, Disk.open(logFile(), StandardOpenOption.READ,
                StandardOpenOption.WRITE), offsets, receiveTimes, sendTimes));
        open = current;
        return current;
    }

    /**
     * fsyncs the log file.
     *
     * @throws IOException when the fsync fails, or when one failed before (in a flush, or as the cache closed the
     *                     file): Linux marks the pages whose write-back failed clean and keeps no error for a later
     *                     fsync, which then succeeds over lost writes; so no flush of this segment succeeds after a
     *                     failed one, and the replica recovers from what is durable when it restarts
     */
    void flush() throws IOException {
        IOException failure = fsyncFailure;
        if (failure != null) {
            throw new IOException("an fsync of " + logFile() + " failed (" + failure.getMessage() + "), so batches "
                    + "written before it may be lost: no flush of the segment succeeds after that", failure);
        }
        try (OpenSegment open = acquire()) {
            open.force();
        }
    }

    /**
     * fsyncs the log file's data to bound what the page cache holds of it, from any thread, while the log's writer
     * goes on writing: unlike {@link #flush()}, it promises nothing about durability, and the next flush still
     * fsyncs. Nothing is done once an fsync failed: every later flush fails anyway.
     *
     * @throws SegmentClosedException when the segment was closed or deleted meanwhile
     */
    void writeBack() throws IOException {
        if (fsyncFailure != null) {
            return;
        }
        try (OpenSegment open = acquire()) {
            open.writeBack();
        }
    }

    /** Keeps the first failed fsync of the log file, for {@link #flush()}. */
    void fsyncFailed(IOException failure) {
        LOG.error("fsync of {} failed; no flush of it succeeds from now on", logFile(), failure);
        if (fsyncFailure == null) {
            fsyncFailure = failure;
        }
    }

    /**
     * Deletes the index files and starts empty writable ones with room for what a log of {@code logBytes} holds,
     * for recovery to fill. The open files are retired first, so no map of the old files outlives its last lease.
     * The caller holds no lease of this segment.
     */
    synchronized void resetIndexes(SegmentSettings settings, long logBytes) throws IOException {
        retireOpen();
        for (IndexFile index : indexes()) {
            index.delete();
        }
        offsetIndex = IndexFile.create(offsetIndex.file(), baseOffset, OffsetIndex.ENTRY_SIZE,
                settings.indexPreallocationBytes(OffsetIndex.ENTRY_SIZE, logBytes));
        receiveTimeIndex = IndexFile.create(receiveTimeIndex.file(), baseOffset, TimeIndex.ENTRY_SIZE,
                settings.indexPreallocationBytes(TimeIndex.ENTRY_SIZE, logBytes));
        sendTimeIndex = IndexFile.create(sendTimeIndex.file(), baseOffset, TimeIndex.ENTRY_SIZE,
                settings.indexPreallocationBytes(TimeIndex.ENTRY_SIZE, logBytes));
    }

    /** Cuts the index files to their entries and fsyncs them: the segment takes no more appends. */
    void trimIndexes() throws IOException {
        for (IndexFile index : indexes()) {
            index.trimToEntries();
        }
    }

    /**
     * Closes the files for good: now when no one leases them, else when the last lease ends. Later leases fail
     * with {@link SegmentClosedException}.
     */
    synchronized void close() {
        closed = true;
        retireOpen();
    }

    private void retireOpen() {
        OpenSegment current = open;
        open = null;
        if (current != null) {
            cache.retire(current);
        }
    }

    /** Closes the files and deletes them (the log file last, then the compaction marker). */
    void delete() throws IOException {
        close();
        for (IndexFile index : indexes()) {
            index.delete();
        }
        Files.deleteIfExists(logFile());
        Files.deleteIfExists(CompactionMarker.file(dir, baseOffset));
    }

    /** Writes the segment's compaction marker with {@code endOffset}: its offsets may have gaps from now on. */
    void markCompacted(long endOffset) throws IOException {
        CompactionMarker.write(dir, baseOffset, endOffset);
        compactedEnd = OptionalLong.of(endOffset);
    }

    /**
     * Where a compacted segment ends, from its marker; empty for a segment not
     * compacted, whose offsets are contiguous.
     */
    OptionalLong compactedEnd() {
        return compactedEnd;
    }

    /** The index files: offsets, ReceiveTimes, SendTimes. */
    List<IndexFile> indexes() {
        return List.of(offsetIndex, receiveTimeIndex, sendTimeIndex);
    }

    IndexFile offsetIndex() {
        return offsetIndex;
    }

    IndexFile receiveTimeIndex() {
        return receiveTimeIndex;
    }

    IndexFile sendTimeIndex() {
        return sendTimeIndex;
    }

    Path logFile() {
        return LogSegment.file(dir, baseOffset, LogSegment.LOG_SUFFIX);
    }

    /** The size of the log file on disk. */
    long logFileBytes() throws IOException {
        return Files.size(logFile());
    }
}
