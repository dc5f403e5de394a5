package io.tidemark.core.log;

import io.tidemark.proto.record.OriginPartition;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of an origin snapshot. */
class OriginSnapshotFileTest {
    private static final UUID T_ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");
    /** The id of topic t of cluster A after it was deleted and created again: sorts after {@link #T_ID}. */
    private static final UUID T_RECREATED_ID = UUID.fromString("5a000000-0000-4000-8000-000000000001");
    private static final Map<OriginPartition, HeldOrigin> ENTRIES = Map.of(
            new OriginPartition("C", "t", T_ID, 1), new HeldOrigin(9, 4),
            new OriginPartition("A", "t", T_RECREATED_ID, 0), new HeldOrigin(2, 30),
            new OriginPartition("A", "t", T_ID, 0), new HeldOrigin(300, 17));

    static final String GOLDEN = String.join("",
            "2b093f45", // CRC32C of bytes 4..end
            "00000002", // version 2
            "0000000000000064", // as of offset 100
            "00000003", // 3 entries, sorted by cluster, topic, topic id, partition
            "000141", "000174", "0e4f7c2a5b1d4e8f9a3c6d2b1f0a7e95", // A:t, its first topic id
            "00000000", "000000000000012c", "0000000000000011", // partition 0 held 300 at 17
            "000141", "000174", "5a00000000004000" + "8000000000000001", // A:t created again
            "00000000", "0000000000000002", "000000000000001e", // partition 0 held 2 at 30
            "000143", "000174", "0e4f7c2a5b1d4e8f9a3c6d2b1f0a7e95", // C:t
            "00000001", "0000000000000009", "0000000000000004"); // partition 1 held 9 at 4

    @Test
    void encodesTheGoldenBytes() {
        assertEquals(GOLDEN, HexFormat.of().formatHex(OriginSnapshotFile.encode(100, ENTRIES)));
    }

    @Test
    void decodesWhatItEncodesAndRefusesDamage() {
        byte[] bytes = HexFormat.of().parseHex(GOLDEN);
        assertEquals(ENTRIES, OriginSnapshotFile.decode(bytes, 100));
        assertEquals("version 2 and offset 100 where version 2 and offset 200 were expected",
                assertThrows(IllegalArgumentException.class, () -> OriginSnapshotFile.decode(bytes, 200)).getMessage());
        bytes[30] ^= 1;
        assertEquals("its 146 bytes fail the CRC",
                assertThrows(IllegalArgumentException.class, () -> OriginSnapshotFile.decode(bytes, 100)).getMessage());
    }

    /** A snapshot written before topic ids: its entries name no topic, so the table is rebuilt from the log. */
    @Test
    void aVersion1SnapshotIsRefused() {
        byte[] version1 = HexFormat.of().parseHex("c8f6e560" + "00000001" + "0000000000000064" + "00000002"
                + "000141" + "000174" + "00000000" + "000000000000012c" + "0000000000000011"
                + "000143" + "000174" + "00000001" + "0000000000000009" + "0000000000000004");
        assertEquals("version 1 and offset 100 where version 2 and offset 100 were expected",
                assertThrows(IllegalArgumentException.class, () -> OriginSnapshotFile.decode(version1, 100))
                        .getMessage());
    }
}
