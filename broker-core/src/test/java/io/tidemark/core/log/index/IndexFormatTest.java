package io.tidemark.core.log.index;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Golden bytes and lookups of the offset index and the time index formats. */
class IndexFormatTest {
    @TempDir
    Path dir;

    @Test
    void offsetIndexGoldenBytesAndFloorLookups() throws Exception {
        Path file = dir.resolve("00000000000000000100.index");
        try (OffsetIndex index = OffsetIndex.map(IndexFile.create(file, 100, OffsetIndex.ENTRY_SIZE, 64))) {
            assertEquals(64, Files.size(file), "preallocated");
            index.append(103, 240);
            index.append(106, 480);
            index.append(300, 70_000);
            assertEquals(0, index.floorPosition(100));
            assertEquals(0, index.floorPosition(102));
            assertEquals(240, index.floorPosition(103));
            assertEquals(240, index.floorPosition(105));
            assertEquals(480, index.floorPosition(299));
            assertEquals(70_000, index.floorPosition(1_000_000));
            index.indexFile().trimToEntries();
        }
        assertEquals("00000003" + "000000f0" + "00000006" + "000001e0" + "000000c8" + "00011170",
                HexFormat.of().formatHex(Files.readAllBytes(file)));
        try (OffsetIndex reopened = OffsetIndex.map(IndexFile.open(file, 100, OffsetIndex.ENTRY_SIZE))) {
            assertEquals(3, reopened.entries());
            assertTrue(reopened.indexFile().openedWithWholeEntries());
            assertNull(reopened.inconsistency());
            assertEquals(300, reopened.offsetAt(2));
        }
    }

    @Test
    void timeIndexGoldenBytesAndScanStart() throws Exception {
        Path file = dir.resolve("00000000000000000000.timeindex");
        try (TimeIndex index = TimeIndex.map(IndexFile.create(file, 0, TimeIndex.ENTRY_SIZE, 120))) {
            index.append(1_700_000_000_000L, 3);
            index.append(1_700_000_000_000L, 6);
            index.append(1_700_000_005_000L, 9);
            assertEquals(0, index.scanStartOffset(1_700_000_000_000L), "equal times must not be skipped");
            assertEquals(6, index.scanStartOffset(1_700_000_000_001L));
            assertEquals(9, index.scanStartOffset(Long.MAX_VALUE));
            assertEquals(0, index.scanStartOffset(0));
            index.indexFile().trimToEntries();
        }
        assertEquals("0000018bcfe56800" + "00000003" + "0000018bcfe56800" + "00000006" + "0000018bcfe57b88" + "00000009",
                HexFormat.of().formatHex(Files.readAllBytes(file)));
    }

    @Test
    void entriesOutOfOrderAreProgrammerErrors() throws Exception {
        try (TimeIndex index = TimeIndex.map(IndexFile.create(dir.resolve("t"), 0, TimeIndex.ENTRY_SIZE, 120))) {
            index.append(10, 5);
            assertThrows(IllegalStateException.class, () -> index.append(9, 6));
            assertThrows(IllegalStateException.class, () -> index.append(10, 5));
        }
    }

    @Test
    void fullIndexSaysSo() throws Exception {
        try (OffsetIndex index = OffsetIndex.map(IndexFile.create(dir.resolve("o"), 0, OffsetIndex.ENTRY_SIZE, 20))) {
            index.append(1, 1);
            assertFalse(index.indexFile().isFull());
            index.append(2, 2);
            assertTrue(index.indexFile().isFull(), "20 bytes hold two 8-byte entries");
            assertThrows(IllegalStateException.class, () -> index.append(3, 3));
        }
    }

    @Test
    void damagedFilesAreDetected() throws Exception {
        Path file = dir.resolve("00000000000000000000.index");
        Files.write(file, HexFormat.of().parseHex("00000003000000f0" + "00000002000001e0" + "0000"));
        try (OffsetIndex index = OffsetIndex.map(IndexFile.open(file, 0, OffsetIndex.ENTRY_SIZE))) {
            assertFalse(index.indexFile().openedWithWholeEntries());
            assertEquals("entry 1 has offset 2, not above the previous 3", index.inconsistency());
        }
    }
}
