package io.tidemark.cli;

import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.grpc.util.CertificateUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code certs create}: the files it writes, what their certificates hold, and what it refuses. */
class CertsCommandTest {
    private static final Instant NOW = Instant.parse("2026-12-01T09:00:00.250Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
    private static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
    private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
    /** keyUsage bits as X509Certificate.getKeyUsage gives them: digitalSignature is bit 0. */
    private static final boolean[] DIGITAL_SIGNATURE = {true, false, false, false, false, false, false, false, false};
    /** keyCertSign (bit 5) and cRLSign (bit 6). */
    private static final boolean[] CERTIFICATE_SIGNING = {false, false, false, false, false, true, true, false, false};

    @TempDir
    Path tmp;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** {@code certs create ARGS} at {@link #NOW}. */
    private int create(String... args) {
        CommandLine commandLine = TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true));
        CommandLine create = new CommandLine(new CertsCommand.Create(CLOCK, new SecureRandom()));
        create.setOut(commandLine.getOut());
        create.setErr(commandLine.getErr());
        create.setExecutionExceptionHandler(commandLine.getExecutionExceptionHandler());
        return create.execute(args);
    }

    /** {@code tidemark ARGS}, as a user runs it. */
    private int tidemark(String... args) {
        return TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
    }

    @Test
    void writesTheCaBrokersAndClientsWithCommandConfigs() throws Exception {
        Path dir = tmp.resolve("certs");
        assertEquals(0, create("--dir", dir.toString(), "--nodes", "2", "--clients", "admin,mirror", "--hosts",
                "broker.example.com,10.0.0.7,localhost"), err.toString());
        assertEquals("wrote  " + dir + "/ca.pem (CA CN=Tidemark throwaway CA, valid until 2036-11-28T09:00:00Z)\n"
                + "wrote  " + dir + "/ca.key\n"
                + "wrote  " + dir + "/broker-1.pem (CN=broker-1 for localhost, broker.example.com, 127.0.0.1, "
                + "10.0.0.7, valid until 2027-12-01T09:00:00Z)\n"
                + "wrote  " + dir + "/broker-1.key\n"
                + "wrote  " + dir + "/broker-2.pem (CN=broker-2 for localhost, broker.example.com, 127.0.0.1, "
                + "10.0.0.7, valid until 2027-12-01T09:00:00Z)\n"
                + "wrote  " + dir + "/broker-2.key\n"
                + "wrote  " + dir + "/admin.pem (CN=admin, valid until 2027-12-01T09:00:00Z)\n"
                + "wrote  " + dir + "/admin.key\n"
                + "wrote  " + dir + "/admin.properties (--command-config for admin)\n"
                + "wrote  " + dir + "/mirror.pem (CN=mirror, valid until 2027-12-01T09:00:00Z)\n"
                + "wrote  " + dir + "/mirror.key\n"
                + "wrote  " + dir + "/mirror.properties (--command-config for mirror)\n", out.toString());
        assertEquals(Set.of("ca.pem", "ca.key", "broker-1.pem", "broker-1.key", "broker-2.pem", "broker-2.key",
                "admin.pem", "admin.key", "admin.properties", "mirror.pem", "mirror.key", "mirror.properties"),
                fileNames(dir));
        assertEquals("tls.ca.file=" + dir + "/ca.pem\ntls.cert.file=" + dir + "/admin.pem\ntls.key.file=" + dir
                + "/admin.key\n", Files.readString(dir.resolve("admin.properties")));
        assertEquals("tls.ca.file=" + dir + "/ca.pem\ntls.cert.file=" + dir + "/mirror.pem\ntls.key.file=" + dir
                + "/mirror.key\n", Files.readString(dir.resolve("mirror.properties")));
    }

    @Test
    void theCertificatesHoldTheirNamesUsagesAndValidity() throws Exception {
        assertEquals(0, create("--dir", tmp.toString(), "--nodes", "2", "--clients", "admin", "--hosts",
                "broker.example.com,10.0.0.7", "--days", "30"), err.toString());
        X509Certificate ca = single(tmp.resolve("ca.pem"));
        ca.verify(ca.getPublicKey());
        assertEquals("CN=Tidemark throwaway CA", ca.getSubjectX500Principal().getName());
        assertEquals(ca.getSubjectX500Principal(), ca.getIssuerX500Principal());
        assertEquals(0, ca.getBasicConstraints(), "CA:true, path length 0");
        assertArrayEquals(CERTIFICATE_SIGNING, ca.getKeyUsage());
        assertEquals(Set.of("2.5.29.19", "2.5.29.15"), ca.getCriticalExtensionOIDs());
        assertValidity(ca, Instant.parse("2026-12-01T09:00:00Z"), Instant.parse("2036-11-28T09:00:00Z"));
        assertEquals("EC", ca.getPublicKey().getAlgorithm());
        assertEquals("SHA256withECDSA", ca.getSigAlgName());

        Set<BigInteger> serials = new HashSet<>(List.of(ca.getSerialNumber()));
        for (String broker : List.of("broker-1", "broker-2")) {
            X509Certificate leaf = assertLeaf(tmp.resolve(broker + ".pem"), ca, broker);
            assertEquals(List.of(SERVER_AUTH, CLIENT_AUTH), leaf.getExtendedKeyUsage());
            assertEquals(List.of(List.of(2, "localhost"), List.of(2, "broker.example.com"), List.of(7, "127.0.0.1"),
                    List.of(7, "10.0.0.7")), List.copyOf(leaf.getSubjectAlternativeNames()));
            assertTrue(serials.add(leaf.getSerialNumber()));
        }
        X509Certificate admin = assertLeaf(tmp.resolve("admin.pem"), ca, "admin");
        assertEquals(List.of(CLIENT_AUTH), admin.getExtendedKeyUsage());
        assertNull(admin.getSubjectAlternativeNames());
        assertTrue(serials.add(admin.getSerialNumber()));
    }

    /** A leaf in a chain file: the leaf, then the CA; signed by the CA, for {@code name}, 30 days from NOW. */
    private static X509Certificate assertLeaf(Path chainFile, X509Certificate ca, String name) throws Exception {
        List<X509Certificate> chain = ThrowawayCertificateAuthority.readCertificates(chainFile);
        assertEquals(2, chain.size());
        assertEquals(ca, chain.get(1));
        X509Certificate leaf = chain.get(0);
        leaf.verify(ca.getPublicKey());
        assertEquals("CN=" + name, leaf.getSubjectX500Principal().getName());
        assertEquals(ca.getSubjectX500Principal(), leaf.getIssuerX500Principal());
        assertEquals(-1, leaf.getBasicConstraints(), "CA:false");
        assertArrayEquals(DIGITAL_SIGNATURE, leaf.getKeyUsage());
        assertEquals(Set.of("2.5.29.19", "2.5.29.15"), leaf.getCriticalExtensionOIDs());
        assertValidity(leaf, Instant.parse("2026-12-01T09:00:00Z"), Instant.parse("2026-12-31T09:00:00Z"));
        assertEquals(1, leaf.getSerialNumber().signum());
        assertEquals(128, leaf.getSerialNumber().bitLength());
        assertEquals("EC", leaf.getPublicKey().getAlgorithm());
        return leaf;
    }

    private static void assertValidity(X509Certificate certificate, Instant notBefore, Instant notAfter) {
        assertEquals(Date.from(notBefore), certificate.getNotBefore());
        assertEquals(Date.from(notAfter), certificate.getNotAfter());
    }

    @Test
    void everyFileLoadsWithGrpcUtil() throws Exception {
        assertEquals(0, create("--dir", tmp.toString(), "--nodes", "1", "--clients", "admin"), err.toString());
        X509Certificate ca = single(tmp.resolve("ca.pem"));
        AdvancedTlsX509TrustManager trust = AdvancedTlsX509TrustManager.newBuilder().build();
        trust.updateTrustCredentials(tmp.resolve("ca.pem").toFile());
        assertArrayEquals(new X509Certificate[]{ca}, trust.getAcceptedIssuers());
        for (String name : List.of("ca", "broker-1", "admin")) {
            try (InputStream in = Files.newInputStream(tmp.resolve(name + ".pem"))) {
                X509Certificate[] chain = CertificateUtils.getX509Certificates(in);
                assertEquals(name.equals("ca") ? 1 : 2, chain.length, name);
                assertEquals(ca, chain[chain.length - 1]);
            }
            PrivateKey key;
            try (InputStream in = Files.newInputStream(tmp.resolve(name + ".key"))) {
                key = CertificateUtils.getPrivateKey(in);
            }
            assertEquals("EC", key.getAlgorithm());
            assertEquals("PKCS#8", key.getFormat());
            AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
            keys.updateIdentityCredentials(tmp.resolve(name + ".pem").toFile(), tmp.resolve(name + ".key").toFile());
            String alias = keys.chooseServerAlias("EC", null, null);
            assertEquals(key, keys.getPrivateKey(alias));
            assertEquals(name.equals("ca") ? List.of(ca) : ThrowawayCertificateAuthority.readCertificates(
                    tmp.resolve(name + ".pem")), List.of(keys.getCertificateChain(alias)));
        }
    }

    @Test
    void keysAreReadableByTheirOwnerOnly() throws Exception {
        assumeTrue(tmp.getFileSystem().supportedFileAttributeViews().contains("posix"));
        assertEquals(0, create("--dir", tmp.toString(), "--nodes", "1", "--clients", "admin"), err.toString());
        for (String key : List.of("ca.key", "broker-1.key", "admin.key")) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(tmp.resolve(key))),
                    key);
        }
    }

    @Test
    void aSecondRunKeepsWhatExistsAndAddsWhatIsMissing() throws Exception {
        assertEquals(0, create("--dir", tmp.toString(), "--nodes", "1", "--clients", "admin"), err.toString());
        Map<String, byte[]> before = contents(tmp);
        out.getBuffer().setLength(0);
        assertEquals(0, create("--dir", tmp.toString(), "--nodes", "2", "--clients", "admin,ops"), err.toString());
        assertEquals("exists " + tmp + "/ca.pem (left alone; CN=Tidemark throwaway CA issues the certificates below)\n"
                + "exists " + tmp + "/ca.key (left alone)\n"
                + "exists " + tmp + "/broker-1.pem (left alone)\n"
                + "exists " + tmp + "/broker-1.key (left alone)\n"
                + "wrote  " + tmp + "/broker-2.pem (CN=broker-2 for localhost, 127.0.0.1, valid until "
                + "2027-12-01T09:00:00Z)\n"
                + "wrote  " + tmp + "/broker-2.key\n"
                + "exists " + tmp + "/admin.pem (left alone)\n"
                + "exists " + tmp + "/admin.key (left alone)\n"
                + "exists " + tmp + "/admin.properties (left alone)\n"
                + "wrote  " + tmp + "/ops.pem (CN=ops, valid until 2027-12-01T09:00:00Z)\n"
                + "wrote  " + tmp + "/ops.key\n"
                + "wrote  " + tmp + "/ops.properties (--command-config for ops)\n", out.toString());
        Map<String, byte[]> after = contents(tmp);
        before.forEach((name, bytes) -> assertArrayEquals(bytes, after.get(name), name));
        assertEquals(Set.of("broker-2.pem", "broker-2.key", "ops.pem", "ops.key", "ops.properties"),
                difference(after.keySet(), before.keySet()));
        X509Certificate ca = single(tmp.resolve("ca.pem"));
        single(tmp.resolve("ops.pem")).verify(ca.getPublicKey());
        ThrowawayCertificateAuthority.readCertificates(tmp.resolve("broker-2.pem")).get(0).verify(ca.getPublicKey());
    }

    @Test
    void aCertificateFromAnotherCaIsKeptAndNamed() throws Exception {
        assertEquals(0, create("--dir", tmp.toString(), "--nodes", "1", "--clients", "admin"), err.toString());
        Files.delete(tmp.resolve("ca.pem"));
        Files.delete(tmp.resolve("ca.key"));
        out.getBuffer().setLength(0);
        assertEquals(0, create("--dir", tmp.toString(), "--nodes", "1", "--clients", "admin"), err.toString());
        String[] lines = out.toString().split("\n");
        assertEquals("exists " + tmp + "/broker-1.pem (left alone; NOT issued by ca.pem: delete it and broker-1.key "
                + "to issue a new one)", lines[2]);
        assertEquals("exists " + tmp + "/admin.pem (left alone; NOT issued by ca.pem: delete it and admin.key to "
                + "issue a new one)", lines[4]);
    }

    @Test
    void aCertificateWithoutItsKeyIsRefused() throws Exception {
        assertEquals(0, create("--dir", tmp.toString(), "--nodes", "1", "--clients", "admin"), err.toString());
        Files.delete(tmp.resolve("admin.key"));
        assertEquals(1, create("--dir", tmp.toString(), "--nodes", "1", "--clients", "admin"));
        assertEquals("error: " + tmp + "/admin.pem exists without " + tmp + "/admin.key: restore admin.key, or "
                + "delete admin.pem to make a new pair\n", err.toString());
        err.getBuffer().setLength(0);
        Files.delete(tmp.resolve("ca.pem"));
        assertEquals(1, create("--dir", tmp.toString(), "--nodes", "1", "--clients", "admin"));
        assertEquals("error: " + tmp + "/ca.key exists without " + tmp + "/ca.pem: restore ca.pem, or delete ca.key "
                + "to make a new pair\n", err.toString());
    }

    @Test
    void refusesBadNamesCountsAndHostsBeforeWritingAnything() {
        Path dir = tmp.resolve("certs");
        String names = "is not allowed: 1 to 64 characters from a-z A-Z 0-9 . _ -, other than ca and broker-<n> "
                + "(the CA's and the brokers' files)";
        Map<List<String>, String> refusals = new LinkedHashMap<>();
        refusals.put(List.of("--nodes", "0", "--clients", "admin"), "--nodes 0 is not allowed: 1 to 100");
        refusals.put(List.of("--nodes", "101", "--clients", "admin"), "--nodes 101 is not allowed: 1 to 100");
        refusals.put(List.of("--nodes", "1", "--clients", "admin", "--days", "0"),
                "--days 0 is not allowed: 1 to 3650");
        refusals.put(List.of("--nodes", "1", "--clients", "admin", "--days", "3651"),
                "--days 3651 is not allowed: 1 to 3650");
        refusals.put(List.of("--nodes", "1", "--clients", "admin,ca"), "client name 'ca' " + names);
        refusals.put(List.of("--nodes", "1", "--clients", "broker-7"), "client name 'broker-7' " + names);
        refusals.put(List.of("--nodes", "1", "--clients", "my client"), "client name 'my client' " + names);
        refusals.put(List.of("--nodes", "1", "--clients", "../up"), "client name '../up' " + names);
        refusals.put(List.of("--nodes", "1", "--clients", "a".repeat(65)), "client name '" + "a".repeat(65) + "' "
                + names);
        refusals.put(List.of("--nodes", "1", "--clients", "admin,ops,admin"), "--clients names 'admin' twice");
        refusals.put(List.of("--nodes", "1", "--clients", "admin", "--hosts", "b1.example:9400"),
                "host 'b1.example:9400' is neither an IP address nor a DNS name: give an IPv4 or IPv6 literal, or "
                        + "dot-separated labels of a-z A-Z 0-9 and - (the first may be *), 253 characters at most");
        refusals.forEach((args, message) -> {
            err.getBuffer().setLength(0);
            List<String> command = new ArrayList<>(List.of("certs", "create", "--dir", dir.toString()));
            command.addAll(args);
            assertEquals(1, tidemark(command.toArray(String[]::new)), args.toString());
            assertEquals("error: " + message + "\n", err.toString(), args.toString());
        });
        assertFalse(Files.exists(dir));
        assertEquals("", out.toString());
    }

    @Test
    void clientNamesMayUseTheWholeAlphabet() throws Exception {
        String name = "Ops_1.mirror-" + "x".repeat(51);
        assertEquals(0, create("--dir", tmp.toString(), "--nodes", "1", "--clients", name), err.toString());
        assertEquals("CN=" + name, single(tmp.resolve(name + ".pem")).getSubjectX500Principal().getName());
    }

    @Test
    void helpSaysTheCaIsForTryingTlsOut() {
        assertEquals(0, tidemark("certs", "create", "--help"));
        String help = out.toString().replace("\n", " ").replaceAll(" +", " ");
        assertTrue(help.contains("Make a throwaway CA for trying TLS out"), help);
        assertTrue(help.contains("Production uses the organisation's CA instead, with certificates in the same "
                + "layout: a chain PEM (the certificate, then its CA's), an unencrypted PKCS#8 key PEM (-----BEGIN "
                + "PRIVATE KEY-----) and a CA bundle PEM."), help);
    }

    /** The first certificate of a PEM file. */
    private static X509Certificate single(Path file) throws Exception {
        return ThrowawayCertificateAuthority.readCertificates(file).get(0);
    }

    private static Set<String> fileNames(Path dir) throws Exception {
        return contents(dir).keySet();
    }

    private static Map<String, byte[]> contents(Path dir) throws Exception {
        Map<String, byte[]> contents = new LinkedHashMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.toList()) {
                contents.put(file.getFileName().toString(), Files.readAllBytes(file));
            }
        }
        return contents;
    }

    private static Set<String> difference(Set<String> all, Set<String> removed) {
        Set<String> left = new HashSet<>(all);
        left.removeAll(removed);
        return left;
    }
}
