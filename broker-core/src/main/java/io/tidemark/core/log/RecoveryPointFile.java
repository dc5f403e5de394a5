package io.tidemark.core.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.zip.CRC32C;

/**
 * The {@code recovery-point} file of a partition directory: the offset below which every batch and index
 * entry was fsynced. After an unclean shutdown only the segments holding offsets at or above it are scanned.
 *
 * <h2>Format (16 bytes, big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        Version (int32) = 1                    |  0
 * +---------------------------------------------------------------+
 * |                     Recovery Point (int64)                    |  4
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                 CRC32C of bytes 0-11 (uint32)                 | 12
 * +---------------------------------------------------------------+
 * </pre>
 * Written to {@code recovery-point.tmp}, fsynced, renamed over the old file, and the directory fsynced, so a
 * crash leaves the old or the new file whole. A missing, short or corrupt file reads as empty, and recovery
 * then scans every segment: slower, never wrong.
 */
final class RecoveryPointFile {
    static final String NAME = "recovery-point";
    private static final int VERSION = 1;
    private static final int SIZE = 16;

    private RecoveryPointFile() {
    }

    static OptionalLong read(Path dir) throws IOException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(dir.resolve(NAME));
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        }
        if (bytes.length != SIZE) {
            return OptionalLong.empty();
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        if (buffer.getInt(0) != VERSION || buffer.getInt(12) != crc(bytes)) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(buffer.getLong(4));
    }

    static void write(Path dir, long recoveryPoint) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(SIZE).putInt(VERSION).putLong(recoveryPoint);
        buffer.putInt(crc(buffer.array()));
        DurableFiles.writeAtomically(dir.resolve(NAME), buffer.array());
    }

    private static int crc(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, 12);
        return (int) crc.getValue();
    }
}
