package io.tidemark.core.log;

import io.tidemark.core.log.segment.LogSegment;
import io.tidemark.proto.record.OriginPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * A snapshot of a partition's {@link OriginOffsetTable} as of an offset: a {@code .origins} file named like the
 * segment that starts there ({@code 00000000000000000300.origins} holds the table of offsets 0-299). The log
 * writes one when a segment rolls, so rebuilding the table reads one snapshot and the mirrored batches after it
 * (at most the active segment, plus any segment whose snapshot was lost), never the whole log. Retention deletes a
 * segment's snapshot with the segment, and the first segment kept still has its own, so the table outlives the
 * records it was built from.
 *
 * <h2>Format (big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 CRC32C of bytes 4 to the end                  |  0
 * +---------------------------------------------------------------+
 * |                      Version (int32) = 2                      |  4
 * +---------------------------------------------------------------+
 * |                       Offset (int64)                          |  8
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                     Entry Count (int32)                       | 16
 * +---------------------------------------------------------------+
 * |                  Entries (Entry Count of them)               ... 20
 * +---------------------------------------------------------------+
 * Entry (C and T bytes of names, so the fields after them lie at no fixed offset):
 * +---------------------------------------------------------------+
 * |   Cluster Length C (int16)    |  Cluster (C bytes, UTF-8)    ...
 * +---------------------------------------------------------------+
 * |    Topic Length T (int16)     |   Topic (T bytes, UTF-8)     ...
 * +---------------------------------------------------------------+
 * |             Topic Id, most significant bits (int64)           |
 * |                                                               |
 * +---------------------------------------------------------------+
 * |            Topic Id, least significant bits (int64)           |
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                  Origin Partition (int32)                     |
 * +---------------------------------------------------------------+
 * |              Last Origin Offset Held (int64)                  |
 * |                                                               |
 * +---------------------------------------------------------------+
 * |      Offset of that record in this partition (int64)          |
 * |                                                               |
 * +---------------------------------------------------------------+
 * </pre>
 * An entry is one origin partition: the origin topic's id ({@link io.tidemark.proto.record.TopicIds}) is part of it,
 * so a topic deleted and created again under the same name is another origin, whose offsets start again. Offset repeats the file name so a renamed file is
 * caught. Entries are sorted (cluster, topic, topic id, partition), so equal tables give equal bytes on every
 * replica. The CRC covers everything after it: a torn or damaged file is ignored (with a warning) and the rebuild
 * falls back to an earlier snapshot, or to the log start: slower, and when retention already deleted the segments
 * that older entries came from, those entries are lost (a mirror would copy those records again). A version-1 file
 * (the same without Topic Id, written before topic ids) is ignored the same way. Written to a {@code .tmp} file,
 * fsynced, renamed, and the directory fsynced.
 */
final class OriginSnapshotFile {
    static final String SUFFIX = ".origins";
    private static final Logger LOG = LoggerFactory.getLogger(OriginSnapshotFile.class);
    private static final int VERSION = 2;
    private static final int CRC_OFFSET = 0;
    private static final int VERSION_OFFSET = CRC_OFFSET + 4;
    private static final int SNAPSHOT_OFFSET_OFFSET = VERSION_OFFSET + 4;
    private static final int COUNT_OFFSET = SNAPSHOT_OFFSET_OFFSET + 8;
    private static final int ENTRIES_OFFSET = COUNT_OFFSET + 4;
    /** An entry's bytes after its names: topic id (16), partition (4), origin offset (8), offset (8). */
    private static final int ENTRY_FIXED_BYTES = 16 + 4 + 8 + 8;

    private OriginSnapshotFile() {
    }

    static Path file(Path dir, long offset) {
        return LogSegment.file(dir, offset, SUFFIX);
    }

    /** The bytes of a snapshot of {@code entries} as of {@code offset}. */
    static byte[] encode(long offset, Map<OriginPartition, HeldOrigin> entries) {
        TreeSet<OriginPartition> sorted = new TreeSet<>(Comparator.comparing(OriginPartition::cluster)
                .thenComparing(OriginPartition::topic).thenComparing(OriginPartition::topicId)
                .thenComparingInt(OriginPartition::partition));
        sorted.addAll(entries.keySet());
        int size = ENTRIES_OFFSET;
        for (OriginPartition origin : sorted) {
            size += 2 + utf8(origin.cluster()).length + 2 + utf8(origin.topic()).length + ENTRY_FIXED_BYTES;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.position(VERSION_OFFSET);
        buffer.putInt(VERSION).putLong(offset).putInt(sorted.size());
        for (OriginPartition origin : sorted) {
            HeldOrigin held = entries.get(origin);
            putString(buffer, origin.cluster());
            putString(buffer, origin.topic());
            buffer.putLong(origin.topicId().getMostSignificantBits())
                    .putLong(origin.topicId().getLeastSignificantBits());
            buffer.putInt(origin.partition()).putLong(held.originOffset()).putLong(held.offset());
        }
        buffer.putInt(CRC_OFFSET, crc(buffer.array()));
        return buffer.array();
    }

    /** Writes a snapshot of {@code entries} as of {@code offset}, atomically and durably. */
    static void write(Path dir, long offset, Map<OriginPartition, HeldOrigin> entries) throws IOException {
        DurableFiles.writeAtomically(file(dir, offset), encode(offset, entries));
    }

    /**
     * The entries of the snapshot file for {@code offset}; empty when it is missing, torn, damaged or not for that
     * offset.
     */
    static Optional<Map<OriginPartition, HeldOrigin>> read(Path dir, long offset) throws IOException {
        Path path = file(dir, offset);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        try {
            return Optional.of(decode(bytes, offset));
        } catch (IllegalArgumentException | BufferUnderflowException | IndexOutOfBoundsException e) {
            LOG.warn("Ignoring origin snapshot {}: {}", path, e.getMessage());
            return Optional.empty();
        }
    }

    /** @throws IllegalArgumentException when the bytes are not a whole, intact snapshot as of {@code offset} */
    static Map<OriginPartition, HeldOrigin> decode(byte[] bytes, long offset) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        if (bytes.length < ENTRIES_OFFSET || buffer.getInt(CRC_OFFSET) != crc(bytes)) {
            throw new IllegalArgumentException("its " + bytes.length + " bytes fail the CRC");
        }
        if (buffer.getInt(VERSION_OFFSET) != VERSION || buffer.getLong(SNAPSHOT_OFFSET_OFFSET) != offset) {
            throw new IllegalArgumentException("version " + buffer.getInt(VERSION_OFFSET) + " and offset "
                    + buffer.getLong(SNAPSHOT_OFFSET_OFFSET) + " where version " + VERSION + " and offset " + offset
                    + " were expected");
        }
        int count = buffer.getInt(COUNT_OFFSET);
        buffer.position(ENTRIES_OFFSET);
        Map<OriginPartition, HeldOrigin> entries = new HashMap<>();
        for (int i = 0; i < count; i++) {
            OriginPartition origin = new OriginPartition(getString(buffer), getString(buffer),
                    new UUID(buffer.getLong(), buffer.getLong()), buffer.getInt());
            entries.put(origin, new HeldOrigin(buffer.getLong(), buffer.getLong()));
        }
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException(buffer.remaining() + " bytes follow the last of " + count + " entries");
        }
        return entries;
    }

    /** Offsets of the snapshot files in {@code dir}, ascending. */
    static TreeSet<Long> offsets(Path dir) throws IOException {
        TreeSet<Long> offsets = new TreeSet<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                offsets.add(Long.parseLong(name.substring(0, name.length() - SUFFIX.length())));
            }
        }
        return offsets;
    }

    static void delete(Path dir, long offset) throws IOException {
        Files.deleteIfExists(file(dir, offset));
    }

    private static void putString(ByteBuffer buffer, String text) {
        byte[] bytes = utf8(text);
        buffer.putShort((short) bytes.length).put(bytes);
    }

    private static String getString(ByteBuffer buffer) {
        byte[] bytes = new byte[Short.toUnsignedInt(buffer.getShort())];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static int crc(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, VERSION_OFFSET, bytes.length - VERSION_OFFSET);
        return (int) crc.getValue();
    }
}
