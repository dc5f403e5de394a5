package io.tidemark.cli;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.tls.TlsSettings;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A client properties file (--command-config and the mirror's): its tls.* keys, and nothing else. */
class ClientOptionsTest {
    @TempDir
    Path dir;

    @Test
    void withoutAFileTheClientTalksPlainText() {
        assertEquals(Optional.empty(), ClientOptions.tlsSettings(null, "--command-config"));
    }

    @Test
    void aFileGivesTheCaAndTheClientsCertificate() throws IOException {
        Path file = Files.writeString(dir.resolve("admin.properties"),
                "tls.ca.file=/c/ca.pem\ntls.cert.file=/c/admin.pem\ntls.key.file=/c/admin.key\n");
        TlsSettings settings = ClientOptions.tlsSettings(file, "--source-command-config").orElseThrow();
        assertEquals(List.of(Path.of("/c/ca.pem"), Optional.of(Path.of("/c/admin.pem")),
                Optional.of(Path.of("/c/admin.key"))), List.of(settings.caFile(), settings.certFile(),
                settings.keyFile()));
    }

    @Test
    void anUnknownKeyOrAMissingFileIsRefusedNamingIt() throws IOException {
        Path file = Files.writeString(dir.resolve("typo.properties"), "tls.ca.file=/c/ca.pem\nssl.truststore=x\n");
        TidemarkException unknown = assertThrows(TidemarkException.class,
                () -> ClientOptions.tlsSettings(file, "--command-config"));
        assertEquals(ErrorCode.INVALID_CONFIG, unknown.code());
        assertEquals("unknown key(s) [ssl.truststore] in --command-config " + file + "; known keys: "
                + "[tls.broker.subjects, tls.ca.file, tls.cert.file, tls.client.auth, tls.key.file, tls.protocols, "
                + "tls.reload.interval.ms]", unknown.getMessage());
        Path missing = dir.resolve("missing.properties");
        TidemarkException unread = assertThrows(TidemarkException.class,
                () -> ClientOptions.tlsSettings(missing, "--target-command-config"));
        assertEquals("cannot read --target-command-config " + missing + ": java.nio.file.NoSuchFileException: "
                + missing, unread.getMessage());
    }
}
