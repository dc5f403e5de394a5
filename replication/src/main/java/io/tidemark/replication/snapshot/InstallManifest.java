package io.tidemark.replication.snapshot;

import io.tidemark.core.log.DurableFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The {@code installed} file of a staged install ({@link StagedInstall}): the snapshot a copied log holds. Its
 * presence is the install's commit point; without it the staging directory is an interrupted copy.
 *
 * <h2>Format (40 bytes, big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       Version (int32) = 1                     |  0
 * +---------------------------------------------------------------+
 * |                        Raft Term (int64)                      |  4
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                       Raft Index (int64)                      | 12
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                    Log Start Offset (int64)                   | 20
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                     Log End Offset (int64)                    | 28
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                  CRC32C of bytes 0-35 (uint32)                | 36
 * +---------------------------------------------------------------+
 * </pre>
 * Written to {@code installed.tmp}, fsynced, renamed, and the directory fsynced, so a crash leaves it whole or
 * absent. A short file, another version or a CRC mismatch reads as absent: the install is then redone from the
 * start, never trusted half-written.
 */
public final class InstallManifest {
    static final String NAME = "installed";
    static final int VERSION = 1;
    static final int VERSION_OFFSET = 0;
    static final int TERM_OFFSET = VERSION_OFFSET + 4;
    static final int INDEX_OFFSET = TERM_OFFSET + 8;
    static final int LOG_START_OFFSET_OFFSET = INDEX_OFFSET + 8;
    static final int LOG_END_OFFSET_OFFSET = LOG_START_OFFSET_OFFSET + 8;
    static final int CRC_OFFSET = LOG_END_OFFSET_OFFSET + 8;
    static final int SIZE = CRC_OFFSET + 4;

    private InstallManifest() {
    }

    static byte[] encode(SnapshotDescriptor snapshot) {
        ByteBuffer buffer = ByteBuffer.allocate(SIZE).putInt(VERSION_OFFSET, VERSION)
                .putLong(TERM_OFFSET, snapshot.term()).putLong(INDEX_OFFSET, snapshot.index())
                .putLong(LOG_START_OFFSET_OFFSET, snapshot.logStartOffset())
                .putLong(LOG_END_OFFSET_OFFSET, snapshot.logEndOffset());
        buffer.putInt(CRC_OFFSET, crc(buffer.array()));
        return buffer.array();
    }

    static Optional<SnapshotDescriptor> decode(byte[] bytes) {
        if (bytes.length != SIZE) {
            return Optional.empty();
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        if (buffer.getInt(VERSION_OFFSET) != VERSION || buffer.getInt(CRC_OFFSET) != crc(bytes)) {
            return Optional.empty();
        }
        return Optional.of(new SnapshotDescriptor(buffer.getLong(TERM_OFFSET), buffer.getLong(INDEX_OFFSET),
                buffer.getLong(LOG_START_OFFSET_OFFSET), buffer.getLong(LOG_END_OFFSET_OFFSET)));
    }

    static void write(Path dir, SnapshotDescriptor snapshot) throws IOException {
        DurableFiles.writeAtomically(dir.resolve(NAME), encode(snapshot));
    }

    /** The snapshot the manifest in {@code dir} records; empty when there is none or it is not whole. */
    static Optional<SnapshotDescriptor> read(Path dir) throws IOException {
        try {
            return decode(Files.readAllBytes(dir.resolve(NAME)));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    private static int crc(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, CRC_OFFSET);
        return (int) crc.getValue();
    }
}
