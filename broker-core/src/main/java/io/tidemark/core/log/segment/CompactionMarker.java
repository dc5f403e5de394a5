package io.tidemark.core.log.segment;

import io.tidemark.core.log.DurableFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * The marker of a compacted segment, {@code <base offset in 20 digits>.compacted} beside its log file. Its presence
 * says the segment's batches may leave gaps between their offsets; its content says where the segment ends, which
 * its last batch no longer does when compaction removed the last records.
 *
 * <h2>Format (8 bytes)</h2>
 * <pre>
 * End Offset   int64, big-endian   the offset after the segment's last offset before compaction: the base
 *                                  offset of the next segment
 * </pre>
 * Written whole, by rename ({@link DurableFiles#writeAtomically}); a marker of any other size is refused.
 */
public final class CompactionMarker {
    private static final int SIZE_BYTES = Long.BYTES;

    private CompactionMarker() {
    }

    /** The marker of segment {@code baseOffset} in {@code dir}. */
    public static Path file(Path dir, long baseOffset) {
        return LogSegment.file(dir, baseOffset, LogSegment.COMPACTED_SUFFIX);
    }

    /** Writes the marker of segment {@code baseOffset} that ends before {@code endOffset}, durably. */
    public static void write(Path dir, long baseOffset, long endOffset) throws IOException {
        if (endOffset < baseOffset) {
            throw new IllegalArgumentException("segment " + baseOffset + " cannot end at " + endOffset);
        }
        DurableFiles.writeAtomically(file(dir, baseOffset), ByteBuffer.allocate(SIZE_BYTES).putLong(endOffset)
                .array());
    }

    /**
     * The end offset the marker of segment {@code baseOffset} holds; empty when there is none.
     *
     * @throws IOException when the marker is not 8 bytes or names an end below the base offset
     */
    static OptionalLong read(Path dir, long baseOffset) throws IOException {
        Path file = file(dir, baseOffset);
        if (!Files.exists(file)) {
            return OptionalLong.empty();
        }
        byte[] bytes = Files.readAllBytes(file);
        if (bytes.length != SIZE_BYTES) {
            throw new IOException(file + " holds " + bytes.length + " bytes; a compaction marker holds "
                    + SIZE_BYTES);
        }
        long end = ByteBuffer.wrap(bytes).getLong();
        if (end < baseOffset) {
            throw new IOException(file + " says the segment ends at offset " + end + ", below its base offset "
                    + baseOffset);
        }
        return OptionalLong.of(end);
    }
}
