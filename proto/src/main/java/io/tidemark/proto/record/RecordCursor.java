package io.tidemark.proto.record;

import java.nio.ByteBuffer;

/**
 * A reading position inside one record of a batch: decodes the varints of {@link RecordBatchFormat}'s record
 * layout without allocating, and refuses to read past the end it was given. Reused for every record, and inside a
 * header value for {@link ProvenanceDecoder}.
 *
 * <p>Not thread-safe: each validator and reader owns one.
 */
final class RecordCursor {
    private final String end;
    private ByteBuffer buffer;
    private int position;
    private int limit;

    /** A cursor over records: errors name the limit "the record end". */
    RecordCursor() {
        this("record");
    }

    /** @param region what the limit is the end of, as errors name it: "the {@code region} end" */
    RecordCursor(String region) {
        this.end = "the " + region + " end";
    }

    void reset(ByteBuffer buffer, int position, int limit) {
        this.buffer = buffer;
        this.position = position;
        this.limit = limit;
    }

    /**
     * Positions the cursor on the record that starts at {@code start}: reads its length and limits reading to
     * it. Returns where the next record starts.
     */
    int openRecord(ByteBuffer buffer, int start, int batchEnd) {
        reset(buffer, start, batchEnd);
        int length = readUnsignedInt();
        limit(position + length);
        return limit;
    }

    /** Bytes left before the limit. */
    int remaining() {
        return limit - position;
    }

    int position() {
        return position;
    }

    int limit() {
        return limit;
    }

    void limit(int newLimit) {
        if (newLimit > limit || newLimit < position) {
            throw new RecordFormatException("record length " + (newLimit - position) + " runs past the batch end ("
                    + (limit - position) + " bytes left)");
        }
        limit = newLimit;
    }

    int readUnsignedInt() {
        int value = readUnsignedIntBits();
        if (value < 0) {
            throw new RecordFormatException("varint " + Integer.toUnsignedString(value) + " is above "
                    + Integer.MAX_VALUE);
        }
        return value;
    }

    int readSignedInt() {
        int raw = readUnsignedIntBits();
        return (raw >>> 1) ^ -(raw & 1);
    }

    long readSignedLong() {
        long raw = readUnsignedLongBits();
        return (raw >>> 1) ^ -(raw & 1);
    }

    long readUnsignedLong() {
        long value = readUnsignedLongBits();
        if (value < 0) {
            throw new RecordFormatException("varlong " + Long.toUnsignedString(value) + " is above " + Long.MAX_VALUE);
        }
        return value;
    }

    /** Reads a zigzag length that may be -1 (null), checks the bytes are there, and skips them. */
    int skipNullableBytes(String what) {
        int length = readSignedInt();
        if (length < -1) {
            throw new RecordFormatException(what + " length " + length + " is below -1 (null)");
        }
        skip(Math.max(length, 0), what);
        return length;
    }

    /** Reads an unsigned length, checks the bytes are there, and skips them. */
    int skipBytes(String what) {
        int length = readUnsignedInt();
        skip(length, what);
        return length;
    }

    /** Checks that {@code length} bytes are there and skips them; returns where they start. */
    int skipFixed(int length, String what) {
        int at = position;
        skip(length, what);
        return at;
    }

    /**
     * Reads {@code length} bytes, after checking they are there: a length read from a varint is never allocated before
     * it is held to the bytes that hold it (a 70-byte batch once claimed a 2 GiB key).
     */
    byte[] readBytes(int length) {
        if (length < 0 || length > limit - position) {
            throw new RecordFormatException("a field of " + length + " bytes runs past " + end + " ("
                    + (limit - position) + " bytes left)");
        }
        byte[] bytes = new byte[length];
        buffer.get(position, bytes);
        position += length;
        return bytes;
    }

    private void skip(int length, String what) {
        if (length > limit - position) {
            throw new RecordFormatException(what + " of " + length + " bytes runs past " + end + " ("
                    + (limit - position) + " bytes left)");
        }
        position += length;
    }

    private int readUnsignedIntBits() {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            byte b = next();
            value |= (b & 0x7F) << shift;
            if (b >= 0) {
                return value;
            }
        }
        throw new RecordFormatException("varint longer than " + Varints.MAX_INT_BYTES + " bytes");
    }

    private long readUnsignedLongBits() {
        long value = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            byte b = next();
            value |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return value;
            }
        }
        throw new RecordFormatException("varlong longer than " + Varints.MAX_LONG_BYTES + " bytes");
    }

    private byte next() {
        if (position >= limit) {
            throw new RecordFormatException("varint runs past " + end);
        }
        return buffer.get(position++);
    }
}
