package io.tidemark.proto.record;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.CRC32C;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * Builds one batch of {@link RecordBatchFormat} on the producer side: base offset 0 and ReceiveTime
 * {@link RecordBatchFormat#NO_RECEIVE_TIME}, which the partition leader fills in. Single use: {@link #build()}
 * ends it.
 *
 * <p>Not thread-safe.
 */
public final class RecordBatchBuilder {
    private ByteBuffer buffer;
    private int count;
    private long firstSendTimeMs;
    private long maxSendTimeMs = Long.MIN_VALUE;
    private long producerId = NO_PRODUCER_ID;
    private short producerEpoch = NO_PRODUCER_EPOCH;
    private int baseSequence = NO_SEQUENCE;
    private byte attributes;
    private boolean built;

    public RecordBatchBuilder() {
        this(1024);
    }

    public RecordBatchBuilder(int initialCapacityBytes) {
        buffer = ByteBuffer.allocate(Math.max(initialCapacityBytes, HEADER_SIZE_BYTES + 64));
        buffer.position(RECORDS_OFFSET);
    }

    /** Marks the batch as coming from an idempotent producer. */
    public RecordBatchBuilder producer(long id, short epoch, int firstSequence) {
        this.producerId = id;
        this.producerEpoch = epoch;
        this.baseSequence = firstSequence;
        return this;
    }

    /**
     * Marks the batch as mirrored ({@link RecordBatchFormat#ATTRIBUTE_MIRRORED}): the caller appends records that
     * carry {@link ProvenanceHeaders} of one origin partition, origin offsets strictly increasing.
     */
    public RecordBatchBuilder mirrored() {
        this.attributes |= ATTRIBUTE_MIRRORED;
        return this;
    }

    /**
     * Marks the batch as written inside a transaction ({@link RecordBatchFormat#ATTRIBUTE_TRANSACTIONAL}); the
     * producer identity ({@link #producer}) is required.
     */
    public RecordBatchBuilder transactional() {
        this.attributes |= ATTRIBUTE_TRANSACTIONAL;
        return this;
    }

    public RecordBatchBuilder append(long sendTimeMs, byte[] key, byte[] value) {
        return append(sendTimeMs, key, value, List.of());
    }

    /**
     * Adds a record.
     *
     * @param sendTimeMs ms since the epoch, not negative
     * @param key        null for none
     * @param value      null for a null value
     */
    public RecordBatchBuilder append(long sendTimeMs, byte[] key, byte[] value, List<Header> headers) {
        if (built) {
            throw new IllegalStateException("the batch was already built");
        }
        if (sendTimeMs < 0) {
            throw new IllegalArgumentException("SendTime " + sendTimeMs + " is negative; it is ms since the epoch");
        }
        if (count == 0) {
            firstSendTimeMs = sendTimeMs;
        }
        long delta = sendTimeMs - firstSendTimeMs;
        int bodySize = Varints.sizeOfUnsignedInt(count) + Varints.sizeOfSignedLong(delta)
                + nullableSize(key) + nullableSize(value) + Varints.sizeOfUnsignedInt(headers.size());
        byte[][] names = new byte[headers.size()][];
        for (int i = 0; i < headers.size(); i++) {
            names[i] = headers.get(i).name().getBytes(StandardCharsets.UTF_8);
            bodySize += bytesSize(names[i]) + bytesSize(headers.get(i).value());
        }
        ensureRoom(Varints.MAX_INT_BYTES + bodySize);
        Varints.writeUnsignedInt(buffer, bodySize);
        Varints.writeUnsignedInt(buffer, count);
        Varints.writeSignedLong(buffer, delta);
        writeNullable(key);
        writeNullable(value);
        Varints.writeUnsignedInt(buffer, headers.size());
        for (int i = 0; i < headers.size(); i++) {
            writeBytes(names[i]);
            writeBytes(headers.get(i).value());
        }
        maxSendTimeMs = Math.max(maxSendTimeMs, sendTimeMs);
        count++;
        return this;
    }

    public int recordCount() {
        return count;
    }

    /** Bytes the batch takes so far. */
    public int sizeInBytes() {
        return buffer.position();
    }

    /** Finishes the batch: fills the header and the CRC; the buffer's position is 0 and its limit the end. */
    public ByteBuffer build() {
        if (count == 0) {
            throw new IllegalStateException("a batch needs at least one record");
        }
        if (built) {
            throw new IllegalStateException("the batch was already built");
        }
        built = true;
        int size = buffer.position();
        buffer.putLong(BASE_OFFSET_OFFSET, 0L)
                .putInt(BATCH_LENGTH_OFFSET, size - LOG_OVERHEAD_BYTES)
                .put(MAGIC_OFFSET, MAGIC_V1)
                .put(ATTRIBUTES_OFFSET, attributes)
                .putShort(PRODUCER_EPOCH_OFFSET, producerEpoch)
                .putInt(RECORD_COUNT_OFFSET, count)
                .putLong(RECEIVE_TIME_OFFSET, NO_RECEIVE_TIME)
                .putLong(FIRST_SEND_TIME_OFFSET, firstSendTimeMs)
                .putLong(MAX_SEND_TIME_OFFSET, maxSendTimeMs)
                .putLong(PRODUCER_ID_OFFSET, producerId)
                .putInt(BASE_SEQUENCE_OFFSET, baseSequence);
        buffer.putInt(CRC_OFFSET, computeCrc(new CRC32C(), buffer, 0, size));
        return buffer.flip();
    }

    private static int nullableSize(byte[] bytes) {
        return bytes == null ? Varints.sizeOfSignedInt(-1) : Varints.sizeOfSignedInt(bytes.length) + bytes.length;
    }

    private static int bytesSize(byte[] bytes) {
        return Varints.sizeOfUnsignedInt(bytes.length) + bytes.length;
    }

    private void writeNullable(byte[] bytes) {
        if (bytes == null) {
            Varints.writeSignedInt(buffer, -1);
        } else {
            Varints.writeSignedInt(buffer, bytes.length);
            buffer.put(bytes);
        }
    }

    private void writeBytes(byte[] bytes) {
        Varints.writeUnsignedInt(buffer, bytes.length);
        buffer.put(bytes);
    }

    private void ensureRoom(int bytes) {
        if (buffer.remaining() < bytes) {
            int capacity = Math.max(buffer.capacity() * 2, buffer.position() + bytes);
            ByteBuffer bigger = ByteBuffer.allocate(capacity);
            bigger.put(buffer.flip());
            buffer = bigger;
        }
    }
}
