package io.tidemark.proto.record;

import com.google.protobuf.ByteString;

import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.UUID;

/**
 * A topic's id as bytes. Every topic gets a random {@link UUID} when it is created, kept for its life; a topic deleted
 * and created again under the same name gets a new one (as Kafka's topic ids, KIP-516). The API's {@code topic_id}
 * fields, the metadata log's {@code TopicAssignment}, mirror checkpoints and provenance values ({@link
 * ProvenanceFormat}) carry it in 16 bytes:
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |            Most Significant Bits (int64, big-endian)          |  0
 * |                                                               |
 * +---------------------------------------------------------------+
 * |           Least Significant Bits (int64, big-endian)          |  8
 * |                                                               |
 * +---------------------------------------------------------------+
 * </pre>
 * so the bytes read in the order of the UUID's text: {@code 0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95} is
 * {@code 0e 4f 7c 2a 5b 1d 4e 8f 9a 3c 6d 2b 1f 0a 7e 95}. No other length is a topic id; an empty {@code bytes}
 * field means "none" where a field allows that ({@link #optional}).
 *
 * <p>Stateless.
 */
public final class TopicIds {
    /** Bytes of a topic id. */
    public static final int LENGTH = 16;
    private static final int LEAST_SIGNIFICANT_OFFSET = 8;

    private TopicIds() {
    }

    public static ByteString toBytes(UUID id) {
        byte[] bytes = new byte[LENGTH];
        write(ByteBuffer.wrap(bytes), 0, id);
        return ByteString.copyFrom(bytes);
    }

    /**
     * The id 16 bytes hold.
     *
     * @throws IllegalArgumentException for any other length, saying what a topic id is
     */
    public static UUID fromBytes(ByteString bytes) {
        if (bytes.size() != LENGTH) {
            throw new IllegalArgumentException("a topic id of " + bytes.size() + " bytes is not one: a topic id is "
                    + LENGTH + " bytes, a UUID's most significant 8 bytes then its least significant 8, big-endian");
        }
        return read(bytes.asReadOnlyByteBuffer(), 0);
    }

    /**
     * The id of a field that may be empty: empty bytes are no id.
     *
     * @throws IllegalArgumentException for a length other than 0 and 16
     */
    public static Optional<UUID> optional(ByteString bytes) {
        return bytes.isEmpty() ? Optional.empty() : Optional.of(fromBytes(bytes));
    }

    /**
     * Writes {@code id} in the 16 bytes at {@code at}, big-endian whatever the buffer's byte order; the buffer's
     * position stays.
     */
    static void write(ByteBuffer buffer, int at, UUID id) {
        putBigEndian(buffer, at, id.getMostSignificantBits());
        putBigEndian(buffer, at + LEAST_SIGNIFICANT_OFFSET, id.getLeastSignificantBits());
    }

    /** The id in the 16 bytes at {@code at}, big-endian whatever the buffer's byte order; the position stays. */
    static UUID read(ByteBuffer buffer, int at) {
        return new UUID(getBigEndian(buffer, at), getBigEndian(buffer, at + LEAST_SIGNIFICANT_OFFSET));
    }

    private static void putBigEndian(ByteBuffer buffer, int at, long bits) {
        for (int i = 0; i < Long.BYTES; i++) {
            buffer.put(at + i, (byte) (bits >>> (Long.SIZE - Byte.SIZE * (i + 1))));
        }
    }

    private static long getBigEndian(ByteBuffer buffer, int at) {
        long bits = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            bits = (bits << Byte.SIZE) | (buffer.get(at + i) & 0xFF);
        }
        return bits;
    }
}
