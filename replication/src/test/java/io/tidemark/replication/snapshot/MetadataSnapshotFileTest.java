package io.tidemark.replication.snapshot;

import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.MetadataSnapshot;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionGroupRecord;
import io.tidemark.proto.v1.TopicAssignment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of {@link MetadataSnapshotFile}, and how it reads a damaged file. */
class MetadataSnapshotFileTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final UUID TOPIC = new UUID(1, 2);
    private static final UUID GROUP = new UUID(3, 4);
    /** Metadata at term 2 index 40: topic t (one partition on node 1, in the group of [1]) and that group. */
    private static final MetadataSnapshot SNAPSHOT = MetadataSnapshot.newBuilder().setTerm(2).setIndex(40)
            .addTopics(TopicAssignment.newBuilder().setName("t").setReplicationFactor(1)
                    .addPartitions(PartitionAssignment.newBuilder().addReplicaNodeIds(1)
                            .setGroupId(TopicIds.toBytes(GROUP)))
                    .setTopicId(TopicIds.toBytes(TOPIC)))
            .addGroups(PartitionGroupRecord.newBuilder().setGroupId(TopicIds.toBytes(GROUP)).addReplicaNodeIds(1))
            .build();

    @TempDir
    Path dir;

    @Test
    void versionLengthBodyAndCrc() throws IOException {
        String group = "00000000000000030000000000000004";
        String body = "0802" + "1028" // term 2, index 40
                + "1a2e" + "0a0174" + "1001" // topic t, replication factor 1
                + "2215" + "120101" + "2210" + group // partition 0 on [1] in the group
                + "2a10" + "00000000000000010000000000000002" // the topic's id
                + "2215" + "0a10" + group + "120101"; // the group of [1], slot 0
        String file = HEX.formatHex(MetadataSnapshotFile.encode(SNAPSHOT));
        assertEquals("00000001" + "0000004b" + body, file.substring(0, file.length() - 8),
                "version 1, a body of 75 bytes, then its CRC32C");

        Path written = dir.resolve("snapshot.2_40");
        MetadataSnapshotFile.write(written, SNAPSHOT);
        assertEquals(SNAPSHOT, MetadataSnapshotFile.read(written));
        assertFalse(Files.exists(dir.resolve("snapshot.2_40.tmp")), "the temporary file was renamed");
    }

    @Test
    void aDamagedFileIsRefusedNamingWhatIsWrong() {
        byte[] whole = MetadataSnapshotFile.encode(SNAPSHOT);
        byte[] flipped = whole.clone();
        flipped[30] ^= 1;
        assertEquals("f: CRC32C mismatch", assertThrows(IOException.class,
                () -> MetadataSnapshotFile.decode(flipped, "f")).getMessage().substring(0, 18));
        assertEquals("f has 5 bytes: too short for a metadata snapshot", assertThrows(IOException.class,
                () -> MetadataSnapshotFile.decode(new byte[5], "f")).getMessage());
        byte[] version2 = whole.clone();
        version2[3] = 2;
        assertEquals("f has version 2; this broker reads version 1", assertThrows(IOException.class,
                () -> MetadataSnapshotFile.decode(version2, "f")).getMessage());
    }
}
