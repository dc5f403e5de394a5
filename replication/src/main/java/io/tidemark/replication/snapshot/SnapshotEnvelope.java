package io.tidemark.replication.snapshot;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import io.tidemark.core.log.DurableFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The envelope of the snapshot files, {@link GroupSnapshotFile} and {@link MetadataSnapshotFile}: a version, a
 * protobuf body and a CRC32C.
 *
 * <h2>Format (big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   Version (int32), per file                   |  0
 * +---------------------------------------------------------------+
 * |                  B: body length in bytes (int32)              |  4
 * +---------------------------------------------------------------+
 * |               Body: a protobuf message, B bytes               |  8
 * +---------------------------------------------------------------+
 * |            CRC32C of bytes 0 to 8 + B - 1 (uint32)            |  8 + B
 * +---------------------------------------------------------------+
 * </pre>
 * The CRC covers the version and length too, so a torn or flipped file is never read as a shorter valid one. Files
 * are written to a temporary file, fsynced, renamed, and the directory fsynced ({@link DurableFiles#writeAtomically}),
 * so after a crash a file is whole or absent.
 *
 * <p>Stateless.
 */
final class SnapshotEnvelope {
    static final int VERSION_OFFSET = 0;
    static final int LENGTH_OFFSET = VERSION_OFFSET + 4;
    static final int BODY_OFFSET = LENGTH_OFFSET + 4;
    static final int CRC_BYTES = 4;

    private SnapshotEnvelope() {
    }

    static byte[] encode(int version, Message body) {
        byte[] bytes = body.toByteArray();
        ByteBuffer buffer = ByteBuffer.allocate(BODY_OFFSET + bytes.length + CRC_BYTES).putInt(VERSION_OFFSET, version)
                .putInt(LENGTH_OFFSET, bytes.length).put(BODY_OFFSET, bytes);
        buffer.putInt(BODY_OFFSET + bytes.length, crc(buffer.array(), BODY_OFFSET + bytes.length));
        return buffer.array();
    }

    /**
     * The body {@code bytes} hold.
     *
     * @param what names the file in messages
     * @param kind what the file holds, as messages name it
     * @throws IOException naming {@code what} when the bytes are not a whole envelope of {@code version} around a
     *                     {@code parser} message
     */
    static <T extends Message> T decode(byte[] bytes, int version, Parser<T> parser, Object what, String kind)
            throws IOException {
        if (bytes.length < BODY_OFFSET + CRC_BYTES) {
            throw new IOException(what + " has " + bytes.length + " bytes: too short for " + kind);
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        int stored = buffer.getInt(VERSION_OFFSET);
        int length = buffer.getInt(LENGTH_OFFSET);
        if (stored != version) {
            throw new IOException(what + " has version " + stored + "; this broker reads version " + version);
        }
        if (length < 0 || BODY_OFFSET + length + CRC_BYTES != bytes.length) {
            throw new IOException(what + " says its body takes " + length + " bytes, but the file has "
                    + bytes.length);
        }
        int storedCrc = buffer.getInt(BODY_OFFSET + length);
        int computedCrc = crc(bytes, BODY_OFFSET + length);
        if (storedCrc != computedCrc) {
            throw new IOException(String.format("%s: CRC32C mismatch, stored 0x%08x, computed 0x%08x", what, storedCrc,
                    computedCrc));
        }
        try {
            return parser.parseFrom(ByteBuffer.wrap(bytes, BODY_OFFSET, length));
        } catch (InvalidProtocolBufferException e) {
            throw new IOException(what + ": the body is not " + kind + ": " + e.getMessage(), e);
        }
    }

    private static int crc(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }
}
