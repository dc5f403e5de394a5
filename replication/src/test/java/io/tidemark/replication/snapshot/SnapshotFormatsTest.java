package io.tidemark.replication.snapshot;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of {@link SnapshotFile} and {@link InstallManifest}, and how each reads a damaged file. */
class SnapshotFormatsTest {
    @TempDir
    Path dir;

    @Test
    void aSnapshotFileIsTheLogEndOffsetInEightBigEndianBytes() throws IOException {
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, SnapshotFile.encode(0x0102030405060708L));
        Path file = dir.resolve("snapshot.3_120");
        SnapshotFile.write(file, 4711);
        assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0x12, 0x67}, Files.readAllBytes(file));
        assertEquals(4711, SnapshotFile.read(file));
        assertEquals(false, Files.exists(dir.resolve("snapshot.3_120.tmp")), "the temporary file was renamed");

        Files.write(file, new byte[7]);
        assertEquals("snapshot " + file + " has 7 bytes, not 8",
                assertThrows(IOException.class, () -> SnapshotFile.read(file)).getMessage());
    }

    @Test
    void anInstallManifestHoldsVersionTermIndexOffsetsAndACrc() throws IOException {
        byte[] fields = {
                0, 0, 0, 1,
                0, 0, 0, 0, 0, 0, 0, 7,
                0, 0, 0, 0, 0, 0, 0x30, 0x39,
                0, 0, 0, 0, 0, 0, 0, 100,
                0, 0, 0, 0, 0, 0, 0x03, (byte) 0xE8};
        CRC32C crc = new CRC32C();
        crc.update(fields);
        int value = (int) crc.getValue();
        byte[] golden = Arrays.copyOf(fields, 40);
        golden[36] = (byte) (value >>> 24);
        golden[37] = (byte) (value >>> 16);
        golden[38] = (byte) (value >>> 8);
        golden[39] = (byte) value;
        SnapshotDescriptor snapshot = new SnapshotDescriptor(7, 12345, 100, 1000);
        assertArrayEquals(golden, InstallManifest.encode(snapshot));

        InstallManifest.write(dir, snapshot);
        assertEquals(Optional.of(snapshot), InstallManifest.read(dir));
    }

    @Test
    void aDamagedOrMissingManifestReadsAsNone() throws IOException {
        assertEquals(Optional.empty(), InstallManifest.read(dir), "no manifest");
        byte[] whole = InstallManifest.encode(new SnapshotDescriptor(7, 12345, 100, 1000));

        byte[] flipped = whole.clone();
        flipped[20] ^= 1;
        assertEquals(Optional.empty(), InstallManifest.decode(flipped), "CRC mismatch");
        assertEquals(Optional.empty(), InstallManifest.decode(Arrays.copyOf(whole, 39)), "torn");
        byte[] version2 = whole.clone();
        version2[3] = 2;
        assertEquals(Optional.empty(), InstallManifest.decode(version2), "another version");
    }
}
