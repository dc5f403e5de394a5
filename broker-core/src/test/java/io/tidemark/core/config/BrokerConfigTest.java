package io.tidemark.core.config;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BrokerConfigTest {
    private static final HostPort LISTEN = new HostPort("127.0.0.1", 9092);

    private static BrokerConfig of(Map<String, String> file) {
        return BrokerConfig.of(1, Path.of("data"), LISTEN, Optional.empty(), file, "broker.properties");
    }

    @Test
    void fileHoldsBrokerKeysAndTopicDefaults() {
        BrokerConfig config = of(Map.of("max.fetch.bytes", "1048576", "retention.ms", "3600000"));
        assertEquals(1 << 20, config.maxFetchBytes());
        assertEquals(Map.of("retention.ms", "3600000"), config.topicDefaults());
        assertEquals(16 << 20, config.maxRequestBytes());
    }

    @Test
    void unknownKeysAndBadValuesAreNamed() {
        TidemarkException unknown = assertThrows(TidemarkException.class, () -> of(Map.of("retention.hours", "1")));
        assertEquals(ErrorCode.INVALID_CONFIG, unknown.code());
        assertTrue(unknown.getMessage().startsWith("unknown key 'retention.hours' in broker.properties; known keys: "
                + "allow.everyone.if.no.acl.found, auth.token.audience, auth.token.public.key.file, authorizer.enabled, "
                + "cleanup.policy, clock.offset.ms, cluster.name, delete.retention.ms, fetch.memory.max.bytes, "
                + "flush.check.interval.ms, "
                + "flush.messages, flush.ms, "
                + "group.consumer.heartbeat.interval.ms, group.consumer.max.size, group.consumer.session.timeout.ms, "
                + "group.max.count, index.interval.bytes, "), unknown.getMessage());
        assertEquals("invalid value for max.fetch.wait.ms: 999999999 is not allowed; allowed: an integer in [0, 600000] (ms)",
                assertThrows(TidemarkException.class, () -> of(Map.of("max.fetch.wait.ms", "999999999"))).getMessage());
        assertEquals("group.consumer.heartbeat.interval.ms 45000 must be below group.consumer.session.timeout.ms "
                + "45000", assertThrows(TidemarkException.class, () -> of(Map.of(
                        "group.consumer.heartbeat.interval.ms", "45000"))).getMessage());
        assertEquals("invalid value for segment.ms: 0 is not allowed; allowed: an integer >= 1 (ms)",
                assertThrows(TidemarkException.class, () -> of(Map.of("segment.ms", "0"))).getMessage());
        assertEquals("max.batch.bytes 16777216 does not fit in max.request.bytes 16777216 with 1024 bytes for the request",
                assertThrows(TidemarkException.class, () -> of(Map.of("max.batch.bytes", "16777216"))).getMessage());
    }

    @Test
    void theTlsKeysTurnTlsOnAndABrokerNeedsItsOwnCertificate() {
        assertEquals(Optional.empty(), of(Map.of()).tls());
        assertEquals(Optional.of(Path.of("/c/broker-1.pem")), of(Map.of("tls.ca.file", "/c/ca.pem", "tls.cert.file",
                "/c/broker-1.pem", "tls.key.file", "/c/broker-1.key")).tls().orElseThrow().certFile());
        TidemarkException withoutCertificate = assertThrows(TidemarkException.class,
                () -> of(Map.of("tls.ca.file", "/c/ca.pem")));
        assertEquals(ErrorCode.INVALID_CONFIG, withoutCertificate.code());
        assertEquals("a broker's TLS needs its own certificate: set tls.cert.file and tls.key.file beside tls.ca.file",
                withoutCertificate.getMessage());
    }

    @Test
    void clusterNameIsUnsetByDefaultAndTakesNamesMirrorsAccept() {
        assertEquals(Optional.empty(), of(Map.of()).clusterName());
        assertEquals(Optional.of("dc-a.prod_1"), of(Map.of("cluster.name", "dc-a.prod_1")).clusterName());
        assertEquals(Optional.of("x".repeat(64)), of(Map.of("cluster.name", "x".repeat(64))).clusterName());
    }

    @Test
    void aBadClusterNameIsRefusedWithTheKeyTheValueAndWhatIsAllowed() {
        TidemarkException spaced = assertThrows(TidemarkException.class, () -> of(Map.of("cluster.name", "dc a")));
        assertEquals(ErrorCode.INVALID_CONFIG, spaced.code());
        assertEquals("invalid value for cluster.name: 'dc a' is not allowed; allowed: 1 to 64 characters from a-z A-Z "
                + "0-9 . _ -", spaced.getMessage());
        assertEquals("invalid value for cluster.name: '' is not allowed; allowed: 1 to 64 characters from a-z A-Z "
                + "0-9 . _ -", assertThrows(TidemarkException.class, () -> of(Map.of("cluster.name", "")))
                .getMessage());
        assertEquals("invalid value for cluster.name: '" + "x".repeat(65) + "' is not allowed; allowed: 1 to 64 "
                + "characters from a-z A-Z 0-9 . _ -", assertThrows(TidemarkException.class,
                () -> of(Map.of("cluster.name", "x".repeat(65)))).getMessage());
    }

    @Test
    void addressesAreParsedWithClearErrors() {
        assertEquals(new HostPort("127.0.0.1", 0), HostPort.parse("--listen", "127.0.0.1:0"));
        assertEquals("invalid value for --listen: 'localhost'; allowed: HOST:PORT with a port from 0 to 65535, e.g. "
                + "127.0.0.1:9092", assertThrows(TidemarkException.class, () -> HostPort.parse("--listen", "localhost"))
                .getMessage());
        assertThrows(TidemarkException.class, () -> HostPort.parse("--listen", "h:70000"));
    }

    @Test
    void documentationTableIsGeneratedFromTheDeclarations() throws Exception {
        Path docs = Path.of(System.getProperty("tidemark.docs.dir", "../docs"), "configuration.md");
        String table = ConfigDocs.markdownTable(BrokerConfig.ALL_KEYS);
        assertTrue(Files.readString(docs).contains(table), docs + " must contain this table (copy it in):\n" + table);
    }
}
