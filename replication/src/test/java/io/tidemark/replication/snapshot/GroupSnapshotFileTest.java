package io.tidemark.replication.snapshot;

import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.PartitionSnapshot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Optional;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of {@link GroupSnapshotFile}, and how it reads a damaged file. */
class GroupSnapshotFileTest {
    private static final HexFormat HEX = HexFormat.of();
    /** Group snapshot at term 7 index 300 of partition t-1 (topic id 0...1/0...2), offsets [100, 1000). */
    private static final GroupSnapshot SNAPSHOT = GroupSnapshot.newBuilder().setTerm(7).setIndex(300)
            .addPartitions(PartitionSnapshot.newBuilder().setPartition(GroupPartition.newBuilder().setTopic("t")
                    .setTopicId(TopicIds.toBytes(new UUID(1, 2))).setPartition(1))
                    .setLogStartOffset(100).setLogEndOffset(1000))
            .build();

    @TempDir
    Path dir;

    @Test
    void versionLengthBodyAndCrc() throws IOException {
        String body = "0807" + "10ac02" // term 7, index 300
                + "1a1e" + "0a17" + "0a0174" + "1210" + "00000000000000010000000000000002" + "1801" // partition t-1
                + "1064" + "18e807"; // log start 100, log end 1000
        String file = HEX.formatHex(GroupSnapshotFile.encode(SNAPSHOT));
        assertEquals("00000002" + "00000025" + body, file.substring(0, file.length() - 8),
                "version 2, a body of 37 bytes, then its CRC32C");

        Path written = dir.resolve("snapshot.7_300");
        GroupSnapshotFile.write(written, SNAPSHOT);
        assertEquals(SNAPSHOT, GroupSnapshotFile.read(written));
        assertFalse(Files.exists(dir.resolve("snapshot.7_300.tmp")), "the temporary file was renamed");
    }

    @Test
    void aDamagedFileIsRefusedNamingWhatIsWrong() throws IOException {
        byte[] whole = GroupSnapshotFile.encode(SNAPSHOT);
        byte[] flipped = whole.clone();
        flipped[20] ^= 1;
        assertEquals("f: CRC32C mismatch", assertThrows(IOException.class,
                () -> GroupSnapshotFile.decode(flipped, "f")).getMessage().substring(0, 18));
        assertEquals("f says its body takes 37 bytes, but the file has 48", assertThrows(IOException.class,
                () -> GroupSnapshotFile.decode(Arrays.copyOf(whole, 48), "f")).getMessage());
        byte[] version3 = whole.clone();
        version3[3] = 3;
        assertEquals("f has version 3; this broker reads version 2", assertThrows(IOException.class,
                () -> GroupSnapshotFile.decode(version3, "f")).getMessage());
        assertEquals("f has 8 bytes: too short for a group snapshot (it looks like a version 1 snapshot of a "
                + "one-partition group, from before groups hosted many partitions: delete the broker's data directory "
                + "to start it afresh)", assertThrows(IOException.class,
                () -> GroupSnapshotFile.decode(new byte[8], "f")).getMessage());
        assertEquals(Optional.empty(), GroupSnapshotFile.readIfWhole(dir.resolve("missing")));
        Files.write(dir.resolve("torn"), Arrays.copyOf(whole, 20));
        assertEquals(Optional.empty(), GroupSnapshotFile.readIfWhole(dir.resolve("torn")));
    }
}
