package io.tidemark.core.log;

import io.tidemark.proto.record.OriginPartition;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of an origin snapshot. */
class OriginSnapshotFileTest {
    private static final Map<OriginPartition, HeldOrigin> ENTRIES = Map.of(
            new OriginPartition("C", "t", 1), new HeldOrigin(9, 4),
            new OriginPartition("A", "t", 0), new HeldOrigin(300, 17));

    static final String GOLDEN = String.join("",
            "c8f6e560", // CRC32C of bytes 4..end
            "00000001", // version 1
            "0000000000000064", // as of offset 100
            "00000002", // 2 entries, sorted by cluster
            "000141", "000174", "00000000", "000000000000012c", "0000000000000011", // A:t-0 held 300 at 17
            "000143", "000174", "00000001", "0000000000000009", "0000000000000004"); // C:t-1 held 9 at 4

    @Test
    void encodesTheGoldenBytes() {
        assertEquals(GOLDEN, HexFormat.of().formatHex(OriginSnapshotFile.encode(100, ENTRIES)));
    }

    @Test
    void decodesWhatItEncodesAndRefusesDamage() {
        byte[] bytes = HexFormat.of().parseHex(GOLDEN);
        assertEquals(ENTRIES, OriginSnapshotFile.decode(bytes, 100));
        assertEquals("version 1 and offset 100 where version 1 and offset 200 were expected",
                assertThrows(IllegalArgumentException.class, () -> OriginSnapshotFile.decode(bytes, 200)).getMessage());
        bytes[30] ^= 1;
        assertEquals("its 72 bytes fail the CRC",
                assertThrows(IllegalArgumentException.class, () -> OriginSnapshotFile.decode(bytes, 100)).getMessage());
    }
}
