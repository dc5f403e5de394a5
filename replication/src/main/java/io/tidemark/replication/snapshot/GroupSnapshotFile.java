package io.tidemark.replication.snapshot;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.core.log.DurableFiles;
import io.tidemark.proto.v1.GroupSnapshot;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * A snapshot of a replica of a partition group on disk: the partitions the group hosts and each one's log end offset
 * at a Raft entry (replica.proto, {@code GroupSnapshot}). Two files have this format:
 * <ul>
 *   <li>{@code snapshot.TERM_INDEX} in the group's state machine directory, named as Ratis'
 *       {@code SimpleStateMachineStorage} finds the latest snapshot (it keeps the MD5 of the content beside it). The
 *       snapshot's data are the partition logs themselves, up to the offsets the file holds.</li>
 *   <li>{@code installed} in a staged install ({@link StagedInstall}), the copy's commit point: its presence means
 *       the copied logs hold that snapshot.</li>
 * </ul>
 *
 * <h2>Format (big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       Version (int32) = 2                     |  0
 * +---------------------------------------------------------------+
 * |                  B: body length in bytes (int32)              |  4
 * +---------------------------------------------------------------+
 * |              Body: a GroupSnapshot protobuf, B bytes          |  8
 * +---------------------------------------------------------------+
 * |            CRC32C of bytes 0 to 8 + B - 1 (uint32)            |  8 + B
 * +---------------------------------------------------------------+
 * </pre>
 * Version 1 was the snapshot of a group of one partition (8 bytes: its log end offset); such a file is refused with
 * a message that says so. The CRC covers the version and length too, so a torn or flipped file is never read as a
 * shorter valid one. Written to a temporary file, fsynced, renamed, and the directory fsynced
 * ({@link DurableFiles#writeAtomically}), so after a crash the file is whole or absent: Ratis purges its log only
 * behind a snapshot it was told of after the write returned.
 *
 * <p>Stateless.
 */
public final class GroupSnapshotFile {
    static final int VERSION = 2;
    static final int VERSION_OFFSET = 0;
    static final int LENGTH_OFFSET = VERSION_OFFSET + 4;
    static final int BODY_OFFSET = LENGTH_OFFSET + 4;
    static final int CRC_BYTES = 4;

    private GroupSnapshotFile() {
    }

    static byte[] encode(GroupSnapshot snapshot) {
        byte[] body = snapshot.toByteArray();
        ByteBuffer buffer = ByteBuffer.allocate(BODY_OFFSET + body.length + CRC_BYTES).putInt(VERSION_OFFSET, VERSION)
                .putInt(LENGTH_OFFSET, body.length).put(BODY_OFFSET, body);
        buffer.putInt(BODY_OFFSET + body.length, crc(buffer.array(), BODY_OFFSET + body.length));
        return buffer.array();
    }

    /**
     * The snapshot {@code bytes} hold.
     *
     * @throws IOException naming {@code what} when they are not a whole snapshot of this version
     */
    static GroupSnapshot decode(byte[] bytes, Object what) throws IOException {
        if (bytes.length < BODY_OFFSET + CRC_BYTES) {
            throw new IOException(what + " has " + bytes.length + " bytes: too short for a group snapshot"
                    + (bytes.length == 8 ? " (it looks like a version 1 snapshot of a one-partition group, from before "
                    + "groups hosted many partitions: delete the broker's data directory to start it afresh)" : ""));
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        int version = buffer.getInt(VERSION_OFFSET);
        int length = buffer.getInt(LENGTH_OFFSET);
        if (version != VERSION) {
            throw new IOException(what + " has version " + version + "; this broker reads version " + VERSION);
        }
        if (length < 0 || BODY_OFFSET + length + CRC_BYTES != bytes.length) {
            throw new IOException(what + " says its body takes " + length + " bytes, but the file has "
                    + bytes.length);
        }
        int stored = buffer.getInt(BODY_OFFSET + length);
        int computed = crc(bytes, BODY_OFFSET + length);
        if (stored != computed) {
            throw new IOException(String.format("%s: CRC32C mismatch, stored 0x%08x, computed 0x%08x", what, stored,
                    computed));
        }
        try {
            return GroupSnapshot.parseFrom(ByteBuffer.wrap(bytes, BODY_OFFSET, length));
        } catch (InvalidProtocolBufferException e) {
            throw new IOException(what + ": the body is not a GroupSnapshot: " + e.getMessage(), e);
        }
    }

    public static void write(Path file, GroupSnapshot snapshot) throws IOException {
        DurableFiles.writeAtomically(file, encode(snapshot));
    }

    /** @throws IOException when the file is missing or not a whole snapshot */
    public static GroupSnapshot read(Path file) throws IOException {
        return decode(Files.readAllBytes(file), file);
    }

    /**
     * The snapshot of the file; empty when it is missing or cannot be read whole: an install whose manifest is not
     * whole starts over rather than trusting it.
     */
    static Optional<GroupSnapshot> readIfWhole(Path file) {
        try {
            return Optional.of(read(file));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static int crc(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }
}
