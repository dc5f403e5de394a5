package io.tidemark.replication.raft;

import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.server.raftlog.segmented.SegmentedRaftLogOutputStream;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.CodedOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link RaftLogCheck} on segment files written by Ratis' own writer (entries "entry 0", "entry 1", ... of 17 or 18
 * bytes with their frame), damaged the ways a crash and a bad disk damage them.
 */
class RaftLogCheckTest {
    /** Ratis preallocates the open segment with zeros (and cuts them off when it closes the segment cleanly). */
    private static final int PREALLOCATED_BYTES = 4096;
    private static final String ADVICE = ". A damaged entry below the log's end is never dropped: the broker does not "
            + "start. Restore the file, or delete the group's directory %s so that this replica copies the leader's "
            + "log when it joins the group again";

    @TempDir
    Path dir;

    private Path currentDir() throws IOException {
        return Files.createDirectories(dir.resolve(UUID.nameUUIDFromBytes(new byte[] {1}).toString())
                .resolve("current"));
    }

    private static LogEntryProto entry(long index) {
        return LogEntryProto.newBuilder().setTerm(1).setIndex(index).setStateMachineLogEntry(StateMachineLogEntryProto
                .newBuilder().setLogData(ByteString.copyFromUtf8("entry " + index))).build();
    }

    /** The bytes an entry takes in a segment: its length, itself and its CRC. */
    private static int frameBytes(LogEntryProto entry) {
        int serialized = entry.getSerializedSize();
        return CodedOutputStream.computeUInt32SizeNoTag(serialized) + serialized + RaftLogCheck.CRC_BYTES;
    }

    /** Where entry {@code entryIndex} starts in a segment whose first entry is {@code from}. */
    private static int startOf(long from, long entryIndex) {
        int at = RaftLogCheck.HEADER.length;
        for (long i = from; i < entryIndex; i++) {
            at += frameBytes(entry(i));
        }
        return at;
    }

    /**
     * Writes entries {@code from} to {@code to} as Ratis does, into the open segment; closes it when asked, else
     * leaves it as a crash does: with the zeros Ratis preallocated after the entries.
     */
    private static Path write(Path currentDir, long from, long to, boolean close) throws IOException {
        Path open = currentDir.resolve("log_inprogress_" + from);
        try (SegmentedRaftLogOutputStream out = new SegmentedRaftLogOutputStream(open.toFile(), false, 1 << 20,
                PREALLOCATED_BYTES, ByteBuffer.allocateDirect(64 << 10))) {
            for (long i = from; i <= to; i++) {
                out.write(entry(i));
            }
        }
        if (!close) {
            try (FileChannel channel = FileChannel.open(open, StandardOpenOption.WRITE)) {
                channel.write(ByteBuffer.allocate((int) (PREALLOCATED_BYTES - channel.size())), channel.size());
            }
            return open;
        }
        return Files.move(open, currentDir.resolve("log_" + from + "-" + to));
    }

    private static void overwrite(Path file, int at, byte[] bytes) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(bytes), at);
        }
    }

    private static void flip(Path file, int at) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        overwrite(file, at, new byte[] {(byte) (bytes[at] ^ 0x10)});
    }

    private static String crcMismatch(Path file, int at, long index) throws IOException {
        int frame = frameBytes(entry(index));
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file));
        CRC32C crc = new CRC32C();
        crc.update(bytes.slice(at, frame - RaftLogCheck.CRC_BYTES));
        return String.format("has a damaged entry (index %d): CRC32C stored 0x%08x, computed 0x%08x", index,
                bytes.getInt(at + frame - RaftLogCheck.CRC_BYTES), (int) crc.getValue());
    }

    private static String refusal(Path file, String what, int at) {
        return "Raft log segment " + file + " " + what + " (at byte " + at + ")"
                + String.format(ADVICE, file.getParent().getParent());
    }

    /**
     * Whole segments keep their entries as they are; the open one loses the zeros preallocated after them, as Ratis
     * cuts them once it has read the segment (its reader fails on them after a large entry: GroupRestartTest).
     */
    @Test
    void wholeSegmentsKeepTheirEntriesAndTheOpenOneLosesItsZeros() throws IOException {
        Path current = currentDir();
        Path closed = write(current, 0, 9, true);
        Path open = write(current, 10, 14, false);
        byte[] closedBytes = Files.readAllBytes(closed);
        byte[] openBytes = Files.readAllBytes(open);
        Files.createDirectories(dir.resolve("not-a-group").resolve("current"));
        Files.write(dir.resolve("not-a-group").resolve("current").resolve("log_inprogress_0"), new byte[] {1});

        RaftLogCheck.checkGroups(dir);

        assertArrayEquals(closedBytes, Files.readAllBytes(closed));
        assertEquals(PREALLOCATED_BYTES, openBytes.length);
        assertArrayEquals(Arrays.copyOf(openBytes, startOf(10, 15)), Files.readAllBytes(open));
        assertEquals(List.of(new RaftLogCheck.Segment(closed, 0, 9), new RaftLogCheck.Segment(open, 10, -1)),
                RaftLogCheck.segments(current));
    }

    @Test
    void aLastWriteTornInThePreallocatedZerosIsCutOff() throws IOException {
        Path open = write(currentDir(), 0, 4, false);
        int lastStart = startOf(0, 4);
        overwrite(open, startOf(0, 5) - 6, new byte[6]);

        RaftLogCheck.checkGroups(dir);

        assertEquals(lastStart, Files.size(open), "the entries before the torn one stay, the rest is cut");
    }

    @Test
    void aFileEndingInsideItsLastEntryIsCutAtTheEntry() throws IOException {
        Path open = write(currentDir(), 0, 4, false);
        try (FileChannel channel = FileChannel.open(open, StandardOpenOption.WRITE)) {
            channel.truncate(startOf(0, 5) - 3);
        }

        RaftLogCheck.checkGroups(dir);

        assertEquals(startOf(0, 4), Files.size(open));
    }

    @Test
    void aHeaderTornBeforeAnyEntryLeavesAnEmptyFile() throws IOException {
        Path open = currentDir().resolve("log_inprogress_7");
        Files.write(open, Arrays.copyOf(RaftLogCheck.HEADER, 5));

        RaftLogCheck.checkGroups(dir);

        assertEquals(0, Files.size(open), "Ratis deletes an empty open segment");
    }

    @Test
    void aDamagedEntryBelowTheLastOneOfTheOpenSegmentIsRefused() throws IOException {
        Path open = write(currentDir(), 0, 4, false);
        int damaged = startOf(0, 2);
        flip(open, damaged + 5);
        byte[] before = Files.readAllBytes(open);

        IOException refused = assertThrows(IOException.class, () -> RaftLogCheck.checkGroups(dir));

        assertEquals(refusal(open, crcMismatch(open, damaged, 2) + "; non-zero bytes follow it at byte "
                + startOf(0, 3) + ", so it is not a torn last write", damaged), refused.getMessage());
        assertArrayEquals(before, Files.readAllBytes(open), "nothing is cut");
    }

    @Test
    void aDamagedLastEntryOfAClosedSegmentIsRefused() throws IOException {
        Path current = currentDir();
        Path closed = write(current, 0, 4, true);
        write(current, 5, 6, false);
        int damaged = startOf(0, 4);
        flip(closed, damaged + 3);

        IOException refused = assertThrows(IOException.class, () -> RaftLogCheck.checkGroups(dir));

        assertEquals(refusal(closed, crcMismatch(closed, damaged, 4), damaged), refused.getMessage());
    }

    @Test
    void aClosedSegmentWithFewerEntriesThanItsNameSaysIsRefused() throws IOException {
        Path current = currentDir();
        Path closed = Files.move(write(current, 0, 3, true), current.resolve("log_0-5"));

        IOException refused = assertThrows(IOException.class, () -> RaftLogCheck.checkGroups(dir));

        assertEquals(refusal(closed, "ends the entries after 4 of the 6 its name says (indexes 0 to 5)",
                startOf(0, 4)), refused.getMessage());
    }

    @Test
    void bytesAfterTheEntriesOfTheOpenSegmentAreRefused() throws IOException {
        Path open = write(currentDir(), 0, 2, false);
        overwrite(open, startOf(0, 3) + 100, new byte[] {7});

        IOException refused = assertThrows(IOException.class, () -> RaftLogCheck.checkGroups(dir));

        assertEquals(refusal(open, "has non-zero bytes after the end of its entries at byte " + startOf(0, 3)
                + " (index 3 would start there)", startOf(0, 3) + 100), refused.getMessage());
    }

    @Test
    void aSegmentWithoutTheHeaderIsRefused() throws IOException {
        Path open = write(currentDir(), 0, 2, false);
        overwrite(open, 0, new byte[] {'X'});

        IOException refused = assertThrows(IOException.class, () -> RaftLogCheck.checkGroups(dir));

        assertEquals(refusal(open, "does not start with the Raft log header \"RaftLog1\"", 0), refused.getMessage());
    }
}
