package io.tidemark.core.log.segment;

import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * One segment of a partition log: the {@code .log} file of whole batches ({@link RecordBatchFormat}) that
 * starts at {@link #baseOffset()}, and its three sparse indexes: {@code .index} ({@link OffsetIndex}),
 * {@code .timeindex} and {@code .sendindex} ({@link TimeIndex}). Every file is named by the base offset in
 * 20 digits, e.g. {@code 00000000000000000300.log}.
 *
 * <p>The three indexes get an entry at the same batches: the first batch appended after at least
 * {@code index.interval.bytes} of batches since the previous entry. Loading a segment checks that they agree
 * with each other and with the log, and {@link SegmentRecovery} rebuilds them when they do not.
 *
 * <p>Threading: one writer (the log's append path, under its lock) and any number of readers. The writer
 * writes a batch and its index entries before it publishes the new size through a volatile field; readers
 * read {@link #sizeBytes()} first and never look past it.
 */
public final class LogSegment implements Closeable {
    /** A time field of a segment that holds no batch. */
    public static final long NO_TIME = Long.MIN_VALUE;
    public static final String LOG_SUFFIX = ".log";
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

    private final Path dir;
    private final long baseOffset;
    private final int indexIntervalBytes;
    private final int maxIndexBytes;
    private final FileChannel channel;
    private OffsetIndex offsetIndex;
    private TimeIndex receiveTimeIndex;
    private TimeIndex sendTimeIndex;

    private volatile int sizeBytes;
    private volatile long nextOffset;
    private volatile long firstReceiveTimeMs = NO_TIME;
    private volatile long maxReceiveTimeMs = NO_TIME;
    private volatile long maxSendTimeMs = NO_TIME;
    private int bytesSinceLastIndexEntry;

    private LogSegment(Path dir, long baseOffset, int indexIntervalBytes, int maxIndexBytes, boolean writable)
            throws IOException {
        this.dir = dir;
        this.baseOffset = baseOffset;
        this.indexIntervalBytes = indexIntervalBytes;
        this.maxIndexBytes = maxIndexBytes;
        this.channel = FileChannel.open(file(dir, baseOffset, LOG_SUFFIX), StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
        this.nextOffset = baseOffset;
        openIndexes(writable);
    }

    /** Creates an empty segment that takes appends. */
    public static LogSegment create(Path dir, long baseOffset, int indexIntervalBytes, int maxIndexBytes)
            throws IOException {
        for (String suffix : List.of(LOG_SUFFIX, OffsetIndex.SUFFIX, TimeIndex.RECEIVE_TIME_SUFFIX,
                TimeIndex.SEND_TIME_SUFFIX)) {
            Files.deleteIfExists(file(dir, baseOffset, suffix));
        }
        return new LogSegment(dir, baseOffset, indexIntervalBytes, maxIndexBytes, true);
    }

    /**
     * Opens a segment's files; it is empty until {@link SegmentLoader} or {@link SegmentRecovery} loads it.
     *
     * @param writable whether it will take appends (the active segment)
     */
    public static LogSegment open(Path dir, long baseOffset, int indexIntervalBytes, int maxIndexBytes,
                                  boolean writable) throws IOException {
        return new LogSegment(dir, baseOffset, indexIntervalBytes, maxIndexBytes, writable);
    }

    /** The file of segment {@code baseOffset} with {@code suffix}: the offset in 20 digits. */
    public static Path file(Path dir, long baseOffset, String suffix) {
        return dir.resolve(String.format("%020d", baseOffset) + suffix);
    }

    private void openIndexes(boolean writable) throws IOException {
        offsetIndex = new OffsetIndex(file(dir, baseOffset, OffsetIndex.SUFFIX), baseOffset, maxIndexBytes, writable);
        receiveTimeIndex = new TimeIndex(file(dir, baseOffset, TimeIndex.RECEIVE_TIME_SUFFIX), baseOffset,
                maxIndexBytes, writable);
        sendTimeIndex = new TimeIndex(file(dir, baseOffset, TimeIndex.SEND_TIME_SUFFIX), baseOffset, maxIndexBytes,
                writable);
    }

    /** Deletes the index files and starts empty writable ones; recovery refills them. */
    void resetIndexes() throws IOException {
        closeIndexes();
        for (Path file : List.of(offsetIndex.file(), receiveTimeIndex.file(), sendTimeIndex.file())) {
            Files.deleteIfExists(file);
        }
        openIndexes(true);
        sizeBytes = 0;
        nextOffset = baseOffset;
        firstReceiveTimeMs = NO_TIME;
        maxReceiveTimeMs = NO_TIME;
        maxSendTimeMs = NO_TIME;
        bytesSinceLastIndexEntry = 0;
    }

    /** Sets what {@link SegmentLoader} learned from the files. */
    void restore(int size, long next, long firstReceiveTime, long maxReceiveTime, long maxSendTime,
                 int bytesSinceEntry) {
        nextOffset = next;
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
     * Reads the header of the batch at {@code position} into {@code header}.
     *
     * @return the batch's total size, or -1 when the header or the batch does not fit before {@code end}
     */
    int readHeader(int position, ByteBuffer header, int end) throws IOException {
        if (end - position < HEADER_SIZE_BYTES) {
            return -1;
        }
        header.clear();
        readFully(header, position);
        int size = totalSize(header, 0);
        return size < HEADER_SIZE_BYTES || size > end - position ? -1 : size;
    }

    void readFully(ByteBuffer into, long position) throws IOException {
        long at = position;
        while (into.hasRemaining()) {
            int read = channel.read(into, at);
            if (read < 0) {
                throw new IOException("end of " + logFile() + " at position " + at);
            }
            at += read;
        }
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
        int start = batch.position();
        try {
            long at = position;
            while (batch.hasRemaining()) {
                at += channel.write(batch, at);
            }
        } catch (IOException e) {
            channel.truncate(position);
            throw e;
        } finally {
            batch.position(start);
        }
        track(position, size, batchBaseOffset, lastOffset, receiveTimeMs, maxSendTimeMs);
    }

    /** Accounts for a batch now in the file: index entries, times, next offset, then the published size. */
    void track(int position, int size, long batchBaseOffset, long lastOffset, long receiveTimeMs,
               long batchMaxSendTimeMs) {
        long sendTimeSoFar = Math.max(maxSendTimeMs, batchMaxSendTimeMs);
        if (bytesSinceLastIndexEntry >= indexIntervalBytes) {
            offsetIndex.append(batchBaseOffset, position);
            receiveTimeIndex.append(receiveTimeMs, batchBaseOffset);
            sendTimeIndex.append(sendTimeSoFar, batchBaseOffset);
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

    /** Whether an index has no room for another entry; the log rolls before the next append then. */
    public boolean indexesFull() {
        return offsetIndex.isFull() || receiveTimeIndex.isFull() || sendTimeIndex.isFull();
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
        int position = findBatch(offset, header, end);
        if (position < 0) {
            return ByteBuffer.allocate(0);
        }
        int first = totalSize(header, 0);
        ByteBuffer chunk = ByteBuffer.allocate(Math.min(Math.max(maxBytes, first), end - position));
        readFully(chunk, position);
        chunk.flip();
        int whole = 0;
        while (chunk.limit() - whole >= LOG_OVERHEAD_BYTES && totalSize(chunk, whole) <= chunk.limit() - whole) {
            whole += totalSize(chunk, whole);
        }
        return chunk.limit(whole);
    }

    /**
     * Position of the batch holding {@code offset} (its header left in {@code header}), or -1 when none
     * before {@code end} does.
     */
    private int findBatch(long offset, ByteBuffer header, int end) throws IOException {
        int position = offsetIndex.floorPosition(offset);
        while (position < end) {
            int size = readHeader(position, header, end);
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
        int position = findBatch(receiveTimeIndex.scanStartOffset(receiveTimeMs), header, end);
        while (position >= 0 && position < end) {
            int size = readHeader(position, header, end);
            if (receiveTime(header, 0) >= receiveTimeMs) {
                return new SegmentMatch(RecordBatchFormat.baseOffset(header, 0), receiveTime(header, 0),
                        firstSendTime(header, 0));
            }
            position += size;
        }
        return null;
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
        int position = findBatch(sendTimeIndex.scanStartOffset(sendTimeMs), header, end);
        while (position >= 0 && position < end) {
            int size = readHeader(position, header, end);
            if (maxSendTime(header, 0) >= sendTimeMs) {
                int batchPosition = position;
                RecordBatchReader.SendTimeMatch match = reader.firstRecordWithSendTimeAtLeast(header,
                        (into, at) -> readFully(into, batchPosition + at), SEND_TIME_WINDOWS.get(), sendTimeMs);
                return new SegmentMatch(match.offset(), receiveTime(header, 0), match.sendTimeMs());
            }
            position += size;
        }
        return null;
    }

    /** Receives batch headers of a scan; the buffer holds one header at position 0. */
    public interface HeaderVisitor {
        void visit(ByteBuffer header) throws IOException;
    }

    /** Reads the header of every batch, in order (a scan of a few bytes per batch). */
    public void forEachBatchHeader(HeaderVisitor visitor) throws IOException {
        int end = sizeBytes;
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE_BYTES);
        for (int position = 0; position < end; ) {
            int size = readHeader(position, header, end);
            if (size < 0) {
                throw new IllegalStateException("batch at position " + position + " of " + logFile()
                        + " runs past the published size " + end);
            }
            visitor.visit(header);
            position += size;
        }
    }

    /** A record found by time: its offset and both of its times. */
    public record SegmentMatch(long offset, long receiveTimeMs, long sendTimeMs) {
    }

    /** fsyncs the log and the indexes. */
    public void flush() throws IOException {
        channel.force(false);
        offsetIndex.flush();
        receiveTimeIndex.flush();
        sendTimeIndex.flush();
    }

    /** Ends appends: fsyncs the log and trims the index files to their entries. */
    public void closeForAppends() throws IOException {
        channel.force(false);
        offsetIndex.trimToEntries();
        receiveTimeIndex.trimToEntries();
        sendTimeIndex.trimToEntries();
    }

    /**
     * Cuts the segment just before the batch that starts at {@code batchBaseOffset} and rebuilds its indexes, so it
     * can take appends again: for a replica that throws away what its Raft log will give it again.
     *
     * @throws IllegalArgumentException when no batch starts at that offset
     */
    public void truncateBefore(long batchBaseOffset, long previousMaxReceiveTimeMs,
                               io.tidemark.proto.record.RecordBatchValidator validator) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE_BYTES);
        int position = findBatch(batchBaseOffset, header, sizeBytes);
        if (position < 0 || RecordBatchFormat.baseOffset(header, 0) != batchBaseOffset) {
            throw new IllegalArgumentException("no batch of " + logFile() + " starts at offset " + batchBaseOffset);
        }
        truncateLogTo(position);
        SegmentRecovery.recover(this, previousMaxReceiveTimeMs, validator);
    }

    void truncateLogTo(int position) throws IOException {
        channel.truncate(position);
        channel.force(true);
    }

    long fileSize() throws IOException {
        return channel.size();
    }

    @Override
    public void close() {
        closeIndexes();
        try {
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException("closing " + logFile(), e);
        }
    }

    private void closeIndexes() {
        offsetIndex.close();
        receiveTimeIndex.close();
        sendTimeIndex.close();
    }

    /** Closes the segment and deletes its files. */
    public void delete() throws IOException {
        close();
        for (Path file : List.of(offsetIndex.file(), receiveTimeIndex.file(), sendTimeIndex.file(), logFile())) {
            Files.deleteIfExists(file);
        }
    }

    public Path logFile() {
        return file(dir, baseOffset, LOG_SUFFIX);
    }

    public long baseOffset() {
        return baseOffset;
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

    public OffsetIndex offsetIndex() {
        return offsetIndex;
    }

    public TimeIndex receiveTimeIndex() {
        return receiveTimeIndex;
    }

    public TimeIndex sendTimeIndex() {
        return sendTimeIndex;
    }

    @Override
    public String toString() {
        return "LogSegment[" + logFile() + ", offsets " + baseOffset + ".." + (nextOffset - 1) + ", " + sizeBytes
                + " bytes]";
    }
}
