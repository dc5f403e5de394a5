package io.tidemark.cli;

import io.tidemark.cli.ThrowawayCertificateAuthority.Validity;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.tls.TlsSettings;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import javax.security.auth.x500.X500Principal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A client properties file (--command-config and the mirror's): its tls.* keys and token.file, and nothing else. */
class ClientOptionsTest {
    private static final ClientOptions.TlsFlags NO_FLAGS = ClientOptions.TlsFlags.NONE;

    private static final String TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";

    @TempDir
    Path dir;

    /** A CA bundle to turn TLS on with. */
    private Path caFile() throws IOException {
        ThrowawayCertificateAuthority.create(new X500Principal("CN=test CA"), Validity.from(Instant.parse("2026-12-01T00:00:00Z"),
                Duration.ofDays(1)), new SecureRandom()).write(dir);
        return dir.resolve(ThrowawayCertificateAuthority.CERTIFICATE_FILE);
    }

    @Test
    void tokenFileInTheFileGivesEveryClientItsToken() throws IOException {
        Path token = Files.writeString(dir.resolve("alice.token"), TOKEN + "\n");
        Path file = Files.writeString(dir.resolve("alice.properties"), "tls.ca.file=" + caFile() + "\ntoken.file="
                + token + "\n");
        try (ClientOptions options = ClientOptions.of("127.0.0.1:9400", file)) {
            assertEquals("BearerToken(" + token + ")", options.token().orElseThrow().toString());
            options.adminConfig().build();
            options.producerConfig().build();
            options.consumerConfig().build();
        }
    }

    @Test
    void theTokenFileFlagWinsOverTheFile() throws IOException {
        Path fromFile = Files.writeString(dir.resolve("file.token"), TOKEN + "\n");
        Path fromFlag = Files.writeString(dir.resolve("flag.token"), TOKEN + "\n");
        Path file = Files.writeString(dir.resolve("client.properties"), "tls.ca.file=" + caFile() + "\ntoken.file="
                + fromFile + "\n");
        try (ClientOptions options = new ClientOptions()) {
            new CommandLine(options).parseArgs("--command-config", file.toString(), "--token-file",
                    fromFlag.toString());
            assertEquals("BearerToken(" + fromFlag + ")", options.token().orElseThrow().toString());
        }
        try (ClientOptions none = ClientOptions.of("127.0.0.1:9400", null)) {
            assertEquals(Optional.empty(), none.token());
        }
    }

    @Test
    void aTokenWithoutTlsOrAMissingTokenFileIsRefused() throws IOException {
        Path token = Files.writeString(dir.resolve("alice.token"), TOKEN + "\n");
        Path plain = Files.writeString(dir.resolve("plain.properties"), "token.file=" + token + "\n");
        try (ClientOptions options = ClientOptions.of("127.0.0.1:9400", plain)) {
            TidemarkException e = assertThrows(TidemarkException.class, options::token);
            assertEquals(ErrorCode.INVALID_CONFIG, e.code());
            assertEquals("token.file " + token + " is set, but TLS is not: a token is sent only over TLS; set "
                    + "tls.ca.file (or --tls-ca)", e.getMessage());
        }
        Path missing = dir.resolve("missing.token");
        Path file = Files.writeString(dir.resolve("missing.properties"), "tls.ca.file=" + caFile() + "\ntoken.file="
                + missing + "\n");
        try (ClientOptions options = ClientOptions.of("127.0.0.1:9400", file)) {
            TidemarkException e = assertThrows(TidemarkException.class, options::adminConfig);
            assertEquals("token.file " + missing + " is missing; tidemark tokens create --out " + missing
                    + " writes one", e.getMessage());
        }
    }

    @Test
    void aClustersFlagsGoOverItsFileAndAloneTurnTlsOn() throws IOException {
        Path file = Files.writeString(dir.resolve("target.properties"),
                "tls.ca.file=/c/ca.pem\ntls.cert.file=/c/mirror.pem\ntls.key.file=/c/mirror.key\n");
        TlsSettings over = ClientOptions.tlsSettings(file, "--target-command-config", new ClientOptions.TlsFlags(
                "--target-tls", Path.of("/d/ca.pem"), null, null)).orElseThrow();
        assertEquals(List.of(Path.of("/d/ca.pem"), Optional.of(Path.of("/c/mirror.pem"))),
                List.of(over.caFile(), over.certFile()));
        TlsSettings alone = ClientOptions.tlsSettings(null, "--source-command-config", new ClientOptions.TlsFlags(
                "--source-tls", Path.of("/d/ca.pem"), Path.of("/d/m.pem"), Path.of("/d/m.key"))).orElseThrow();
        assertEquals(List.of(Path.of("/d/ca.pem"), Optional.of(Path.of("/d/m.pem")), Optional.of(Path.of("/d/m.key"))),
                List.of(alone.caFile(), alone.certFile(), alone.keyFile()));
        TidemarkException half = assertThrows(TidemarkException.class, () -> ClientOptions.tlsSettings(null,
                "--source-command-config", new ClientOptions.TlsFlags("--source-tls", null, Path.of("/d/m.pem"),
                        null)));
        assertTrue(half.getMessage().contains("the --source-tls-* flags"), half.getMessage());
    }

    @Test
    void theMirrorRefusesATokenItWouldNotSend() throws IOException {
        Path file = Files.writeString(dir.resolve("source.properties"), "tls.ca.file=/c/ca.pem\ntoken.file=/c/t\n");
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> ClientOptions.tlsSettings(file, "--source-command-config", NO_FLAGS));
        assertEquals("--source-command-config " + file + " sets token.file, but the mirror does not send tokens; "
                + "reach that cluster with a client certificate (tls.cert.file, tls.key.file)", e.getMessage());
    }

    @Test
    void withoutAFileTheClientTalksPlainText() {
        assertEquals(Optional.empty(), ClientOptions.tlsSettings(null, "--command-config", NO_FLAGS));
    }

    @Test
    void aFileGivesTheCaAndTheClientsCertificate() throws IOException {
        Path file = Files.writeString(dir.resolve("admin.properties"),
                "tls.ca.file=/c/ca.pem\ntls.cert.file=/c/admin.pem\ntls.key.file=/c/admin.key\n");
        TlsSettings settings = ClientOptions.tlsSettings(file, "--source-command-config", NO_FLAGS).orElseThrow();
        assertEquals(List.of(Path.of("/c/ca.pem"), Optional.of(Path.of("/c/admin.pem")),
                Optional.of(Path.of("/c/admin.key"))), List.of(settings.caFile(), settings.certFile(),
                settings.keyFile()));
    }

    @Test
    void anUnknownKeyOrAMissingFileIsRefusedNamingIt() throws IOException {
        Path file = Files.writeString(dir.resolve("typo.properties"), "tls.ca.file=/c/ca.pem\nssl.truststore=x\n");
        TidemarkException unknown = assertThrows(TidemarkException.class,
                () -> ClientOptions.tlsSettings(file, "--command-config", NO_FLAGS));
        assertEquals(ErrorCode.INVALID_CONFIG, unknown.code());
        assertEquals("unknown key(s) [ssl.truststore] in --command-config " + file + "; known keys: "
                + "[tls.broker.subjects, tls.ca.file, tls.cert.file, tls.client.auth, tls.key.file, tls.protocols, "
                + "tls.reload.interval.ms, token.file]", unknown.getMessage());
        Path missing = dir.resolve("missing.properties");
        TidemarkException unread = assertThrows(TidemarkException.class,
                () -> ClientOptions.tlsSettings(missing, "--target-command-config", NO_FLAGS));
        assertEquals("cannot read --target-command-config " + missing + ": java.nio.file.NoSuchFileException: "
                + missing, unread.getMessage());
    }
}
