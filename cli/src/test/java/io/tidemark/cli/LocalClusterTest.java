package io.tidemark.cli;

import io.tidemark.core.config.BrokerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

class LocalClusterTest {
    @TempDir
    Path dir;

    private LocalCluster cluster(String name, String configText) throws IOException {
        String configFile = "";
        if (configText != null) {
            Path file = dir.resolve("given.properties");
            Files.writeString(file, configText);
            configFile = file.toString();
        }
        return new LocalCluster(dir.resolve(name), 1, 9400, configFile, "");
    }

    private static Map<String, String> brokerConfig(LocalCluster cluster) throws IOException {
        Path file = cluster.writeBrokerConfig().orElseThrow();
        assertEquals(cluster.dir().resolve("broker.properties"), file);
        return BrokerConfig.readFile(file);
    }

    @Test
    void aNamedClustersBrokersHaveItsName() throws IOException {
        assertEquals(Map.of("cluster.name", "A"), brokerConfig(cluster("A", null)));
    }

    @Test
    void theGivenFileKeepsItsKeysAndMaySetTheSameName() throws IOException {
        assertEquals(Map.of("cluster.name", "A", "segment.bytes", "1048576", "raft.log.sync", "0"),
                brokerConfig(cluster("A", "# tuned\nsegment.bytes=1048576\nraft.log.sync=0\n")));
        assertEquals(Map.of("cluster.name", "A", "retention.ms", "60000"),
                brokerConfig(cluster("A", "cluster.name=A\nretention.ms=60000")));
    }

    @Test
    void aGivenFileNamingAnotherClusterIsRefused() throws IOException {
        LocalCluster cluster = cluster("A", "cluster.name=B\n");
        assertEquals("--config " + cluster.configFile() + " sets cluster.name=B, but this local cluster is named 'A': "
                + "remove it from the file, or name the cluster the same (--name B)",
                assertThrows(IllegalArgumentException.class, cluster::writeBrokerConfig).getMessage());
        assertFalse(Files.exists(cluster.dir()), "nothing written");
    }

    @Test
    void aNameThatIsNoClusterNameIsRefused() throws IOException {
        assertEquals("--name 'A,B' cannot name the cluster's brokers (their cluster.name): use 1 to 64 characters from "
                + "a-z A-Z 0-9 . _ -", assertThrows(IllegalArgumentException.class,
                cluster("A,B", null)::writeBrokerConfig).getMessage());
    }

    @Test
    void theDefaultClustersBrokersGetNoNameAndReadTheGivenFileAsItIs() throws IOException {
        assertEquals(Optional.empty(), cluster("default", null).writeBrokerConfig());
        LocalCluster withFile = cluster("default", "cluster.name=B\n");
        assertEquals(Optional.of(Path.of(withFile.configFile())), withFile.writeBrokerConfig());
        assertFalse(Files.exists(withFile.dir()), "nothing written");
    }

    /**
     * A TLS cluster's broker reads a file of its own: the cluster's keys and its own certificate, with common names as
     * principals and the admin client a super user unless the cluster's keys say otherwise.
     */
    @Test
    void aTlsClustersBrokerReadsItsOwnCertificateBesideTheClustersKeys() throws IOException {
        LocalCluster plain = cluster("A", "retention.ms=60000\n");
        LocalCluster tls = new LocalCluster(plain.dir(), 3, 9400, plain.configFile(), "/c/certs");
        Path file = tls.brokerConfig(2, tls.writeBrokerConfig()).orElseThrow();
        assertEquals(tls.nodeDir(2).resolve("broker.properties"), file);
        assertEquals(Map.of("cluster.name", "A", "retention.ms", "60000", "tls.ca.file", "/c/certs/ca.pem",
                "tls.cert.file", "/c/certs/broker-2.pem", "tls.key.file", "/c/certs/broker-2.key",
                "tls.principal.mapping.rules", "RULE:^CN=([^,]+)$/$1/,DEFAULT", "super.users", "User:admin"),
                BrokerConfig.readFile(file));
        LocalCluster given = cluster("B", "super.users=User:ops\n");
        LocalCluster own = new LocalCluster(given.dir(), 3, 9400, given.configFile(), "/c/certs");
        assertEquals("User:ops", BrokerConfig.readFile(own.brokerConfig(1, own.writeBrokerConfig()).orElseThrow())
                .get("super.users"), "the cluster's own super users stay");
        assertEquals(Optional.of(Path.of("/c/certs/admin.properties")), tls.clientConfig());
        assertEquals(Optional.empty(), plain.clientConfig());
        assertEquals(plain.writeBrokerConfig(), plain.brokerConfig(2, plain.writeBrokerConfig()), "plain: shared");
    }
}
