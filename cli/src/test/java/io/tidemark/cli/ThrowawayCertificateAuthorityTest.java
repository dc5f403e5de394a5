package io.tidemark.cli;

import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.grpc.util.AdvancedTlsX509TrustManager.Verification;
import io.tidemark.cli.ThrowawayCertificateAuthority.AltNames;
import io.tidemark.cli.ThrowawayCertificateAuthority.Issued;
import io.tidemark.cli.ThrowawayCertificateAuthority.Usage;
import io.tidemark.cli.ThrowawayCertificateAuthority.Validity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.security.auth.x500.X500Principal;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.CertificateExpiredException;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java API: the certificates TLS must accept and those it must refuse (expired, from another CA, for another
 * host), checked by mutual-TLS handshakes on 127.0.0.1 with grpc-util's key and trust managers over the written files.
 */
class ThrowawayCertificateAuthorityTest {
    /** Longest any side of a handshake waits. */
    private static final int TIMEOUT_MS = 10_000;
    private static final SecureRandom RANDOM = new SecureRandom();
    /** The JDK's TLS checks validity against the system clock, so the certificates here are dated from it. */
    private static final Instant NOW = Instant.now();
    private static final Validity CURRENT = Validity.from(NOW.minus(Duration.ofHours(1)), Duration.ofDays(2));
    private static final Validity EXPIRED = new Validity(NOW.minus(Duration.ofDays(2)), NOW.minus(Duration.ofDays(1)));
    private static final AltNames LOCAL = AltNames.of(List.of("localhost", "127.0.0.1"));

    @TempDir
    Path dir;

    private final ThrowawayCertificateAuthority ca = newCa("CN=Test CA");

    private static ThrowawayCertificateAuthority newCa(String name) {
        return ThrowawayCertificateAuthority.create(new X500Principal(name),
                Validity.from(NOW.minus(Duration.ofDays(10)), Duration.ofDays(30)), RANDOM);
    }

    @Test
    void aClientOfTheCaIsSeenByItsCommonName() throws Exception {
        SSLContext broker = context(ca, ca.issue(new X500Principal("CN=broker-1,O=Tidemark"), Usage.BROKER, LOCAL,
                CURRENT), "broker-1");
        SSLContext client = context(ca, ca.issue(new X500Principal("CN=admin"), Usage.CLIENT, AltNames.NONE,
                CURRENT), "admin");
        Handshake handshake = handshake(broker, client);
        assertNull(handshake.clientFailure());
        assertEquals("CN=admin", handshake.clientSeenByServer());
        assertEquals("CN=broker-1,O=Tidemark", handshake.serverSeenByClient());
    }

    @Test
    void brokersAreClientsOfEachOther() throws Exception {
        SSLContext broker1 = context(ca, ca.issue(new X500Principal("CN=broker-1"), Usage.BROKER, LOCAL, CURRENT),
                "broker-1");
        SSLContext broker2 = context(ca, ca.issue(new X500Principal("CN=broker-2"), Usage.BROKER, LOCAL, CURRENT),
                "broker-2");
        assertEquals("CN=broker-2", handshake(broker1, broker2).clientSeenByServer());
    }

    @Test
    void aClientFromAnotherCaIsRefused() throws Exception {
        ThrowawayCertificateAuthority other = newCa("CN=Other CA");
        SSLContext broker = context(ca, ca.issue(new X500Principal("CN=broker-1"), Usage.BROKER, LOCAL, CURRENT),
                "broker-1");
        SSLContext stranger = context(ca, other.issue(new X500Principal("CN=admin"), Usage.CLIENT, AltNames.NONE,
                CURRENT), "stranger");
        Handshake handshake = handshake(broker, stranger);
        assertEquals("PKIX path building failed: sun.security.provider.certpath.SunCertPathBuilderException: unable "
                + "to find valid certification path to requested target", refusal(handshake.serverFailure()));
        assertNull(handshake.clientSeenByServer());
        assertFalse(ca.signed(other.issue(new X500Principal("CN=x"), Usage.CLIENT, AltNames.NONE, CURRENT)
                .certificate()));
    }

    @Test
    void anExpiredBrokerIsRefused() throws Exception {
        Issued expired = ca.issue(new X500Principal("CN=broker-1"), Usage.BROKER, LOCAL, EXPIRED);
        assertTrue(expired.certificate().getNotAfter().toInstant().isBefore(NOW));
        assertEquals(EXPIRED.notAfter(), expired.certificate().getNotAfter().toInstant());
        assertThrows(CertificateExpiredException.class, () -> expired.certificate().checkValidity(Date.from(NOW)));
        SSLContext client = context(ca, ca.issue(new X500Principal("CN=admin"), Usage.CLIENT, AltNames.NONE,
                CURRENT), "admin");
        Exception refused = handshake(context(ca, expired, "broker-1"), client).clientFailure();
        assertEquals("PKIX path validation failed: java.security.cert.CertPathValidatorException: validity check "
                + "failed", refusal(refused));
        assertEquals("NotAfter: " + Date.from(EXPIRED.notAfter()), rootCause(refused).getMessage());
    }

    @Test
    void aBrokerForAnotherHostIsRefused() throws Exception {
        Issued elsewhere = ca.issue(new X500Principal("CN=broker-1"), Usage.BROKER,
                AltNames.of(List.of("elsewhere.example", "10.9.9.9")), CURRENT);
        SSLContext client = context(ca, ca.issue(new X500Principal("CN=admin"), Usage.CLIENT, AltNames.NONE,
                CURRENT), "admin");
        assertEquals("No subject alternative names matching IP address 127.0.0.1 found",
                refusal(handshake(context(ca, elsewhere, "broker-1"), client).clientFailure()));
    }

    @Test
    void aClientCertificateCannotServe() throws Exception {
        SSLContext notABroker = context(ca, ca.issue(new X500Principal("CN=admin"), Usage.CLIENT, LOCAL, CURRENT),
                "admin");
        SSLContext client = context(ca, ca.issue(new X500Principal("CN=ops"), Usage.CLIENT, AltNames.NONE, CURRENT),
                "ops");
        assertEquals("Extended key usage does not permit use for TLS server authentication",
                refusal(handshake(notABroker, client).clientFailure()));
    }

    @Test
    void aWrittenCaLoadsAndIssuesAgain() throws Exception {
        ca.write(dir);
        ThrowawayCertificateAuthority loaded = ThrowawayCertificateAuthority.load(dir, RANDOM);
        assertEquals(ca.certificate(), loaded.certificate());
        assertTrue(ca.signed(loaded.issue(new X500Principal("CN=admin"), Usage.CLIENT, AltNames.NONE, CURRENT)
                .certificate()));
    }

    @Test
    void loadRefusesAKeyOfAnotherCertificate() throws Exception {
        ca.write(dir);
        Path otherDir = Files.createDirectory(dir.resolve("other"));
        newCa("CN=Other CA").write(otherDir);
        Files.delete(dir.resolve("ca.key"));
        Files.copy(otherDir.resolve("ca.key"), dir.resolve("ca.key"));
        assertEquals(dir.resolve("ca.key") + " is not the key of the certificate in " + dir.resolve("ca.pem"),
                assertThrows(IllegalArgumentException.class, () -> ThrowawayCertificateAuthority.load(dir, RANDOM))
                        .getMessage());
    }

    @Test
    void loadRefusesALeafAsCa() throws Exception {
        ca.issue(new X500Principal("CN=broker-1"), Usage.BROKER, LOCAL, CURRENT).write(dir.resolve("chain.pem"),
                dir.resolve("ca.key"));
        Files.write(dir.resolve("ca.pem"), List.of(Files.readString(dir.resolve("chain.pem"))
                .split("(?<=-----END CERTIFICATE-----\n)")[0]));
        assertEquals(dir.resolve("ca.pem") + " is not a CA certificate: CN=broker-1 has no basicConstraints CA:true",
                assertThrows(IllegalArgumentException.class, () -> ThrowawayCertificateAuthority.load(dir, RANDOM))
                        .getMessage());
    }

    @Test
    void loadRefusesAKeyThatIsNotPkcs8() throws Exception {
        ca.write(dir);
        Files.delete(dir.resolve("ca.key"));
        Files.writeString(dir.resolve("ca.key"),
                "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ThrowawayCertificateAuthority.load(dir,
                RANDOM)).getMessage().startsWith(dir.resolve("ca.key") + " is not an unencrypted PKCS#8 private key "
                + "(-----BEGIN PRIVATE KEY-----)"));
    }

    @Test
    void aCertificateCannotOutliveItsCa() {
        Validity tooLong = Validity.from(NOW, Duration.ofDays(365));
        assertEquals("a certificate valid until " + tooLong.notAfter() + " would outlive its CA, CN=Test CA, valid "
                + "until " + ca.certificate().getNotAfter().toInstant() + ": issue it for a shorter time or from a "
                + "newer CA", assertThrows(IllegalArgumentException.class, () -> ca.issue(new X500Principal("CN=x"),
                Usage.CLIENT, AltNames.NONE, tooLong)).getMessage());
    }

    @Test
    void validityIsInWholeSecondsAndEndsAfterItStarts() {
        Validity validity = Validity.from(Instant.parse("2026-12-01T09:00:00.999Z"), Duration.ofMinutes(1));
        assertEquals(new Validity(Instant.parse("2026-12-01T09:00:00Z"), Instant.parse("2026-12-01T09:01:00Z")),
                validity);
        assertEquals("a validity must end after it starts: 2026-12-01T09:00:00Z to 2026-12-01T09:00:00Z",
                assertThrows(IllegalArgumentException.class, () -> new Validity(
                        Instant.parse("2026-12-01T09:00:00Z"), Instant.parse("2026-12-01T09:00:00.500Z")))
                        .getMessage());
    }

    @Test
    void hostsSplitIntoDnsNamesAndIpAddresses() {
        assertEquals(new AltNames(List.of("localhost", "*.brokers.example"), List.of("127.0.0.1", "::1")),
                AltNames.of(List.of("localhost", "127.0.0.1", "*.brokers.example", "::1", "localhost")));
        for (String bad : List.of("", "-a.example", "a..example", "a_b.example", "[::1]", "a".repeat(64))) {
            assertThrows(IllegalArgumentException.class, () -> AltNames.of(List.of(bad)), bad);
        }
    }

    /** The message of a handshake refused by this side's trust manager. */
    private static String refusal(Exception failure) {
        return assertInstanceOf(SSLHandshakeException.class, failure).getMessage();
    }

    private static Throwable rootCause(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /** What each side of a handshake saw: the peer's subject, or its failure. */
    private record Handshake(String clientSeenByServer, Exception serverFailure, String serverSeenByClient,
                             Exception clientFailure) {
    }

    /**
     * A mutual-TLS handshake on 127.0.0.1: the server needs a client certificate, the client checks the server's
     * host name. The server writes one byte after its handshake, which the client reads, so a client refused only
     * after its own handshake completed (TLS 1.3) sees the failure too.
     */
    private static Handshake handshake(SSLContext serverContext, SSLContext clientContext) throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        try (SSLServerSocket listener = (SSLServerSocket) serverContext.getServerSocketFactory().createServerSocket(
                0, 1, loopback)) {
            listener.setNeedClientAuth(true);
            listener.setSoTimeout(TIMEOUT_MS);
            Future<String> server = executor.submit(() -> {
                try (SSLSocket socket = (SSLSocket) listener.accept()) {
                    socket.setSoTimeout(TIMEOUT_MS);
                    socket.startHandshake();
                    socket.getOutputStream().write(1);
                    socket.getOutputStream().flush();
                    return socket.getSession().getPeerPrincipal().getName();
                }
            });
            String serverSeenByClient = null;
            Exception clientFailure = null;
            try (SSLSocket socket = (SSLSocket) clientContext.getSocketFactory().createSocket("127.0.0.1",
                    listener.getLocalPort())) {
                socket.setSoTimeout(TIMEOUT_MS);
                socket.startHandshake();
                serverSeenByClient = socket.getSession().getPeerPrincipal().getName();
                assertEquals(1, socket.getInputStream().read());
            } catch (IOException e) {
                clientFailure = e;
            }
            try {
                return new Handshake(server.get(TIMEOUT_MS, TimeUnit.MILLISECONDS), null, serverSeenByClient,
                        clientFailure);
            } catch (ExecutionException e) {
                return new Handshake(null, (Exception) e.getCause(), serverSeenByClient, clientFailure);
            }
        } finally {
            executor.shutdownNow();
            assertTrue(executor.awaitTermination(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        }
    }

    /**
     * A TLS context as a broker or client builds it: grpc-util's managers over {@code issued}'s files and {@code
     * trusted}'s certificate file, checking certificates and the server's host name.
     */
    private SSLContext context(ThrowawayCertificateAuthority trusted, Issued issued, String name) throws Exception {
        Path own = Files.createDirectories(dir.resolve(name));
        issued.write(own.resolve(name + ".pem"), own.resolve(name + ".key"));
        trusted.write(own);
        AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
        keys.updateIdentityCredentials(own.resolve(name + ".pem").toFile(), own.resolve(name + ".key").toFile());
        AdvancedTlsX509TrustManager trust = AdvancedTlsX509TrustManager.newBuilder()
                .setVerification(Verification.CERTIFICATE_AND_HOST_NAME_VERIFICATION).build();
        trust.updateTrustCredentials(own.resolve(ThrowawayCertificateAuthority.CERTIFICATE_FILE).toFile());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(new KeyManager[]{keys}, new TrustManager[]{trust}, RANDOM);
        return context;
    }
}
