package io.tidemark.proto.record;

import java.nio.ByteBuffer;

/**
 * LEB128 variable-length integers, as in protobuf: 7 bits a byte, least significant group first, the high bit
 * set on every byte but the last. Signed values are zigzag-encoded first ({@code (n << 1) ^ (n >> 63)}) so
 * that small negative numbers stay short. An int takes at most {@value #MAX_INT_BYTES} bytes, a long at most
 * {@value #MAX_LONG_BYTES}.
 *
 * <p>Writers append at the buffer's position. Readers live in {@link RecordCursor}, which owns the position.
 */
public final class Varints {
    public static final int MAX_INT_BYTES = 5;
    public static final int MAX_LONG_BYTES = 10;

    private Varints() {
    }

    public static void writeUnsignedInt(ByteBuffer buffer, int value) {
        while ((value & ~0x7F) != 0) {
            buffer.put((byte) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        buffer.put((byte) value);
    }

    public static void writeSignedInt(ByteBuffer buffer, int value) {
        writeUnsignedInt(buffer, (value << 1) ^ (value >> 31));
    }

    public static void writeSignedLong(ByteBuffer buffer, long value) {
        writeUnsignedLong(buffer, (value << 1) ^ (value >> 63));
    }

    public static void writeUnsignedLong(ByteBuffer buffer, long value) {
        while ((value & ~0x7FL) != 0) {
            buffer.put((byte) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        buffer.put((byte) value);
    }

    public static int sizeOfUnsignedInt(int value) {
        int bytes = 1;
        while ((value & ~0x7F) != 0) {
            bytes++;
            value >>>= 7;
        }
        return bytes;
    }

    public static int sizeOfSignedInt(int value) {
        return sizeOfUnsignedInt((value << 1) ^ (value >> 31));
    }

    public static int sizeOfSignedLong(long value) {
        return sizeOfUnsignedLong((value << 1) ^ (value >> 63));
    }

    public static int sizeOfUnsignedLong(long value) {
        int bytes = 1;
        while ((value & ~0x7FL) != 0) {
            bytes++;
            value >>>= 7;
        }
        return bytes;
    }
}
