package io.tidemark.core.log.segment;

import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.record.RecordBatchValidator;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * One segment of a partition log: the {@code .log} file of whole batches ({@link RecordBatchFormat}) that
 * starts at {@link #baseOffset()}, and its three sparse indexes: {@code .index} ({@link OffsetIndex}),
 * {@code .timeindex} and {@code .sendindex} ({@link TimeIndex}). Every file is named by the base offset in
 * 20 digits, e.g. {@code 00000000000000000300.log}.
 *
 * <p>A segment the log compactor rewrote has a marker beside it, {@code .compacted} ({@link CompactionMarker}): its
 * batches may start above the base offset and leave gaps between them (never inside a batch), which loading and
 * recovery accept only there, so a damaged base offset is still caught elsewhere; and the marker says where the
 * segment ends (the next segment's base offset), which its last batch no longer says when its last records went.
 *
 * <p>The three indexes get an entry at the same batches: the first batch appended after at least
 * {@code index.interval.bytes} of batches since the previous entry. Loading a segment checks that they agree
 * with each other and with the log, and {@link SegmentRecovery} rebuilds them when they do not.
 *
 * <p>Open files: the segment's state (offsets, times, size, index entry counts) stays on the heap for its whole life,
 * but its files are open only while the process's {@link OpenFileCache} holds them ({@link SegmentFiles}). Every read,
 * append or scan leases them once ({@link OpenSegment}), which opens them again when the cache had closed them: at
 * most one open per batch appended, and only after an eviction. A log file written to since its last fsync is
 * fsynced before the cache closes it ({@link OpenSegment#closeFiles()}); when that fsync fails, every later
 * {@link #flush()} fails, so the recovery point never passes writes that may be lost.
 *
 * <p>Threading: one writer (the log's append path, under its lock) and any number of readers. The writer
 * writes a batch and its index entries before it publishes the new size through a volatile field; readers
 * read {@link #sizeBytes()} first and never look past it.
 */
public final class LogSegment implements Closeable {
    /** A time field of a segment that holds no batch. */
    public static final long NO_TIME = Long.MIN_VALUE;
    public static final String LOG_SUFFIX = ".log";
    /** The suffixes of the three index files: offsets, ReceiveTimes, SendTimes. */
    public static final List<String> INDEX_SUFFIXES = List.of(OffsetIndex.SUFFIX, TimeIndex.RECEIVE_TIME_SUFFIX,
            TimeIndex.SEND_TIME_SUFFIX);
    /** The marker of a segment whose offsets may have gaps (see the class comment). */
    public static final String COMPACTED_SUFFIX = ".compacted";
    /**
     * The window a SendTime lookup reads a batch's records through: 64 KiB, so a batch of the producer's default
     * {@code batch.size} (256 KiB) takes at most 4 reads, about 2 for a target in its middle.
     */
    private static final int SEND_TIME_WINDOW_BYTES = 64 * 1024;
    /**
     * One window per thread, shared by every segment (a thread runs one lookup at a time), so a lookup allocates no
     * buffer the size of a batch: a new buffer per lookup made 223 KB of garbage per lookup in batches of 256 KiB,
     * and a young GC on the leader about every 1,000 lookups. Direct, so a read fills it with no copy through the
     * JDK's temporary direct buffer.
     */
    private static final ThreadLocal<ByteBuffer> SEND_TIME_WINDOWS =
            ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(SEND_TIME_WINDOW_BYTES));

    private final SegmentFiles files;
    private final long baseOffset;
    private final int indexIntervalBytes;

    private volatile int sizeBytes;
    private volatile long nextOffset;
    private volatile long firstReceiveTimeMs = NO_TIME;
    private volatile long maxReceiveTimeMs = NO_TIME;
    private volatile long maxSendTimeMs = NO_TIME;
    private int bytesSinceLastIndexEntry;

    private LogSegment(SegmentFiles files, long baseOffset, int indexIntervalBytes) {
        this.files = files;
        this.baseOffset = baseOffset;
        this.indexIntervalBytes = indexIntervalBytes;
        this.nextOffset = baseOffset;
    }

    /** Creates an empty segment that takes appends. */
    public static LogSegment create(Path dir, long baseOffset, SegmentSettings settings) throws IOException {
        return new LogSegment(SegmentFiles.create(dir, baseOffset, settings), baseOffset,
                settings.indexIntervalBytes());
    }

    /**
     * Opens a segment's files; it is empty until {@link SegmentLoader} or {@link SegmentRecovery} loads it.
     *
     * @param writable whether it will take appends (the active segment)
     */
    public static LogSegment open(Path dir, long baseOffset, SegmentSettings settings, boolean writable)
            throws IOException {
        return new LogSegment(SegmentFiles.open(dir, baseOffset, settings, writable), baseOffset,
                settings.indexIntervalBytes());
    }

    /** The file of segment {@code baseOffset} with {@code suffix}: the offset in 20 digits. */
    public static Path file(Path dir, long baseOffset, String suffix) {
        return dir.resolve(String.format("%020d", baseOffset) + suffix);
    }

    SegmentFiles files() {
        return files;
    }

    /**
     * Deletes the index files and starts empty writable ones; recovery refills them. The caller holds no lease of
     * this segment's files.
     */
    void resetIndexes(SegmentSettings settings, long logBytes) throws IOException {
        files.resetIndexes(settings, logBytes);
        sizeBytes = 0;
        nextOffset = baseOffset;
        firstReceiveTimeMs = NO_TIME;
        maxReceiveTimeMs = NO_TIME;
        maxSendTimeMs = NO_TIME;
        bytesSinceLastIndexEntry = 0;
    }

    /**
     * Sets what {@link SegmentLoader} learned from the files; a compacted segment ends where its marker says.
     */
    void restore(int size, long next, long firstReceiveTime, long maxReceiveTime, long maxSendTime,
                 int bytesSinceEntry) {
        nextOffset = Math.max(next, files.compactedEnd().orElse(next));
        firstReceiveTimeMs = firstReceiveTime;
        maxReceiveTimeMs = maxReceiveTime;
        maxSendTimeMs = maxSendTime;
        bytesSinceLastIndexEntry = bytesSinceEntry;
        sizeBytes = size;
    }

    int indexIntervalBytes() {
        return indexIntervalBytes;
    }

    /**
     * Appends a validated, stamped batch (the buffer between position and limit; the position is kept).
     *
     * @param maxSendTimeMs the batch's Max SendTime
     */
    public void append(ByteBuffer batch, long batchBaseOffset, long lastOffset, long receiveTimeMs,
                       long maxSendTimeMs) throws IOException {
        int position = sizeBytes;
        int size = batch.remaining();
        try (OpenSegment open = files.acquire()) {
            open.write(batch, position);
            track(open, position, size, batchBaseOffset, lastOffset, receiveTimeMs, maxSendTimeMs);
        }
    }

    /** Accounts for a batch now in the file: index entries, times, next offset, then the published size. */
    void track(OpenSegment open, int position, int size, long batchBaseOffset, long lastOffset, long receiveTimeMs,
               long batchMaxSendTimeMs) throws IOException {
        long sendTimeSoFar = Math.max(maxSendTimeMs, batchMaxSendTimeMs);
        if (bytesSinceLastIndexEntry >= indexIntervalBytes) {
            open.offsetIndex().append(batchBaseOffset, position);
            open.receiveTimeIndex().append(receiveTimeMs, batchBaseOffset);
            open.sendTimeIndex().append(sendTimeSoFar, batchBaseOffset);
            bytesSinceLastIndexEntry = 0;
        }
        bytesSinceLastIndexEntry += size;
        if (firstReceiveTimeMs == NO_TIME) {
            firstReceiveTimeMs = receiveTimeMs;
        }
        maxReceiveTimeMs = receiveTimeMs;
        maxSendTimeMs = sendTimeSoFar;
        nextOffset = lastOffset + 1;
        sizeBytes = position + size;
    }

    /**
     * Lets the segment take batches above its next offset, copied from a compacted log, and end at
     * {@code endOffset} when that is past its last batch: writes its compaction marker.
     */
    public void endCompactedAt(long endOffset) throws IOException {
        files.markCompacted(endOffset);
        nextOffset = Math.max(nextOffset, endOffset);
    }

    /**
     * After {@link SegmentRecovery} kept every batch of a compacted segment: it ends where its marker says, past its
     * last batch when compaction removed the last records.
     */
    void endAsCompacted() {
        files.compactedEnd().ifPresent(end -> nextOffset = Math.max(nextOffset, end));
    }

    /**
     * Gives a compacted segment left without batches the largest ReceiveTime of the segments before it, so the
     * segments' largest ReceiveTimes never decrease along the log, which a lookup by ReceiveTime binary-searches.
     */
    public void followReceiveTime(long previousMaxReceiveTimeMs) {
        if (sizeBytes == 0 && compacted()) {
            maxReceiveTimeMs = previousMaxReceiveTimeMs;
        }
    }

    /** Whether an index has no room for another entry; the log rolls before the next append then. */
    public boolean indexesFull() {
        return files.offsetIndex().isFull() || files.receiveTimeIndex().isFull() || files.sendTimeIndex().isFull();
    }

    /**
     * Reads whole batches starting with the one that holds {@code offset}: at most {@code maxBytes}, but at
     * least that first batch whatever its size, so a consumer always makes progress.
     *
     * @return the batches, or an empty buffer when the segment holds no batch at or after {@code offset}
     */
    public ByteBuffer read(long offset, int maxBytes) throws IOException {
        int end = sizeBytes;
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE_BYTES);
        try (OpenSegment open = files.acquire()) {
            int position = findBatch(open, offset, header, end);
            if (position < 0) {
                return ByteBuffer.allocate(0);
            }
            int first = totalSize(header, 0);
            ByteBuffer chunk = ByteBuffer.allocate(Math.min(Math.max(maxBytes, first), end - position));
            open.readFully(chunk, position);
            chunk.flip();
            int whole = 0;
            while (chunk.limit() - whole >= LOG_OVERHEAD_BYTES && totalSize(chunk, whole) <= chunk.limit() - whole) {
                whole += totalSize(chunk, whole);
            }
            return chunk.limit(whole);
        }
    }

    /**
     * Position of the batch holding {@code offset} (its header left in {@code header}), or -1 when none
     * before {@code end} does.
     */
    private int findBatch(OpenSegment open, long offset, ByteBuffer header, int end) throws IOException {
        int position = open.floorPosition(offset);
        while (position < end) {
            int size = open.readHeader(position, header, end);
            if (size < 0) {
                throw new IllegalStateException("batch at position " + position + " of " + logFile()
                        + " runs past the published size " + end);
            }
            if (lastOffset(header, 0) >= offset) {
                return position;
            }
            position += size;
        }
        return -1;
    }

    /**
     * The first batch whose ReceiveTime is at least {@code receiveTimeMs}: its base offset, ReceiveTime and
     * the SendTime of its first record; or null when the segment has none.
     */
    public SegmentMatch findByReceiveTime(long receiveTimeMs) throws IOException {
        int end = sizeBytes;
        if (maxReceiveTimeMs < receiveTimeMs) {
            return null;
        }
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE_BYTES);
        try (OpenSegment open = files.acquire()) {
            int position = findBatch(open, open.receiveTimeScanStart(receiveTimeMs), header, end);
            while (position >= 0 && position < end) {
                int size = open.readHeader(position, header, end);
                if (receiveTime(header, 0) >= receiveTimeMs) {
                    return new SegmentMatch(RecordBatchFormat.baseOffset(header, 0), receiveTime(header, 0),
                            firstSendTime(header, 0));
                }
                position += size;
            }
            return null;
        }
    }

    /**
     * The first record, in log order, whose SendTime is at least {@code sendTimeMs}, or null when the segment
     * has none.
     */
    public SegmentMatch findBySendTime(long sendTimeMs, RecordBatchReader reader) throws IOException {
        int end = sizeBytes;
        if (maxSendTimeMs < sendTimeMs) {
            return null;
        }
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE_BYTES);
        try (OpenSegment open = files.acquire()) {
            int position = findBatch(open, open.sendTimeScanStart(sendTimeMs), header, end);
            while (position >= 0 && position < end) {
                int size = open.readHeader(position, header, end);
                if (maxSendTime(header, 0) >= sendTimeMs) {
                    int batchPosition = position;
                    RecordBatchReader.SendTimeMatch match = reader.firstRecordWithSendTimeAtLeast(header,
                            (into, at) -> open.readFully(into, batchPosition + at), SEND_TIME_WINDOWS.get(),
                            sendTimeMs);
                    return new SegmentMatch(match.offset(), receiveTime(header, 0), match.sendTimeMs());
                }
                position += size;
            }
            return null;
        }
    }

    /** Receives the batches of a scan, in order. */
    public interface BatchVisitor {
        /**
         * @param header the batch's header, at position 0
         * @param whole  reads the whole batch, for a visitor that needs more than the header
         */
        void visit(ByteBuffer header, WholeBatch whole) throws IOException;
    }

    /** Reads the batch a {@link BatchVisitor} is visiting, from the files the scan leased. */
    public interface WholeBatch {
        /** The batch, between position 0 and its size. */
        ByteBuffer read() throws IOException;
    }

    /**
     * Visits every batch, in order: a scan of a few header bytes per batch, and of a whole batch where the visitor
     * asks. The segment's files are leased for the whole scan (not opened when the segment is empty), so the visitor
     * must not read another segment.
     */
    public void forEachBatch(BatchVisitor visitor) throws IOException {
        int end = sizeBytes;
        if (end == 0) {
            return;
        }
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE_BYTES);
        try (OpenSegment open = files.acquire()) {
            ScanPosition scan = new ScanPosition(open);
            while (scan.position < end) {
                scan.size = open.readHeader(scan.position, header, end);
                if (scan.size < 0) {
                    throw new IllegalStateException("batch at position " + scan.position + " of " + logFile()
                            + " runs past the published size " + end);
                }
                visitor.visit(header, scan);
                scan.position += scan.size;
            }
        }
    }

    /** Where {@link #forEachBatch} is: the batch it visits. */
    private static final class ScanPosition implements WholeBatch {
        private final OpenSegment open;
        private int position;
        private int size;

        ScanPosition(OpenSegment open) {
            this.open = open;
        }

        @Override
        public ByteBuffer read() throws IOException {
            ByteBuffer batch = ByteBuffer.allocate(size);
            open.readFully(batch, position);
            return batch.flip();
        }
    }

    /** A record found by time: its offset and both of its times. */
    public record SegmentMatch(long offset, long receiveTimeMs, long sendTimeMs) {
    }

    /**
     * fsyncs the log file. The indexes are not: after a crash the active segment's are rebuilt from the log
     * whatever they hold, and a segment's indexes are fsynced when it rolls ({@link #closeForAppends()}).
     */
    public void flush() throws IOException {
        files.flush();
    }

    /**
     * fsyncs the log file's data without making it a flush: from a thread other than the log's writer, while it
     * writes, so the kernel never holds a large backlog of the segment's pages to write back at once (PartitionLog
     * {@code writeBack}).
     */
    public void writeBack() throws IOException {
        files.writeBack();
    }

    /** Ends appends: fsyncs the log and trims the index files to their entries (and fsyncs them). */
    public void closeForAppends() throws IOException {
        flush();
        files.trimIndexes();
    }

    /**
     * Cuts the segment just before the batch that starts at {@code batchBaseOffset} and rebuilds its indexes, so it
     * can take appends again: for a replica that throws away what its Raft log will give it again. A compacted
     * segment's marker then says it ends there.
     *
     * @throws IllegalArgumentException when no batch starts at that offset
     */
    public void truncateBefore(long batchBaseOffset, long previousMaxReceiveTimeMs, RecordBatchValidator validator,
                               SegmentSettings settings) throws IOException {
        if (compacted()) {
            files.markCompacted(batchBaseOffset);
        }
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE_BYTES);
        try (OpenSegment open = files.acquire()) {
            int position = findBatch(open, batchBaseOffset, header, sizeBytes);
            if (position < 0 || RecordBatchFormat.baseOffset(header, 0) != batchBaseOffset) {
                throw new IllegalArgumentException("no batch of " + logFile() + " starts at offset "
                        + batchBaseOffset);
            }
            open.truncate(position);
        }
        SegmentRecovery.recover(this, previousMaxReceiveTimeMs, validator, settings);
    }

    /** Closes the segment's files: now, or when the last read using them ends. Reads after this fail. */
    @Override
    public void close() {
        files.close();
    }

    /** Closes the segment and deletes its files. */
    public void delete() throws IOException {
        files.delete();
    }

    public Path logFile() {
        return files.logFile();
    }

    public long baseOffset() {
        return baseOffset;
    }

    /** Whether the segment was compacted: its batches may leave gaps between their offsets. */
    public boolean compacted() {
        return files.compactedEnd().isPresent();
    }

    /** Offset after the last record; the base offset when empty. */
    public long nextOffset() {
        return nextOffset;
    }

    public int sizeBytes() {
        return sizeBytes;
    }

    public long firstReceiveTimeMs() {
        return firstReceiveTimeMs;
    }

    public long maxReceiveTimeMs() {
        return maxReceiveTimeMs;
    }

    public long maxSendTimeMs() {
        return maxSendTimeMs;
    }

    /** Entries in each of the three indexes. */
    public int indexEntries() {
        return files.offsetIndex().entries();
    }

    @Override
    public String toString() {
        return "LogSegment[" + logFile() + ", offsets " + baseOffset + ".." + (nextOffset - 1) + ", " + sizeBytes
                + " bytes]";
    }
}
