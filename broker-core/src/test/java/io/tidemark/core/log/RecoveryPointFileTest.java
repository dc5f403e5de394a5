package io.tidemark.core.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

class RecoveryPointFileTest {
    @TempDir
    Path dir;

    @Test
    void goldenBytesAndRoundTrip() throws Exception {
        RecoveryPointFile.write(dir, 300);
        assertEquals("00000001" + "000000000000012c" + "a102ba6c",
                HexFormat.of().formatHex(Files.readAllBytes(dir.resolve(RecoveryPointFile.NAME))));
        assertEquals(OptionalLong.of(300), RecoveryPointFile.read(dir));
    }

    @Test
    void missingShortOrCorruptReadsAsEmpty() throws Exception {
        assertEquals(OptionalLong.empty(), RecoveryPointFile.read(dir));
        RecoveryPointFile.write(dir, 300);
        byte[] bytes = Files.readAllBytes(dir.resolve(RecoveryPointFile.NAME));
        bytes[11] ^= 1;
        Files.write(dir.resolve(RecoveryPointFile.NAME), bytes);
        assertEquals(OptionalLong.empty(), RecoveryPointFile.read(dir));
        Files.write(dir.resolve(RecoveryPointFile.NAME), new byte[5]);
        assertEquals(OptionalLong.empty(), RecoveryPointFile.read(dir));
    }
}
