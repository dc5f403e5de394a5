package io.tidemark.proto.record;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * Decodes records out of batches that were validated when they were appended (bytes read from a log or
 * from a fetch). Two uses: {@link #records} builds {@link Record}s for tools and consumers;
 * {@link #firstRecordWithSendTimeAtLeast} finds a record by SendTime without allocating, for lookups, reading a
 * batch a window at a time.
 *
 * <p>Not thread-safe: owns a reusable cursor.
 */
public final class RecordBatchReader {
    private final RecordCursor cursor = new RecordCursor();

    /**
     * Every record of every whole batch between the buffer's position and limit, in log order. Bytes nobody validated
     * (a client's batch for an internal topic) are read too: a batch shorter than its header, or a record that runs
     * past its batch, throws a {@code RecordFormatException} saying where, and the read always ends.
     */
    public List<Record> records(ByteBuffer batches) {
        List<Record> records = new ArrayList<>();
        int position = batches.position();
        while (batches.limit() - position >= LOG_OVERHEAD_BYTES) {
            int size = totalSize(batches, position);
            if (size < HEADER_SIZE_BYTES) {
                // a length below the header's would step the position back, or not at all: a read that never ends
                throw new RecordFormatException("the batch at position " + position + " has length "
                        + (size - LOG_OVERHEAD_BYTES) + ", shorter than its header (" + (HEADER_SIZE_BYTES
                        - LOG_OVERHEAD_BYTES) + " bytes after its first " + LOG_OVERHEAD_BYTES + ")");
            }
            if (size > batches.limit() - position) {
                break;
            }
            decodeBatch(batches, position, records);
            position += size;
        }
        return records;
    }

    /**
     * The most bytes a record's Length, Offset Delta and SendTime Delta take: what a SendTime scan must see of a
     * record in its window to decode its SendTime and find where the next record starts.
     */
    public static final int RECORD_PREFIX_MAX_BYTES = 2 * Varints.MAX_INT_BYTES + Varints.MAX_LONG_BYTES;

    /** Reads bytes of one batch, wherever it lies (a segment file, a buffer). */
    public interface BatchBytes {
        /** Fills {@code into}, from its position to its limit, with the batch's bytes from {@code batchPosition} on. */
        void read(ByteBuffer into, int batchPosition) throws IOException;
    }

    /**
     * The first record of a batch whose SendTime is at least {@code sendTimeMs}, or null when none is. Reads the
     * records through {@code window}, refilled from {@code bytes} where the next record's first
     * {@value #RECORD_PREFIX_MAX_BYTES} bytes are not in it: only the bytes before the record found are read, a window
     * at a time, whatever the batch's size, and a record longer than the window is skipped without reading its key,
     * value and headers.
     *
     * @param header the batch's header at position 0, {@link RecordBatchFormat#HEADER_SIZE_BYTES} bytes
     * @param window reused for the batch's bytes, at least {@value #RECORD_PREFIX_MAX_BYTES} bytes; its content is
     *               left undefined
     */
    public SendTimeMatch firstRecordWithSendTimeAtLeast(ByteBuffer header, BatchBytes bytes, ByteBuffer window,
                                                        long sendTimeMs) throws IOException {
        if (window.capacity() < RECORD_PREFIX_MAX_BYTES) {
            throw new IllegalArgumentException("a SendTime scan window of " + window.capacity()
                    + " bytes cannot hold a record's first " + RECORD_PREFIX_MAX_BYTES);
        }
        if (maxSendTime(header, 0) < sendTimeMs) {
            return null;
        }
        long first = firstSendTime(header, 0);
        int size = totalSize(header, 0);
        int count = recordCount(header, 0);
        int windowStart = 0;
        int windowEnd = 0;
        int next = RECORDS_OFFSET;
        for (int i = 0; i < count; i++) {
            if (windowEnd - next < RECORD_PREFIX_MAX_BYTES && windowEnd < size) {
                window.clear().limit(Math.min(window.capacity(), size - next));
                bytes.read(window, next);
                windowStart = next;
                windowEnd = next + window.limit();
            }
            cursor.reset(window, next - windowStart, windowEnd - windowStart);
            int length = cursor.readUnsignedInt();
            int recordStart = windowStart + cursor.position();
            if (length > size - recordStart) {
                throw new RecordFormatException("record length " + length + " runs past the batch end ("
                        + (size - recordStart) + " bytes left)");
            }
            next = recordStart + length;
            cursor.limit(Math.min(next, windowEnd) - windowStart);
            int delta = cursor.readUnsignedInt();
            long sendTime = first + cursor.readSignedLong();
            if (sendTime >= sendTimeMs) {
                return new SendTimeMatch(baseOffset(header, 0) + delta, sendTime);
            }
        }
        throw new IllegalStateException("Max SendTime " + maxSendTime(header, 0)
                + " is above every record's SendTime in the batch at offset " + baseOffset(header, 0));
    }

    /** A record found by SendTime: its offset and SendTime. */
    public record SendTimeMatch(long offset, long sendTimeMs) {
    }

    /** Adds every record of the whole batch at {@code position} to {@code into}, in log order. */
    public void decodeBatch(ByteBuffer buffer, int position, List<Record> into) {
        long base = baseOffset(buffer, position);
        long receiveTime = receiveTime(buffer, position);
        long first = firstSendTime(buffer, position);
        int end = position + totalSize(buffer, position);
        int next = position + RECORDS_OFFSET;
        int count = recordCount(buffer, position);
        for (int i = 0; i < count; i++) {
            next = cursor.openRecord(buffer, next, end);
            long offset = base + cursor.readUnsignedInt();
            long sendTime = first + cursor.readSignedLong();
            byte[] key = readNullable();
            byte[] value = readNullable();
            int headerCount = cursor.readUnsignedInt();
            List<Header> headers = new ArrayList<>(Math.min(headerCount, cursor.remaining()));
            for (int h = 0; h < headerCount; h++) {
                String name = new String(cursor.readBytes(cursor.readUnsignedInt()), StandardCharsets.UTF_8);
                headers.add(new Header(name, cursor.readBytes(cursor.readUnsignedInt())));
            }
            into.add(new Record(offset, sendTime, receiveTime, key, value, headers));
        }
    }

    private byte[] readNullable() {
        int length = cursor.readSignedInt();
        return length < 0 ? null : cursor.readBytes(length);
    }
}
