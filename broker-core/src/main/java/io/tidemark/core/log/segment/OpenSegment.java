package io.tidemark.core.log.segment;

import io.tidemark.core.log.file.CachedFile;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.core.log.index.IndexFile;
import io.tidemark.core.log.index.MappedIndex;
import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;

import static io.tidemark.proto.record.RecordBatchFormat.HEADER_SIZE_BYTES;
import static io.tidemark.proto.record.RecordBatchFormat.totalSize;

/**
 * A segment's files while they are open: one entry of the process's {@link OpenFileCache}, leased from
 * {@link SegmentFiles#acquire()} and given back with {@link #close()}. It holds the log file's channel (the one file
 * descriptor an open segment costs) and maps each index file the first time a lease needs it (a map each, no file
 * descriptor): a segment only read by offset maps one index, a segment whose indexes are empty maps none.
 *
 * <p>I/O goes through here so that a channel closed under the segment is noticed: a thread interrupted in the
 * middle of a read or write makes Java close the channel for every user; the entry is then retired, and the next
 * lease opens the file again.
 *
 * <p>Durability: the log file is fsynced before its channel closes when anything was written through it since its
 * last fsync. Closing would lose no page (they belong to the file in the page cache), but it can lose the error of
 * writing them back: once no descriptor is open the kernel may drop the file's in-memory state with the error in
 * it, and the next fsync, on a new descriptor, then succeeds over lost data. A failed fsync, at close or not, is
 * handed to the owner ({@link SegmentFiles#fsyncFailed}), whose later flushes fail with it.
 *
 * <p>Threading: any number of leases at once; the log's single writer writes while readers read. Each index is
 * mapped once, under this object's monitor.
 */
final class OpenSegment extends CachedFile {
    private static final Logger LOG = LoggerFactory.getLogger(OpenSegment.class);

    private final SegmentFiles owner;
    private final FileChannel channel;
    /** Written through {@link #channel} since its last fsync; set and cleared by the log's single writer. */
    private volatile boolean unflushed;
    private final LazyIndex<OffsetIndex> offsetIndex;
    private final LazyIndex<TimeIndex> receiveTimeIndex;
    private final LazyIndex<TimeIndex> sendTimeIndex;

    OpenSegment(OpenFileCache cache, SegmentFiles owner, FileChannel channel, IndexFile offsets,
                IndexFile receiveTimes, IndexFile sendTimes) {
        super(cache);
        this.owner = owner;
        this.channel = channel;
        this.offsetIndex = new LazyIndex<>(offsets, OffsetIndex::map);
        this.receiveTimeIndex = new LazyIndex<>(receiveTimes, TimeIndex::map);
        this.sendTimeIndex = new LazyIndex<>(sendTimes, TimeIndex::map);
    }

    OffsetIndex offsetIndex() throws IOException {
        return offsetIndex.get();
    }

    TimeIndex receiveTimeIndex() throws IOException {
        return receiveTimeIndex.get();
    }

    TimeIndex sendTimeIndex() throws IOException {
        return sendTimeIndex.get();
    }

    /** Position of the batch in the last offset index entry at or below {@code offset}; 0 when there is none. */
    int floorPosition(long offset) throws IOException {
        return offsetIndex.isEmpty() ? 0 : offsetIndex.get().floorPosition(offset);
    }

    /** Where a scan for the first ReceiveTime at or after {@code timeMs} starts ({@link TimeIndex#scanStartOffset}). */
    long receiveTimeScanStart(long timeMs) throws IOException {
        return receiveTimeIndex.isEmpty() ? receiveTimeIndex.file.baseOffset()
                : receiveTimeIndex.get().scanStartOffset(timeMs);
    }

    /** Where a scan for the first SendTime at or after {@code timeMs} starts ({@link TimeIndex#scanStartOffset}). */
    long sendTimeScanStart(long timeMs) throws IOException {
        return sendTimeIndex.isEmpty() ? sendTimeIndex.file.baseOffset() : sendTimeIndex.get().scanStartOffset(timeMs);
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
        try {
            while (into.hasRemaining()) {
                int read = channel.read(into, at);
                if (read < 0) {
                    throw new IOException("end of the log file at position " + at);
                }
                at += read;
            }
        } catch (ClosedChannelException e) {
            throw closedUnder(e);
        }
    }

    /**
     * Writes the buffer (between position and limit; the position is kept) at {@code position}; when the write
     * fails, the file is cut back to {@code position}, so nothing of it stays.
     */
    void write(ByteBuffer bytes, long position) throws IOException {
        int start = bytes.position();
        if (!unflushed) {
            unflushed = true;
        }
        try {
            long at = position;
            while (bytes.hasRemaining()) {
                at += channel.write(bytes, at);
            }
        } catch (ClosedChannelException e) {
            throw closedUnder(e);
        } catch (IOException e) {
            channel.truncate(position);
            throw e;
        } finally {
            bytes.position(start);
        }
    }

    /** Cuts the log file at {@code size} and fsyncs it with its metadata. */
    void truncate(long size) throws IOException {
        try {
            unflushed = false;
            channel.truncate(size);
        } catch (ClosedChannelException e) {
            throw closedUnder(e);
        }
        fsync(true);
    }

    /** fsyncs the log file's data. */
    void force() throws IOException {
        unflushed = false;
        fsync(false);
    }

    /**
     * fsyncs the log file's data for {@link SegmentFiles#writeBack()}: a write-back, not a flush, so the file stays
     * marked as written since its last flush (a write racing this fsync may not be covered), and its close still
     * fsyncs it.
     */
    void writeBack() throws IOException {
        fsync(false);
    }

    /** A failed fsync is the segment's for good ({@link SegmentFiles#fsyncFailed}); an interrupt's close is not. */
    private void fsync(boolean metaData) throws IOException {
        try {
            channel.force(metaData);
        } catch (ClosedChannelException e) {
            throw closedUnder(e);
        } catch (IOException e) {
            owner.fsyncFailed(e);
            throw e;
        }
    }

    private ClosedChannelException closedUnder(ClosedChannelException e) {
        retire();
        return e;
    }

    /**
     * fsyncs the log file first when it holds writes no fsync covered yet (an eviction of the active segment between
     * flushes; the thread that needed the room waits for it). A channel Java closed under an interrupt cannot be
     * fsynced; its writes are fsynced by the segment's next flush.
     */
    @Override
    protected void closeFiles() {
        if (unflushed && channel.isOpen()) {
            try {
                channel.force(false);
            } catch (IOException e) {
                owner.fsyncFailed(e);
            }
        }
        try {
            channel.close();
        } catch (IOException e) {
            LOG.warn("Closing a segment's log file failed: {}", e.toString());
        }
        offsetIndex.close();
        receiveTimeIndex.close();
        sendTimeIndex.close();
    }

    /** Maps an index file for {@link LazyIndex}. */
    @FunctionalInterface
    private interface IndexMapper<T extends MappedIndex> {
        T map(IndexFile file) throws IOException;
    }

    /** An index file mapped the first time it is used, and unmapped with the segment's files. */
    private final class LazyIndex<T extends MappedIndex> {
        private final IndexFile file;
        private final IndexMapper<T> mapper;
        private volatile T index;

        LazyIndex(IndexFile file, IndexMapper<T> mapper) {
            this.file = file;
            this.mapper = mapper;
        }

        boolean isEmpty() {
            return file.entries() == 0;
        }

        T get() throws IOException {
            T mapped = index;
            if (mapped != null) {
                return mapped;
            }
            synchronized (OpenSegment.this) {
                if (index == null) {
                    index = mapper.map(file);
                }
                return index;
            }
        }

        /** Unmaps it; called when no lease is left. */
        void close() {
            T mapped = index;
            if (mapped != null) {
                mapped.close();
            }
        }
    }
}
