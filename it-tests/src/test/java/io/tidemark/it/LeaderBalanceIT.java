package io.tidemark.it;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.PartitionDescription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Three broker processes, a topic of 6 partitions with 3 replicas (each broker the preferred replica of 2):
 * SIGKILL one broker, see {@code tidemark status} report it down and its partitions led elsewhere, restart it,
 * and see status report it up and every partition led by its preferred replica again. The brokers balance every 2 s
 * instead of 5 s to keep the test short; the defaults are covered by the balancer's unit tests.
 */
class LeaderBalanceIT {
    private static final String TOPIC = "balanced";
    private static final int KILLED = 3;
    private static final Duration BOUND = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void leadersReturnToTheirPreferredReplicasAfterABrokerRestarts() throws Exception {
        String fastBalance = "leader.balance.interval.ms=2000\n";
        try (ClusterProcesses cluster = new ClusterProcesses(dir, Map.of(1, fastBalance, 2, fastBalance,
                3, fastBalance));
             TidemarkAdmin admin = cluster.admin()) {
            admin.createTopic(TOPIC, 6, 3, Map.of());
            Map<Integer, Integer> preferred = describe(admin).stream().collect(Collectors.toMap(
                    PartitionDescription::getPartition, p -> p.getReplicaNodeIds(0), (a, b) -> a, TreeMap::new));
            assertEquals(Map.of(1, 2L, 2, 2L, 3, 2L), preferred.values().stream()
                    .collect(Collectors.groupingBy(n -> n, Collectors.counting())), "placement spreads preferred replicas");
            awaitLeaders(admin, preferred);

            cluster.kill(KILLED);
            await().atMost(BOUND).ignoreException(TidemarkException.class).until(() -> describe(admin).stream()
                    .allMatch(p -> p.getLeaderNodeId() > 0 && p.getLeaderNodeId() != KILLED));
            awaitStatus(cluster, KILLED);

            cluster.start(KILLED);
            awaitStatus(cluster, 0);
            awaitLeaders(admin, preferred);
            assertEquals(Map.of(1, 2L, 2, 2L, 3, 2L), leaders(admin).values().stream()
                    .collect(Collectors.groupingBy(n -> n, Collectors.counting())), "each broker leads 2 partitions");

        }
    }

    private static List<PartitionDescription> describe(TidemarkAdmin admin) {
        return admin.describeTopics(List.of(TOPIC)).get(0).getPartitionsList();
    }

    private static Map<Integer, Integer> leaders(TidemarkAdmin admin) {
        return describe(admin).stream().collect(Collectors.toMap(PartitionDescription::getPartition,
                PartitionDescription::getLeaderNodeId, (a, b) -> a, TreeMap::new));
    }

    private static void awaitLeaders(TidemarkAdmin admin, Map<Integer, Integer> expected) {
        await().atMost(BOUND).pollInterval(Duration.ofMillis(500)).ignoreException(TidemarkException.class)
                .until(() -> leaders(admin).equals(expected));
    }

    /**
     * Waits until {@code tidemark status}, asked through node 1, says the cluster has no name and lists the brokers
     * with only {@code down} down.
     */
    private void awaitStatus(ClusterProcesses cluster, int down) {
        List<String> expected = new ArrayList<>(List.of("cluster without a name (cluster.name is not set)"));
        List.of(1, 2, 3).forEach(node -> expected.add(String.format("node %d  %-21s  %s", node,
                "127.0.0.1:" + cluster.clientPort(node), node == down ? "down" : "up")));
        await().atMost(BOUND).until(() -> {
            Tidemark.Result status = Tidemark.run(dir, "status", "--bootstrap", "127.0.0.1:" + cluster.clientPort(1));
            return status.exitCode() == 0 && status.out().lines().limit(4).toList().equals(expected);
        });
    }
}
