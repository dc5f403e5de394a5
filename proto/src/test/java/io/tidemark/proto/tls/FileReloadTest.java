package io.tidemark.proto.tls;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class FileReloadTest {
    @TempDir
    Path dir;

    private final List<String> loads = new ArrayList<>();
    private boolean broken;

    private void load(Path file) throws IOException, GeneralSecurityException {
        if (broken) {
            throw new GeneralSecurityException("key does not match the certificate");
        }
        loads.add(Files.readString(file));
    }

    /** Writes {@code text} with a modification time of its own, as a rename of a new file gives. */
    private static void write(Path file, String text, long second) throws IOException {
        Files.writeString(file, text);
        Files.setLastModifiedTime(file, FileTime.fromMillis(second * 1_000));
    }

    @Test
    void filesAreLoadedAgainOnlyWhenTheyChangeAndABadLoadWaitsForTheNextChange() throws Exception {
        Path cert = dir.resolve("cert.pem");
        write(cert, "one", 1);
        FileReload reload = new FileReload("the certificate", List.of(cert), () -> load(cert));
        reload.run();
        assertEquals(List.of("one"), loads, "loaded once, not again while unchanged");

        write(cert, "two", 2);
        reload.run();
        reload.run();
        assertEquals(List.of("one", "two"), loads);

        broken = true;
        write(cert, "three", 3);
        reload.run();
        broken = false;
        reload.run();
        assertEquals(List.of("one", "two"), loads, "a failed load is not tried again until the files change");
        write(cert, "four", 4);
        reload.run();
        assertEquals(List.of("one", "two", "four"), loads);

        Files.delete(cert);
        reload.run();
        assertEquals(List.of("one", "two", "four"), loads, "a missing file fails to load and keeps the last");
    }
}
