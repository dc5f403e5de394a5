package io.tidemark.replication.snapshot;

import io.tidemark.core.log.DurableFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The file that records a snapshot of a partition replica. Its name, {@code snapshot.TERM_INDEX} in the group's
 * state machine directory, is Ratis' ({@code SimpleStateMachineStorage}), which finds the latest snapshot by it;
 * Ratis keeps the MD5 of the content beside it ({@code snapshot.TERM_INDEX.md5}). The snapshot's data is the
 * partition log itself, up to the offset the file holds.
 *
 * <h2>Format (8 bytes, big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                    Log End Offset (int64)                     |  0
 * |                                                               |
 * +---------------------------------------------------------------+
 * </pre>
 * No version or CRC of its own: the MD5 file guards the content, and the layout is the one every snapshot since
 * the first was written in. Written to {@code snapshot.TERM_INDEX.tmp}, fsynced and renamed, then the directory
 * fsynced, so after a crash the file is whole or absent: Ratis purges its log only behind a snapshot it was told
 * of after this returned.
 */
public final class SnapshotFile {
    public static final int SIZE = 8;
    static final int LOG_END_OFFSET_OFFSET = 0;

    private SnapshotFile() {
    }

    static byte[] encode(long logEndOffset) {
        return ByteBuffer.allocate(SIZE).putLong(LOG_END_OFFSET_OFFSET, logEndOffset).array();
    }

    public static void write(Path file, long logEndOffset) throws IOException {
        DurableFiles.writeAtomically(file, encode(logEndOffset));
    }

    /** @return the log end offset the snapshot file holds */
    public static long read(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        if (bytes.length != SIZE) {
            throw new IOException("snapshot " + file + " has " + bytes.length + " bytes, not " + SIZE);
        }
        return ByteBuffer.wrap(bytes).getLong(LOG_END_OFFSET_OFFSET);
    }
}
