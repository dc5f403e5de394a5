package io.tidemark.proto.record;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * What a replica digests of a record when replicas are compared ({@code DigestPartition}, replica.proto): the record as
 * consumers see it, independent of how it is batched (compaction splits batches, so batch fields would make two
 * replicas that hold the same records differ). All big-endian, one record after another in offset order, SHA-256
 * over the whole range.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        Offset (int64)                         |  0
 * +---------------------------------------------------------------+
 * |                     ReceiveTime (int64)                       |  8
 * +---------------------------------------------------------------+
 * |                       SendTime (int64)                        | 16
 * +---------------------------------------------------------------+
 * |              K: key length (int32), -1 for no key             | 24
 * +---------------------------------------------------------------+
 * |                       key (K bytes)                           | 28
 * +---------------------------------------------------------------+
 * |            V: value length (int32), -1 for a null value       |
 * +---------------------------------------------------------------+
 * |                       value (V bytes)                         |
 * +---------------------------------------------------------------+
 * |                   H: header count (int32)                     |
 * +---------------------------------------------------------------+
 * |   H headers: name length (int32), name (UTF-8), value length  |
 * |   (int32), value                                              |
 * +---------------------------------------------------------------+
 * </pre>
 * Lengths come before their bytes, so two different records never write the same bytes, nor do two different runs
 * of records.
 *
 * <p>Stateless; {@link #newDigest} gives a digest for one thread.
 */
public final class RecordDigestFormat {
    static final int OFFSET_OFFSET = 0;
    static final int RECEIVE_TIME_OFFSET = OFFSET_OFFSET + 8;
    static final int SEND_TIME_OFFSET = RECEIVE_TIME_OFFSET + 8;
    static final int KEY_LENGTH_OFFSET = SEND_TIME_OFFSET + 8;
    private static final int NULL_LENGTH = -1;

    private RecordDigestFormat() {
    }

    /** A SHA-256 digest (every JVM has it). */
    public static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }

    /** The bytes of one record, as the digest takes them. */
    public static byte[] encode(Record record) {
        int size = KEY_LENGTH_OFFSET + 4 + length(record.key()) + 4 + length(record.value()) + 4;
        for (Header header : record.headers()) {
            size += 4 + header.name().getBytes(StandardCharsets.UTF_8).length + 4 + header.value().length;
        }
        ByteBuffer bytes = ByteBuffer.allocate(size).putLong(record.offset()).putLong(record.receiveTimeMs())
                .putLong(record.sendTimeMs());
        putBytes(bytes, record.key());
        putBytes(bytes, record.value());
        bytes.putInt(record.headers().size());
        for (Header header : record.headers()) {
            putBytes(bytes, header.name().getBytes(StandardCharsets.UTF_8));
            putBytes(bytes, header.value());
        }
        return bytes.array();
    }

    private static int length(byte[] bytes) {
        return bytes == null ? 0 : bytes.length;
    }

    private static void putBytes(ByteBuffer into, byte[] bytes) {
        if (bytes == null) {
            into.putInt(NULL_LENGTH);
        } else {
            into.putInt(bytes.length).put(bytes);
        }
    }
}
