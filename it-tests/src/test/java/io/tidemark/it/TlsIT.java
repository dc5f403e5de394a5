package io.tidemark.it;

import io.grpc.ManagedChannel;
import io.tidemark.cli.ThrowawayCertificateAuthority;
import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.core.auth.TokenKeyFormat;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.tls.TlsMaterial;
import io.tidemark.proto.tls.TlsSettings;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclPatternType;
import io.tidemark.proto.v1.AclPermission;
import io.tidemark.proto.v1.AclResourceType;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.FetchResponse;
import io.tidemark.proto.v1.GetMetadataSnapshotRequest;
import io.tidemark.proto.v1.ReplicaServiceGrpc;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.security.auth.x500.X500Principal;
import java.io.EOFException;
import java.io.IOException;
import java.math.BigInteger;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPrivateKey;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TLS on a cluster of three broker processes made by {@code tidemark local up --tls} (certificates from a throwaway
 * CA it makes): a client with a certificate from the cluster's CA produces and consumes; every other client is
 * refused at once with AUTHENTICATION_FAILED saying why (plain text, no certificate, a certificate from another CA, an
 * expired one, a broker certificate not for the host dialled); the Raft port takes no party without a certificate;
 * the metrics endpoint speaks HTTPS; a broker takes a rotated certificate without a restart; a mirror copies between
 * two TLS clusters.
 */
class TlsIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final SecureRandom RANDOM = new SecureRandom();

    @TempDir
    static Path dir;
    private static int basePort;
    private static Path certs;
    private static TlsMaterial admin;

    @BeforeAll
    static void up() throws Exception {
        basePort = FreePorts.freeBasePort();
        Path config = Files.writeString(dir.resolve("reload.properties"), "tls.reload.interval.ms=1000\n");
        Tidemark.Result up = Tidemark.run(dir, "local", "up", "--tls", "--data-dir", dir.toString(), "--base-port",
                Integer.toString(basePort), "--config", config.toString());
        assertEquals(0, up.exitCode(), up.out() + up.err());
        certs = dir.resolve("default/certs");
        assertTrue(up.out().contains("is up, TLS only. Bootstrap: " + bootstrap()), up.out());
        assertTrue(up.out().contains("Clients: --command-config " + certs.resolve("admin.properties")), up.out());
        admin = TlsMaterial.load(TlsSettings.fromProperties(BrokerConfig.readFile(certs.resolve("admin.properties")),
                "admin.properties").orElseThrow());
    }

    @AfterAll
    static void down() throws Exception {
        Tidemark.run(dir, "local", "down", "--data-dir", dir.toString());
        if (admin != null) {
            admin.close();
        }
    }

    private static String bootstrap() {
        return "127.0.0.1:" + basePort + ",127.0.0.1:" + (basePort + 10) + ",127.0.0.1:" + (basePort + 20);
    }

    @Test
    void aClientWithACertificateOfTheClustersCaProducesAndConsumes() {
        try (TidemarkAdmin tidemark = new TidemarkAdmin(AdminConfig.builder(bootstrap()).tls(admin).build())) {
            tidemark.createTopic("secure", 1, 3, Map.of());
        }
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).tls(admin)
                .build())) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord("secure", 0, null, ("secret-" + i).getBytes(StandardCharsets.UTF_8)))
                        .join();
            }
        }
        List<String> read = new ArrayList<>();
        try (TidemarkConsumer consumer = new TidemarkConsumer(ConsumerConfig.builder(bootstrap()).tls(admin)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).build())) {
            consumer.assign(List.of(new TopicPartition("secure", 0)));
            await().atMost(WAIT).until(() -> {
                for (ConsumerRecord record : consumer.poll(Duration.ofMillis(200))) {
                    read.add(new String(record.value(), StandardCharsets.UTF_8));
                }
                return read.size() >= 3;
            });
        }
        assertEquals(List.of("secret-0", "secret-1", "secret-2"), read);
    }

    @Test
    void everyClientWithoutARightCertificateIsRefusedAtOnceSayingWhy() throws Exception {
        Instant now = Instant.now();
        ThrowawayCertificateAuthority clusterCa = ThrowawayCertificateAuthority.load(certs, RANDOM);
        ThrowawayCertificateAuthority otherCa = ThrowawayCertificateAuthority.create(new X500Principal(
                "CN=another CA"), ThrowawayCertificateAuthority.Validity.from(now.minusSeconds(60),
                Duration.ofDays(2)), RANDOM);
        Path otherCaFile = dir.resolve("other-ca.pem");
        Files.writeString(otherCaFile, pem(otherCa));
        Path stranger = client(otherCa, "stranger", ThrowawayCertificateAuthority.Validity.from(now.minusSeconds(60),
                Duration.ofDays(1)));
        Path expired = client(clusterCa, "expired", ThrowawayCertificateAuthority.Validity.from(
                now.minus(Duration.ofDays(3)), Duration.ofDays(1)));
        Path ca = certs.resolve("ca.pem");

        assertRefused(Optional.empty(), "this broker takes only TLS connections");
        assertRefused(Optional.of(TlsSettings.client(ca, Optional.empty(), Optional.empty())),
                "CERTIFICATE_REQUIRED");
        assertRefused(Optional.of(TlsSettings.client(ca, Optional.of(stranger.resolve("cert.pem")),
                Optional.of(stranger.resolve("key.pem")))), "UNKNOWN_CA");
        assertRefused(Optional.of(TlsSettings.client(ca, Optional.of(expired.resolve("cert.pem")),
                Optional.of(expired.resolve("key.pem")))), "CERTIFICATE_EXPIRED");
        assertRefused(Optional.of(TlsSettings.client(otherCaFile, Optional.of(certs.resolve("admin.pem")),
                Optional.of(certs.resolve("admin.key")))), "unable to find valid certification path");
    }

    @Test
    void aBrokerCertificateNotForTheHostDialledIsRefused() throws Exception {
        ThrowawayCertificateAuthority clusterCa = ThrowawayCertificateAuthority.load(certs, RANDOM);
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        clusterCa.issue(new X500Principal("CN=broker-elsewhere"), ThrowawayCertificateAuthority.Usage.BROKER,
                ThrowawayCertificateAuthority.AltNames.of(List.of("broker.example")),
                ThrowawayCertificateAuthority.Validity.from(Instant.now().minusSeconds(60), Duration.ofDays(1)))
                .write(elsewhere.resolve("broker.pem"), elsewhere.resolve("broker.key"));
        Path config = Files.writeString(elsewhere.resolve("broker.properties"), "tls.ca.file=" + certs.resolve("ca.pem")
                + "\ntls.cert.file=" + elsewhere.resolve("broker.pem") + "\ntls.key.file=" + elsewhere.resolve(
                "broker.key") + "\n");
        try (BrokerProcess broker = BrokerProcess.start(elsewhere.resolve("data"), elsewhere, "--config",
                config.toString())) {
            TidemarkException refused = assertThrows(TidemarkException.class, () -> listTopics(broker.bootstrap(),
                    Optional.of(admin)));
            assertEquals(ErrorCode.AUTHENTICATION_FAILED, refused.code(), refused.getMessage());
            assertTrue(refused.getMessage().contains("No subject alternative names matching IP address 127.0.0.1"),
                    refused.getMessage());
        }
    }

    /**
     * A broker started in plain text as node 3 of the TLS cluster (its own ports and data) is refused by nodes 1 and 2
     * (their Raft servers and client endpoints speak TLS only), and says so: an error naming each node and what to
     * do, rather than only Ratis' failed votes at INFO.
     */
    @Test
    void aPlainTextBrokerIsRefusedByTheTlsClusterAndSaysWhy() throws Exception {
        int port = FreePorts.freeBasePort();
        Path log = dir.resolve("plain-broker.log");
        Process plain = new ProcessBuilder(Tidemark.command("broker", "--node-id", "3", "--data-dir",
                dir.resolve("plain-broker").toString(), "--listen", "127.0.0.1:" + port, "--cluster",
                "1=127.0.0.1:" + basePort + ":" + (basePort + 5) + ",2=127.0.0.1:" + (basePort + 10) + ":"
                        + (basePort + 15) + ",3=127.0.0.1:" + port + ":" + (port + 5)))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            for (int node = 1; node <= 2; node++) {
                String refused = "Node " + node + " at 127.0.0.1:" + (basePort + 10 * (node - 1)) + " refused this "
                        + "broker's connection, so this broker cannot work with it: the brokers of a cluster must all "
                        + "run TLS with certificates of one CA (this broker runs in plain text: give it the cluster's "
                        + "tls.* keys), or all plain text. TLS could not be set up";
                await().atMost(WAIT).until(() -> Files.readString(log).contains(refused));
            }
            assertTrue(plain.isAlive(), "it keeps trying, as a broker whose peers are down does");
        } finally {
            plain.destroyForcibly().waitFor();
        }
    }

    /**
     * The Raft port takes brokers only: a party without a certificate, and a client with one from the cluster's CA
     * (CN=admin, not a broker's subject), fail their handshake or first read; a broker's certificate gets through.
     */
    @Test
    void theRaftPortTakesBrokersOnly() throws Exception {
        Optional<IOException> none = raftHandshake(null);
        Optional<IOException> client = raftHandshake(admin.keyManager());
        assertTrue(none.isPresent() && client.isPresent() && client.get() instanceof SSLException,
                "refused: no certificate (" + none + ") and a client's certificate, CN=admin (" + client + ")");
        try (TlsMaterial broker = TlsMaterial.load(TlsSettings.client(certs.resolve("ca.pem"),
                Optional.of(certs.resolve("broker-1.pem")), Optional.of(certs.resolve("broker-1.key"))))) {
            assertEquals(Optional.empty(), raftHandshake(broker.keyManager()), "a broker's certificate");
        }
    }

    /**
     * A TLS connection to node 1's Raft port showing {@code key}'s certificate (none when null), speaking HTTP/2 as a
     * gRPC peer does (ALPN h2, its preface) and reading: empty when the port took it (an answer, or none within 3 s), else why it was refused (a TLS alert, the
     * connection cut or closed).
     */
    private static Optional<IOException> raftHandshake(KeyManager key) throws GeneralSecurityException {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(key == null ? null : new KeyManager[] {key}, new TrustManager[] {admin.trustManager()}, null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", basePort + 5)) {
            socket.setSoTimeout(3_000);
            SSLParameters http2 = socket.getSSLParameters();
            http2.setApplicationProtocols(new String[] {"h2"});
            socket.setSSLParameters(http2);
            socket.startHandshake();
            socket.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return socket.getInputStream().read() < 0 ? Optional.of(new EOFException("closed without a word"))
                    : Optional.empty();
        } catch (SocketTimeoutException e) {
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of(e);
        }
    }

    @Test
    void theMetricsEndpointSpeaksHttpsToClientsWithCertificates() throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(new KeyManager[] {admin.keyManager()}, new TrustManager[] {admin.trustManager()}, null);
        HttpClient https = HttpClient.newBuilder().sslContext(context).connectTimeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> metrics = https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:"
                + (basePort + 1) + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metrics.statusCode(), metrics.body());
        assertTrue(metrics.body().contains("produce_backlog_bytes"), metrics.body().lines().limit(5).toList()
                .toString());
        HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        assertThrows(IOException.class, () -> plain.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + (basePort + 1) + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()));
    }

    /**
     * A broker's certificate replaced on disk is what its next handshake shows, without a restart (its config reads
     * the files again every second here).
     */
    @Test
    void aBrokerTakesARotatedCertificateWithoutARestart() throws Exception {
        BigInteger before = servedSerial(basePort + 20);
        ThrowawayCertificateAuthority clusterCa = ThrowawayCertificateAuthority.load(certs, RANDOM);
        Path staged = Files.createDirectories(dir.resolve("rotated"));
        ThrowawayCertificateAuthority.Issued rotated = clusterCa.issue(new X500Principal("CN=broker-3"),
                ThrowawayCertificateAuthority.Usage.BROKER, ThrowawayCertificateAuthority.AltNames.of(List.of(
                        "localhost", "127.0.0.1")), ThrowawayCertificateAuthority.Validity.from(
                        Instant.now().minusSeconds(60), Duration.ofDays(30)));
        rotated.write(staged.resolve("broker-3.pem"), staged.resolve("broker-3.key"));
        Files.move(staged.resolve("broker-3.key"), certs.resolve("broker-3.key"), StandardCopyOption.REPLACE_EXISTING,
                StandardCopyOption.ATOMIC_MOVE);
        Files.move(staged.resolve("broker-3.pem"), certs.resolve("broker-3.pem"), StandardCopyOption.REPLACE_EXISTING,
                StandardCopyOption.ATOMIC_MOVE);
        BigInteger expected = rotated.certificate().getSerialNumber();
        assertTrue(!expected.equals(before));
        await().atMost(WAIT).ignoreExceptions().until(() -> servedSerial(basePort + 20).equals(expected));
        try (TidemarkAdmin tidemark = new TidemarkAdmin(AdminConfig.builder("127.0.0.1:" + (basePort + 20)).tls(admin)
                .build())) {
            tidemark.createTopic("after-rotation", 1, 3, Map.of());
            assertEquals(1, tidemark.describeTopics(List.of("after-rotation")).get(0).getPartitionsCount(),
                    "node 3 serves with its new certificate");
        }
    }

    /**
     * A mirror copies from this TLS cluster into another (one broker in this JVM with a broker certificate of the
     * same CA), reaching each with a client certificate ({@code --source-command-config}, {@code
     * --target-command-config}) whose principal, User:mirror, has only the mirror's minimal ACLs on each cluster;
     * {@code tidemark mirror status} reads the target over TLS.
     */
    @Test
    void aMirrorCopiesBetweenTwoTlsClusters() throws Exception {
        Path into = brokerCertificate("into");
        Path adminConfig = certs.resolve("admin.properties");
        Path mirrorFiles = client(ThrowawayCertificateAuthority.load(certs, RANDOM), "mirror",
                ThrowawayCertificateAuthority.Validity.from(Instant.now().minusSeconds(60), Duration.ofDays(1)));
        Path mirrorConfig = clientConfig(mirrorFiles);
        try (TidemarkAdmin source = new TidemarkAdmin(AdminConfig.builder(bootstrap()).tls(admin).build());
             TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).tls(admin).build());
             InJvmCluster target = InJvmCluster.start(into, 1, Map.of("cluster.name", "into", "tls.ca.file",
                     certs.resolve("ca.pem").toString(), "tls.cert.file", into.resolve("broker.pem").toString(),
                     "tls.key.file", into.resolve("broker.key").toString(), "super.users", "User:admin",
                     "tls.principal.mapping.rules", "RULE:^CN=([^,]+)$/$1/,DEFAULT"));
             TidemarkAdmin targetAdmin = new TidemarkAdmin(AdminConfig.builder(target.bootstrap()).tls(admin)
                     .build())) {
            source.createTopic("mirrored", 1, 3, Map.of());
            // The mirror's rights, as docs/security.md lists them, and no more.
            source.createAcls(List.of(allow("mirror", AclResourceType.TOPIC, "mirrored", AclOperation.READ),
                    allow("mirror", AclResourceType.GROUP, "billing", AclOperation.DESCRIBE),
                    allow("mirror", AclResourceType.CLUSTER, "tidemark-cluster", AclOperation.DESCRIBE)));
            targetAdmin.createAcls(List.of(allow("mirror", AclResourceType.TOPIC, "mirrored", AclOperation.WRITE),
                    allow("mirror", AclResourceType.TOPIC, "mirrored", AclOperation.CREATE),
                    allow("mirror", AclResourceType.TOPIC, "__mirror_state", AclOperation.READ),
                    allow("mirror", AclResourceType.TOPIC, "__mirror_state", AclOperation.WRITE),
                    allow("mirror", AclResourceType.CLUSTER, "tidemark-cluster", AclOperation.DESCRIBE)));
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord("mirrored", 0, null, ("copied-" + i).getBytes(StandardCharsets.UTF_8)))
                        .join();
            }
            try (MirrorProcess mirror = MirrorProcess.startTakingTargetName(dir, "tls-mirror", bootstrap(), "tlsdc",
                    target.bootstrap(), "--topics", "mirrored", "--source-tls-ca", certs.resolve("ca.pem").toString(),
                    "--source-tls-cert", mirrorFiles.resolve("cert.pem").toString(), "--source-tls-key",
                    mirrorFiles.resolve("key.pem").toString(), "--target-command-config", mirrorConfig.toString());
                 TidemarkConsumer copies = new TidemarkConsumer(ConsumerConfig.builder(target.bootstrap()).tls(admin)
                         .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).build())) {
                List<String> read = new ArrayList<>();
                await().atMost(WAIT).ignoreExceptions().until(() -> {
                    if (copies.assignment().isEmpty()) {
                        copies.assign(List.of(new TopicPartition("mirrored", 0)));
                    }
                    copies.poll(Duration.ofMillis(200)).forEach(r -> read.add(new String(r.value(),
                            StandardCharsets.UTF_8)));
                    return read.size() >= 3;
                });
                assertEquals(List.of("copied-0", "copied-1", "copied-2"), read);
                assertEquals(List.of(), mirror.errors());
                Tidemark.Result status = Tidemark.run(dir, "mirror", "status", "--target", target.bootstrap(),
                        "--target-command-config", adminConfig.toString());
                assertEquals(0, status.exitCode(), status.out() + status.err());
                assertTrue(status.out().contains("mirrored"), status.out());
                failoverWithItsMinimalRights(source, targetAdmin, target.bootstrap());
            }
        }
    }

    /**
     * Group billing commits offset 2 on the source; the mirror checkpoints it (DESCRIBE on the group); the failover
     * tool, as a principal with the rights docs/security.md lists for it, moves the group to the target: refused,
     * naming the group, while READ on the group is missing; at the checkpoint once it is granted.
     */
    private void failoverWithItsMinimalRights(TidemarkAdmin source, TidemarkAdmin targetAdmin, String target)
            throws Exception {
        TopicPartition mirrored = new TopicPartition("mirrored", 0);
        source.commitOffsets("billing", Map.of(mirrored, new OffsetAndMetadata(2, "")));
        Path failover = clientConfig(client(ThrowawayCertificateAuthority.load(certs, RANDOM), "failover",
                ThrowawayCertificateAuthority.Validity.from(Instant.now().minusSeconds(60), Duration.ofDays(1))));
        targetAdmin.createAcls(List.of(allow("failover", AclResourceType.CLUSTER, "tidemark-cluster",
                        AclOperation.DESCRIBE), allow("failover", AclResourceType.TOPIC, "__mirror_state",
                        AclOperation.READ), allow("failover", AclResourceType.TOPIC, "mirrored", AclOperation.READ),
                allow("failover", AclResourceType.GROUP, "billing", AclOperation.DESCRIBE)));
        String[] reach = {"--target", target, "--command-config", failover.toString(), "--source-name", "tlsdc",
                "--group", "billing", "--output", "json"};
        Tidemark.Result plan = await().atMost(WAIT).until(() -> Tidemark.inProcess(concat("failover", "plan", reach)),
                result -> result.out().contains("\"mode\":\"exact\""));
        assertEquals(0, plan.exitCode(), plan.out() + plan.err());
        String[] apply = concat("failover", "apply", reach);
        Tidemark.Result refused = Tidemark.inProcess(apply);
        assertEquals(1, refused.exitCode(), refused.out() + refused.err());
        assertTrue(refused.err().contains("User:failover may not READ group 'billing'"), refused.err());

        targetAdmin.createAcls(List.of(allow("failover", AclResourceType.GROUP, "billing", AclOperation.READ)));
        Tidemark.Result applied = Tidemark.inProcess(apply);
        assertEquals(0, applied.exitCode(), applied.out() + applied.err());
        assertEquals(2, targetAdmin.fetchOffsets("billing", List.of(mirrored)).get(mirrored).offset(),
                "the copy of source offset 2 is at target offset 2");
    }

    /**
     * A client certificate's common name is its principal (local up's mapping rule), which may do only what ACLs
     * allow: refused before any, with the principal and operation named, counted and written to the audit log; allowed
     * once {@code tidemark acls add} granted it; refused again on the same connection once {@code tidemark acls
     * remove} took it away. The replica service refuses even a super user: it serves brokers only.
     */
    @Test
    void aPrincipalDoesWhatItsAclsAllowAndLosesARevokedRightAtOnce() throws Exception {
        Path alice = clientConfig(client(ThrowawayCertificateAuthority.load(certs, RANDOM), "alice",
                ThrowawayCertificateAuthority.Validity.from(Instant.now().minusSeconds(60), Duration.ofDays(1))));
        try (TidemarkAdmin tidemark = new TidemarkAdmin(AdminConfig.builder(bootstrap()).tls(admin).build())) {
            tidemark.createTopic("acl-orders", 1, 3, Map.of());
            tidemark.createTopic("acl-other", 1, 3, Map.of());
        }
        try (TlsMaterial aliceTls = TlsMaterial.load(TlsSettings.fromProperties(BrokerConfig.readFile(alice),
                "alice.properties").orElseThrow());
             TidemarkAdmin aliceAdmin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).tls(aliceTls).build());
             TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).tls(aliceTls)
                     .build())) {
            TidemarkException before = refusal(() -> aliceAdmin.describeTopics(List.of("acl-orders")));
            assertEquals(ErrorCode.TOPIC_AUTHORIZATION_FAILED, before.code(), before.getMessage());
            assertEquals("User:alice may not DESCRIBE topic 'acl-orders': no ACL names the resource "
                    + "(allow.everyone.if.no.acl.found is false). An admin grants it with tidemark acls add",
                    before.getMessage());
            assertEquals(List.of(), aliceAdmin.listTopics(false), "no topic alice may describe");

            Tidemark.Result added = Tidemark.inProcess("acls", "add", "--allow-principal", "User:alice",
                    "--operation", "write", "--topic", "acl-orders", "--bootstrap", bootstrap(), "--command-config",
                    certs.resolve("admin.properties").toString());
            assertEquals(0, added.exitCode(), added.out() + added.err());
            assertEquals(List.of("acl-orders"), aliceAdmin.listTopics(false).stream().map(t -> t.getName()).toList(),
                    "WRITE lets alice describe the topic");
            assertEquals(0, producer.send(new ProducerRecord("acl-orders", 0, null,
                    "allowed".getBytes(StandardCharsets.UTF_8))).join().offset());

            Tidemark.Result removed = Tidemark.inProcess("acls", "remove", "--principal", "User:alice", "--topic",
                    "acl-orders", "--bootstrap", bootstrap(), "--command-config",
                    certs.resolve("admin.properties").toString());
            assertEquals(0, removed.exitCode(), removed.out() + removed.err());
            TidemarkException revoked = refusal(() -> producer.send(new ProducerRecord("acl-orders", 0, null,
                    "revoked".getBytes(StandardCharsets.UTF_8))).join());
            assertEquals(ErrorCode.TOPIC_AUTHORIZATION_FAILED, revoked.code(), revoked.getMessage());
            assertEquals("User:alice may not WRITE topic 'acl-orders': no ACL names the resource "
                    + "(allow.everyone.if.no.acl.found is false). An admin grants it with tidemark acls add",
                    revoked.getMessage());
        }
        String audit = "DENIED User:alice WRITE TOPIC 'acl-orders' from 127.0.0.1";
        await().atMost(WAIT).until(() -> brokerLogsContain(audit));
        assertTrue(deniedTopicCalls() >= 2, "authorization_denied_topic on the brokers");

        ManagedChannel channel = TlsMaterial.channelTo(bootstrap().split(",")[0], Optional.of(admin)).build();
        try {
            TidemarkException replicas = refusal(() -> ReplicaServiceGrpc.newBlockingStub(channel)
                    .getMetadataSnapshot(GetMetadataSnapshotRequest.getDefaultInstance()));
            assertEquals(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, replicas.code(), replicas.getMessage());
            assertEquals("User:admin may not CLUSTER_ACTION cluster 'tidemark-cluster': only brokers may (a "
                    + "certificate whose subject matches tls.broker.subjects). An admin grants it with tidemark acls "
                    + "add", replicas.getMessage());
        } finally {
            channel.shutdownNow();
        }
    }

    /**
     * A client without a certificate authenticates with a token ({@code tidemark tokens create}, signed with the key
     * whose public half the broker holds) to a broker that asks for client certificates without requiring them (one
     * broker in this JVM): its calls are its subject's, held to that principal's ACLs; without a token it is
     * anonymous; an expired token and one signed with another key are refused with AUTHENTICATION_FAILED saying why.
     */
    @Test
    void aClientWithATokenIsItsSubjectAndABadTokenIsRefused() throws Exception {
        Path tokens = Files.createDirectories(dir.resolve("tokens"));
        Tidemark.Result keys = Tidemark.inProcess("tokens", "create-key-pair", "--dir", tokens.toString());
        assertEquals(0, keys.exitCode(), keys.out() + keys.err());
        Path carolToken = token(tokens.resolve("token-private.pem"), "carol", "1d");
        Path expired = token(tokens.resolve("token-private.pem"), "carol", "1s");
        Path forgedKey = Files.writeString(tokens.resolve("other-private.pem"), TokenKeyFormat.privatePem(
                (ECPrivateKey) TokenKeyFormat.generate(RANDOM).getPrivate()));
        Path forged = token(forgedKey, "admin", "1d");
        Path broker = brokerCertificate("token-broker");
        try (InJvmCluster cluster = InJvmCluster.start(broker, 1, Map.of("tls.ca.file",
                     certs.resolve("ca.pem").toString(), "tls.cert.file", broker.resolve("broker.pem").toString(),
                     "tls.key.file", broker.resolve("broker.key").toString(), "tls.client.auth", "requested",
                     "super.users", "User:admin", "tls.principal.mapping.rules", "RULE:^CN=([^,]+)$/$1/,DEFAULT",
                     "auth.token.public.key.file", tokens.resolve("token-public.pem").toString()));
             TidemarkAdmin tidemark = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).tls(admin).build());
             TlsMaterial caOnly = TlsMaterial.load(TlsSettings.client(certs.resolve("ca.pem"), Optional.empty(),
                     Optional.empty()));
             TidemarkAdmin anonymous = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).tls(caOnly)
                     .build());
             TidemarkAdmin carol = tokenAdmin(cluster, caOnly, carolToken);
             TidemarkAdmin late = tokenAdmin(cluster, caOnly, expired);
             TidemarkAdmin forger = tokenAdmin(cluster, caOnly, forged)) {
            tidemark.createTopic("token-topic", 1, 1, Map.of());
            tidemark.createAcls(List.of(allow("carol", AclResourceType.TOPIC, "token-topic", AclOperation.DESCRIBE)));
            assertEquals(List.of("token-topic"), carol.listTopics(false).stream().map(t -> t.getName()).toList());
            TidemarkException other = refusal(() -> carol.describeTopics(List.of("no-grant")));
            assertEquals(ErrorCode.TOPIC_AUTHORIZATION_FAILED, other.code(), other.getMessage());
            assertTrue(other.getMessage().startsWith("User:carol may not DESCRIBE topic 'no-grant'"),
                    other.getMessage());
            assertEquals(List.of(), anonymous.listTopics(false), "User:ANONYMOUS may see nothing");

            await().atMost(WAIT).untilAsserted(() -> {
                TidemarkException refused = refusal(() -> late.listTopics(false));
                assertEquals(ErrorCode.AUTHENTICATION_FAILED, refused.code(), refused.getMessage());
                assertTrue(refused.getMessage().contains("expired"), refused.getMessage());
            });
            TidemarkException refused = refusal(() -> forger.listTopics(false));
            assertEquals(ErrorCode.AUTHENTICATION_FAILED, refused.code(), refused.getMessage());
            assertTrue(refused.getMessage().contains("does not verify against the key"), refused.getMessage());
        }
    }

    /** A token for {@code subject} made by {@code tidemark tokens create}, in a file. */
    private static Path token(Path privateKey, String subject, String expiresIn) throws Exception {
        Path file = privateKey.resolveSibling(subject + "-" + expiresIn + "-" + privateKey.getFileName() + ".token");
        Tidemark.Result minted = Tidemark.inProcess("tokens", "create", "--private-key", privateKey.toString(),
                "--subject", subject, "--expires-in", expiresIn, "--out", file.toString());
        assertEquals(0, minted.exitCode(), minted.out() + minted.err());
        return file;
    }

    private static TidemarkAdmin tokenAdmin(InJvmCluster cluster, TlsMaterial tls, Path token) {
        return new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).tls(tls).requestTimeoutMs(30_000)
                .token(BearerToken.fromFile(token, InstantSource.system())).build());
    }

    /** A directory holding a broker certificate of the cluster's CA (CN=broker-1, for 127.0.0.1). */
    private static Path brokerCertificate(String name) throws IOException {
        Path into = Files.createDirectories(dir.resolve(name));
        ThrowawayCertificateAuthority.load(certs, RANDOM).issue(new X500Principal("CN=broker-1"),
                ThrowawayCertificateAuthority.Usage.BROKER, ThrowawayCertificateAuthority.AltNames.of(List.of(
                        "localhost", "127.0.0.1")), ThrowawayCertificateAuthority.Validity.from(
                        Instant.now().minusSeconds(60), Duration.ofDays(1)))
                .write(into.resolve("broker.pem"), into.resolve("broker.key"));
        return into;
    }

    /**
     * A principal's own fetch quota ({@code tidemark quotas set}) holds back its fetches once it is over the rate and
     * its burst, each answer saying by how much; {@code tidemark quotas remove} gives it the brokers' default
     * (unlimited) again.
     */
    @Test
    void aPrincipalOverItsQuotaIsHeldBackAndToldByHowMuch() throws Exception {
        Path dave = clientConfig(client(ThrowawayCertificateAuthority.load(certs, RANDOM), "dave",
                ThrowawayCertificateAuthority.Validity.from(Instant.now().minusSeconds(60), Duration.ofDays(1))));
        int leader;
        try (TidemarkAdmin tidemark = new TidemarkAdmin(AdminConfig.builder(bootstrap()).tls(admin).build());
             TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).tls(admin)
                     .build())) {
            tidemark.createTopic("quota-topic", 1, 3, Map.of());
            tidemark.createAcls(List.of(allow("dave", AclResourceType.TOPIC, "quota-topic", AclOperation.READ)));
            producer.send(new ProducerRecord("quota-topic", 0, null, new byte[2_000])).join();
            leader = tidemark.metadata(List.of("quota-topic")).getTopics(0).getPartitions(0).getLeaderNodeId();
        }
        Tidemark.Result set = Tidemark.inProcess("quotas", "set", "--principal", "User:dave",
                "--fetch-bytes-per-second", "10000", "--bootstrap", bootstrap(), "--command-config",
                certs.resolve("admin.properties").toString());
        assertEquals(0, set.exitCode(), set.out() + set.err());
        FetchRequest fetch = FetchRequest.newBuilder().setTopic("quota-topic").setPartition(0).setOffset(0)
                .setMaxBytes(1 << 20).build();
        try (TlsMaterial daveTls = TlsMaterial.load(TlsSettings.fromProperties(BrokerConfig.readFile(dave),
                "dave.properties").orElseThrow())) {
            ManagedChannel channel = TlsMaterial.channelTo("127.0.0.1:" + (basePort + 10 * (leader - 1)),
                    Optional.of(daveTls)).build();
            try {
                BrokerServiceGrpc.BrokerServiceBlockingStub broker = BrokerServiceGrpc.newBlockingStub(channel);
                FetchResponse first = broker.fetch(fetch);
                assertTrue(first.getBatches().size() > 2_000, "the record's batch: " + first.getBatches().size());
                assertEquals(0, first.getThrottleTimeMs(), "within the burst");
                List<Long> throttles = new ArrayList<>();
                for (int i = 0; i < 20 && throttles.stream().allMatch(t -> t == 0); i++) {
                    throttles.add(broker.fetch(fetch).getThrottleTimeMs());
                }
                long held = throttles.get(throttles.size() - 1);
                assertTrue(held > 0 && held <= 10_000 && throttles.size() >= 4, "20 fetches of 2 KB go over 10 KB/s "
                        + "and its second of burst, after 4 at least: " + throttles);
                Tidemark.Result removed = Tidemark.inProcess("quotas", "remove", "--principal", "User:dave",
                        "--bootstrap", bootstrap(), "--command-config", certs.resolve("admin.properties").toString());
                assertEquals(0, removed.exitCode(), removed.out() + removed.err());
                await().atMost(WAIT).until(() -> broker.fetch(fetch).getThrottleTimeMs() == 0);
            } finally {
                channel.shutdownNow();
            }
        }
    }

    private static String[] concat(String first, String second, String[] rest) {
        List<String> all = new ArrayList<>(List.of(first, second));
        all.addAll(List.of(rest));
        return all.toArray(String[]::new);
    }

    private static AclBinding allow(String user, AclResourceType type, String name, AclOperation operation) {
        return AclBinding.newBuilder().setResourceType(type).setResourceName(name)
                .setPatternType(AclPatternType.LITERAL).setPrincipal("User:" + user).setHost("*")
                .setOperation(operation).setPermission(AclPermission.ALLOW).build();
    }

    /** The Tidemark error the call fails with, however the client wraps it. */
    private static TidemarkException refusal(Runnable call) {
        Throwable failure = assertThrows(Throwable.class, call::run);
        Throwable cause = failure;
        while (cause != null && !(cause instanceof TidemarkException)) {
            cause = cause.getCause();
        }
        if (cause == null) {
            return GrpcErrors.fromThrowable(failure);
        }
        return (TidemarkException) cause;
    }

    private static boolean brokerLogsContain(String text) throws IOException {
        for (int node = 1; node <= 3; node++) {
            if (Files.readString(dir.resolve("default/node-" + node + "/broker.log")).contains(text)) {
                return true;
            }
        }
        return false;
    }

    /** The sum over the brokers of their authorization_denied_topic meters, read from their metrics endpoints. */
    private static double deniedTopicCalls() throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(new KeyManager[] {admin.keyManager()}, new TrustManager[] {admin.trustManager()}, null);
        HttpClient https = HttpClient.newBuilder().sslContext(context).connectTimeout(Duration.ofSeconds(10)).build();
        double sum = 0;
        for (int node = 0; node < 3; node++) {
            String body = https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + (basePort + 10 * node
                    + 1) + "/metrics")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers
                    .ofString()).body();
            sum += body.lines().filter(line -> line.startsWith("authorization_denied_topic"))
                    .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
        }
        return sum;
    }

    /** A --command-config file for the client whose certificate and key are in {@code files}. */
    private static Path clientConfig(Path files) throws IOException {
        return Files.writeString(files.resolve("client.properties"), "tls.ca.file=" + certs.resolve("ca.pem")
                + "\ntls.cert.file=" + files.resolve("cert.pem") + "\ntls.key.file=" + files.resolve("key.pem")
                + "\n");
    }

    /** The serial number of the certificate the broker on {@code port} shows in a new handshake. */
    private static BigInteger servedSerial(int port) throws IOException, GeneralSecurityException {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(new KeyManager[] {admin.keyManager()}, new TrustManager[] {admin.trustManager()}, null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }

    /** A client's certificate and key issued by {@code ca}, in a directory of their own. */
    private static Path client(ThrowawayCertificateAuthority ca, String name,
                               ThrowawayCertificateAuthority.Validity validity) throws IOException {
        Path files = Files.createDirectories(dir.resolve(name));
        ca.issue(new X500Principal("CN=" + name), ThrowawayCertificateAuthority.Usage.CLIENT,
                ThrowawayCertificateAuthority.AltNames.NONE, validity).write(files.resolve("cert.pem"),
                files.resolve("key.pem"));
        return files;
    }

    private static String pem(ThrowawayCertificateAuthority ca) throws IOException {
        Path staged = Files.createTempDirectory(dir, "ca");
        ca.write(staged);
        return Files.readString(staged.resolve(ThrowawayCertificateAuthority.CERTIFICATE_FILE));
    }

    /** A client with {@code settings} (plain text when empty) is refused with AUTHENTICATION_FAILED naming why. */
    private static void assertRefused(Optional<TlsSettings> settings, String why) {
        Optional<TlsMaterial> material = TlsMaterial.load(settings);
        try {
            TidemarkException refused = assertThrows(TidemarkException.class, () -> listTopics(bootstrap(),
                    material));
            assertEquals(ErrorCode.AUTHENTICATION_FAILED, refused.code(), refused.getMessage());
            assertTrue(refused.getMessage().contains(why), "expected '" + why + "' in: " + refused.getMessage());
        } finally {
            material.ifPresent(TlsMaterial::close);
        }
    }

    private static void listTopics(String brokers, Optional<TlsMaterial> tls) {
        AdminConfig.Builder config = AdminConfig.builder(brokers).requestTimeoutMs(30_000);
        tls.ifPresent(config::tls);
        try (TidemarkAdmin tidemark = new TidemarkAdmin(config.build())) {
            tidemark.listTopics(true);
        }
    }
}
