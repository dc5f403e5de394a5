package io.tidemark.cli;

import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.HostPort;
import io.tidemark.replication.cluster.ClusterMembers;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The files in {@code deploy/} are what a broker accepts: every broker config and member list parses. */
class DeployFilesTest {
    private static final Path DEPLOY = Path.of("..", "deploy");

    private static List<Path> files(String suffix) throws IOException {
        try (Stream<Path> all = Files.walk(DEPLOY)) {
            return all.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
        }
    }

    @Test
    void everyBrokerConfigParses() throws IOException {
        List<Path> configs = files(".properties");
        assertEquals(List.of(DEPLOY.resolve("three-hosts/broker.properties"),
                DEPLOY.resolve("two-datacenters/broker.properties")), configs);
        for (Path config : configs) {
            Properties properties = new Properties();
            try (Reader reader = Files.newBufferedReader(config)) {
                properties.load(reader);
            }
            Map<String, String> keys = new HashMap<>();
            properties.stringPropertyNames().forEach(k -> keys.put(k, properties.getProperty(k)));
            BrokerConfig.of(1, Path.of("data"), new HostPort("10.0.0.1", 9400), Optional.empty(), keys,
                    config.toString());
        }
    }

    @Test
    void everyMemberListHasThreeBrokers() throws IOException {
        List<Path> lists = files("cluster");
        assertEquals(List.of(DEPLOY.resolve("three-hosts/cluster"), DEPLOY.resolve("two-datacenters/dc-a.cluster"),
                DEPLOY.resolve("two-datacenters/dc-b.cluster")), lists);
        for (Path list : lists) {
            assertEquals(List.of(1, 2, 3), ClusterMembers.parse(Files.readString(list).trim()).nodeIds().stream()
                    .sorted().toList(), list.toString());
        }
    }
}
