package io.tidemark.replication.raft;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * Checks the Raft log segment files of every group on this broker before Ratis opens them: a last entry torn by a
 * crash mid-write is cut off, any other damage stops the broker with a message naming the file. Ratis alone cannot
 * give both (Ratis 3.2, {@code SegmentedRaftLogReader.readEntry}, {@code LogSegment.readSegmentFile},
 * {@code LogSegment.loadSegment}):
 * <ul>
 *   <li>a file that ends inside an entry reads as a partial last entry, ignored with a warning, and the file is cut
 *       there, whatever {@code raft.server.log.corruption.policy} says;</li>
 *   <li>an entry whose CRC fails (or that does not parse, or non-zero bytes after the end of the entries) throws.
 *       With {@code EXCEPTION} the group does not start, with a message that names neither the file nor the entry;
 *       with {@code WARN_AND_RETURN} the segment keeps the entries before it, the rest of an open segment is dropped
 *       and the file cut, and a closed segment comes up short (deleted if nothing before it was whole), which fails
 *       later as a gap between segments, or not at all when it was the last.</li>
 * </ul>
 * Ratis preallocates the open segment with 0x00 bytes, so a write cut by a crash leaves the start of an entry followed
 * by zeros, not the end of the file: the CRC fails, and {@code EXCEPTION} would keep the broker from starting after
 * any crash mid-write, while {@code WARN_AND_RETURN} would silently drop acknowledged entries after a damaged one.
 * So {@link RaftSettings} sets {@code EXCEPTION} and this check, run first, decides:
 * <ul>
 *   <li>a closed segment ({@code log_START-END}, fsynced by Ratis before its rename) must hold {@code END - START + 1}
 *       whole entries; what follows them is not read (Ratis skips it);</li>
 *   <li>the open segment ({@code log_inprogress_START}) holds whole entries, then either only 0x00 bytes or one broken
 *       entry followed by only 0x00 bytes (or the end of the file). That broken entry is a torn write: Ratis fsyncs an
 *       entry before it acknowledges it, so it was never acknowledged, and the file is cut where it starts (and
 *       fsynced), with a warning. A broken entry followed by anything else is damage below the torn tail.</li>
 * </ul>
 * The open segment is then cut at the end of its entries, its preallocated zeros with it, as Ratis cuts it itself once
 * it has read it ({@code LogSegment.loadSegment}). Ratis 3.2 cannot read those zeros after an entry larger than half
 * its largest entry ({@code raft.server.log.appender.buffer.byte-limit}, a copy entry of a partition move or a group
 * commit under load): its reader grows its buffer to the largest entry for that one, then checks the zeros a buffer at
 * a time from the mark it set before the entry, which that reads past, and fails with "Resetting to invalid mark" (a
 * broker killed with such an entry in its open segment could never start again; ReassignIT found it. A clean stop
 * cuts the zeros).
 * A damaged last entry of the open segment looks exactly like a torn write and is cut like one. Every segment is read
 * once more than Ratis reads it at start (the page cache serves Ratis' read).
 *
 * <h2>A segment file (Ratis' {@code SegmentedRaftLogOutputStream}, big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |              Header: "RaftLog1" (8 bytes, ASCII)              |  0
 * |                                                               |
 * +---------------------------------------------------------------+
 * |  L: entry length (varint32, 1-5 bytes) ...                    |  8, then entry after entry
 * +---------------------------------------------------------------+
 * |  Entry: a Ratis LogEntryProto, L bytes ...                    |
 * +---------------------------------------------------------------+
 * |        CRC32C of the length and the entry (int32)             |
 * +---------------------------------------------------------------+
 * |  0x00 up to the end of the file (space preallocated)          |
 * +---------------------------------------------------------------+
 * </pre>
 * An entry never starts with 0x00 (its length is not 0), so the first 0x00 where an entry would start ends the
 * entries.
 *
 * <p>Stateless; run before the Raft server is built.
 */
public final class RaftLogCheck {
    private static final Logger LOG = LoggerFactory.getLogger(RaftLogCheck.class);
    static final byte[] HEADER = "RaftLog1".getBytes(StandardCharsets.US_ASCII);
    static final int CRC_BYTES = 4;
    private static final int VARINT_MAX_BYTES = 5;
    /** Ratis' names (LogSegmentStartEnd): an open segment may carry a suffix. */
    private static final Pattern CLOSED = Pattern.compile("log_(\\d+)-(\\d+)");
    private static final Pattern OPEN = Pattern.compile("log_inprogress_(\\d+)(?:\\..*)?");
    static final String CURRENT_DIR = "current";

    /** A segment file as Ratis names it; {@code lastIndex} -1 for the open segment. */
    record Segment(Path file, long firstIndex, long lastIndex) {
        boolean open() {
            return lastIndex < 0;
        }
    }

    /**
     * What reading a segment of {@code fileBytes} found: its whole entries end at byte {@code wholeBytes};
     * {@code tornBytes} after them are a torn last write (0 when there is none), and zeros follow up to the end.
     */
    record Scan(int entries, int wholeBytes, int tornBytes, int fileBytes) {
    }

    private RaftLogCheck() {
    }

    /**
     * Checks the segments of every group under Ratis' storage directory ({@code GROUP-UUID/current/}), cutting off
     * torn last writes.
     *
     * @throws IOException naming the file, the byte and what is wrong when a segment is damaged anywhere else
     */
    public static void checkGroups(Path storageDir) throws IOException {
        if (!Files.isDirectory(storageDir)) {
            return;
        }
        List<Path> currentDirs = new ArrayList<>();
        try (DirectoryStream<Path> groups = Files.newDirectoryStream(storageDir)) {
            for (Path group : groups) {
                if (isGroupId(group.getFileName().toString()) && Files.isDirectory(group.resolve(CURRENT_DIR))) {
                    currentDirs.add(group.resolve(CURRENT_DIR));
                }
            }
        }
        for (Path currentDir : currentDirs) {
            for (Segment segment : segments(currentDir)) {
                check(segment);
            }
        }
    }

    private static boolean isGroupId(String name) {
        try {
            UUID.fromString(name);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * For a state machine that found no snapshot, so rebuilds its state from every entry of the group's Raft log:
     * the log must start at index 0. A log that starts later was purged behind a snapshot that is gone (deleted, or
     * unreadable), and the state rebuilt from what is left would lack what the purged entries did.
     *
     * @param currentDir the group's Raft log directory ({@code GROUP-UUID/current/})
     * @param who        the group's replica, as the message names it
     * @throws IOException naming the directory and the log's first index when it is not 0
     */
    public static void requireLogFromStart(Path currentDir, String who) throws IOException {
        List<Segment> segments = segments(currentDir);
        if (!segments.isEmpty() && segments.get(0).firstIndex() > 0) {
            throw new IOException(who + " does not start: it has no snapshot, but its Raft log in " + currentDir
                    + " starts at index " + segments.get(0).firstIndex() + ", so the entries before were purged "
                    + "behind a snapshot that is gone (deleted, or unreadable) and its state cannot be rebuilt. "
                    + "Restore the snapshot, or delete the group's directory " + currentDir.getParent() + " so that "
                    + "this replica catches up from the leader when it joins the group again");
        }
    }

    /** The segment files of a group's {@code current/} directory, by first index. */
    static List<Segment> segments(Path currentDir) throws IOException {
        List<Segment> segments = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(currentDir)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                Matcher closed = CLOSED.matcher(name);
                Matcher open = OPEN.matcher(name);
                if (closed.matches()) {
                    segments.add(new Segment(file, Long.parseLong(closed.group(1)), Long.parseLong(closed.group(2))));
                } else if (open.matches()) {
                    segments.add(new Segment(file, Long.parseLong(open.group(1)), -1));
                }
            }
        }
        segments.sort(Comparator.comparingLong(Segment::firstIndex));
        return segments;
    }

    /** Checks one segment file and cuts off its torn last write. */
    static void check(Segment segment) throws IOException {
        Scan scan;
        try (FileChannel channel = FileChannel.open(segment.file(), StandardOpenOption.READ)) {
            if (channel.size() > Integer.MAX_VALUE) {
                throw new IOException(segment.file() + " has " + channel.size() + " bytes, more than a Raft log "
                        + "segment can have (raft.log.segment.bytes is at most 1 GiB)");
            }
            scan = scan(segment, read(channel));
        }
        if (segment.open() && scan.fileBytes() > scan.wholeBytes()) {
            try (FileChannel channel = FileChannel.open(segment.file(), StandardOpenOption.WRITE)) {
                channel.truncate(scan.wholeBytes());
                channel.force(true);
            }
        }
        if (scan.tornBytes() > 0) {
            LOG.warn("{}: cut off a Raft log entry torn by a crash mid-write at byte {} ({} bytes up to the zeros "
                    + "or the end of the file); it was never acknowledged. The segment keeps {} whole entries from "
                    + "index {}", segment.file(), scan.wholeBytes(), scan.tornBytes(), scan.entries(),
                    segment.firstIndex());
        }
    }

    /**
     * A segment's bytes, read into the heap rather than mapped: a file another thread of the process truncates (a
     * division Ratis is still closing, in tests that restart a broker in the same JVM) shortens a read, where a
     * mapping faults the JVM ({@code InternalError}).
     */
    private static ByteBuffer read(FileChannel channel) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate((int) channel.size());
        while (bytes.hasRemaining()) {
            if (channel.read(bytes) < 0) {
                break;
            }
        }
        return bytes.flip();
    }

    /**
     * Reads a segment's bytes.
     *
     * @throws IOException naming the file, the byte and what is wrong, when the segment is damaged other than by a
     *                     torn last write of the open segment
     */
    static Scan scan(Segment segment, ByteBuffer bytes) throws IOException {
        int size = bytes.limit();
        int headerMatched = 0;
        while (headerMatched < Math.min(size, HEADER.length) && bytes.get(headerMatched) == HEADER[headerMatched]) {
            headerMatched++;
        }
        if (headerMatched < HEADER.length) {
            if (segment.open() && zerosFrom(bytes, headerMatched) == size) {
                return new Scan(0, 0, size, size);
            }
            throw damaged(segment, 0, "does not start with the Raft log header \"RaftLog1\"");
        }
        long expected = segment.open() ? Long.MAX_VALUE : segment.lastIndex() - segment.firstIndex() + 1;
        int entries = 0;
        int at = HEADER.length;
        while (entries < expected && at < size && bytes.get(at) != 0) {
            String broken = brokenEntry(bytes, at);
            if (broken != null) {
                return brokenAt(segment, bytes, at, entries, broken);
            }
            at = entryEnd(bytes, at);
            entries++;
        }
        if (entries < expected && !segment.open()) {
            throw damaged(segment, at, "ends the entries after " + entries + " of the " + expected
                    + " its name says (indexes " + segment.firstIndex() + " to " + segment.lastIndex() + ")");
        }
        if (segment.open()) {
            int nonZero = zerosFrom(bytes, at);
            if (nonZero < size) {
                throw damaged(segment, nonZero, "has non-zero bytes after the end of its entries at byte " + at
                        + " (index " + (segment.firstIndex() + entries) + " would start there)");
            }
        }
        return new Scan(entries, at, 0, size);
    }

    /** A broken entry: the torn last write of the open segment when only zeros follow it, else damage. */
    private static Scan brokenAt(Segment segment, ByteBuffer bytes, int at, int entries, String broken)
            throws IOException {
        int size = bytes.limit();
        long extentEnd = Math.min(size, (long) at + declaredTotal(bytes, at));
        int nonZero = zerosFrom(bytes, (int) extentEnd);
        if (segment.open() && nonZero == size) {
            return new Scan(entries, at, (int) extentEnd - at, size);
        }
        String after = segment.open() ? "; non-zero bytes follow it at byte " + nonZero + ", so it is not a torn "
                + "last write" : "";
        throw damaged(segment, at, "has a damaged entry (index " + (segment.firstIndex() + entries) + "): " + broken
                + after);
    }

    /** Why the entry at {@code at} is not whole; null when it is. */
    private static String brokenEntry(ByteBuffer bytes, int at) {
        int size = bytes.limit();
        int lengthBytes = varintBytes(bytes, at);
        if (lengthBytes < 0) {
            return at + VARINT_MAX_BYTES > size ? "its length runs past the end of the file" : "its length is not a "
                    + "varint32";
        }
        long total = declaredTotal(bytes, at);
        if (at + total > size) {
            return "it says it takes " + total + " bytes, past the end of the file at byte " + size;
        }
        int covered = (int) total - CRC_BYTES;
        CRC32C crc = new CRC32C();
        crc.update(bytes.slice(at, covered));
        int computed = (int) crc.getValue();
        int stored = bytes.getInt(at + covered);
        if (stored != computed) {
            return String.format("CRC32C stored 0x%08x, computed 0x%08x", stored, computed);
        }
        return null;
    }

    private static int entryEnd(ByteBuffer bytes, int at) {
        return (int) (at + declaredTotal(bytes, at));
    }

    /** The bytes the entry at {@code at} says it takes (length, entry and CRC); 1 when its length is malformed. */
    private static long declaredTotal(ByteBuffer bytes, int at) {
        int lengthBytes = varintBytes(bytes, at);
        if (lengthBytes < 0) {
            return 1;
        }
        long length = 0;
        for (int i = 0; i < lengthBytes; i++) {
            length |= (long) (bytes.get(at + i) & 0x7f) << (7 * i);
        }
        return lengthBytes + length + CRC_BYTES;
    }

    /** How many bytes the varint32 at {@code at} takes; -1 when it is longer than 5 or runs past the end. */
    private static int varintBytes(ByteBuffer bytes, int at) {
        for (int i = 0; i < VARINT_MAX_BYTES && at + i < bytes.limit(); i++) {
            if ((bytes.get(at + i) & 0x80) == 0) {
                return i + 1;
            }
        }
        return -1;
    }

    /** The position of the first non-zero byte from {@code from}; the size when there is none. */
    private static int zerosFrom(ByteBuffer bytes, int from) {
        int at = from;
        while (at < bytes.limit() && bytes.get(at) == 0) {
            at++;
        }
        return at;
    }

    private static IOException damaged(Segment segment, int at, String what) {
        Path groupDir = segment.file().getParent().getParent();
        return new IOException("Raft log segment " + segment.file() + " " + what + " (at byte " + at + "). A damaged "
                + "entry below the log's end is never dropped: the broker does not start. Restore the file, or delete "
                + "the group's directory " + groupDir + " so that this replica copies the leader's log when it joins "
                + "the group again");
    }
}
