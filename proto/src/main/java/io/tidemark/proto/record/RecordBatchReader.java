package io.tidemark.proto.record;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * Decodes records out of batches that were validated when they were appended (bytes read from a log or
 * from a fetch). Two uses: {@link #records} builds {@link Record}s for tools and consumers;
 * {@link #firstRecordWithSendTimeAtLeast} finds a record by SendTime without allocating, for lookups.
 *
 * <p>Not thread-safe: owns a reusable cursor.
 */
public final class RecordBatchReader {
    private final RecordCursor cursor = new RecordCursor();

    /** Every record of every whole batch between the buffer's position and limit, in log order. */
    public List<Record> records(ByteBuffer batches) {
        List<Record> records = new ArrayList<>();
        int position = batches.position();
        while (batches.limit() - position >= LOG_OVERHEAD_BYTES) {
            int size = totalSize(batches, position);
            if (size > batches.limit() - position) {
                break;
            }
            decodeBatch(batches, position, records);
            position += size;
        }
        return records;
    }

    /**
     * The first record of the batch at {@code position} whose SendTime is at least {@code sendTimeMs}, or
     * null when none is.
     */
    public SendTimeMatch firstRecordWithSendTimeAtLeast(ByteBuffer buffer, int position, long sendTimeMs) {
        if (maxSendTime(buffer, position) < sendTimeMs) {
            return null;
        }
        long first = firstSendTime(buffer, position);
        int end = position + totalSize(buffer, position);
        int next = position + RECORDS_OFFSET;
        int count = recordCount(buffer, position);
        for (int i = 0; i < count; i++) {
            next = cursor.openRecord(buffer, next, end);
            int delta = cursor.readUnsignedInt();
            long sendTime = first + cursor.readSignedLong();
            if (sendTime >= sendTimeMs) {
                return new SendTimeMatch(baseOffset(buffer, position) + delta, sendTime);
            }
        }
        throw new IllegalStateException("Max SendTime " + maxSendTime(buffer, position)
                + " is above every record's SendTime in the batch at offset " + baseOffset(buffer, position));
    }

    /** A record found by SendTime: its offset and SendTime. */
    public record SendTimeMatch(long offset, long sendTimeMs) {
    }

    private void decodeBatch(ByteBuffer buffer, int position, List<Record> into) {
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
            List<Header> headers = new ArrayList<>(headerCount);
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
