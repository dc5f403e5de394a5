package io.tidemark.it;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Chaos on a 3-process cluster: a paused leader, and leaders whose clocks disagree by a minute. */
class ClusterChaosIT {
    private static final TopicPartition PARTITION = new TopicPartition("chaos", 0);

    /** Kept when a test fails: the brokers' logs are in it. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    private static int leader(TidemarkAdmin admin) {
        return admin.describeTopics(List.of("chaos")).get(0).getPartitions(0).getLeaderNodeId();
    }

    private static void createTopic(ClusterProcesses cluster) {
        try (TidemarkAdmin admin = cluster.admin()) {
            admin.createTopic("chaos", 1, 3, Map.of());
            await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class)
                    .until(() -> leader(admin) > 0);
        }
    }

    @Test
    void aPausedLeaderIsReplacedAndNothingIsLostOrDuplicated() throws Exception {
        try (ClusterProcesses cluster = new ClusterProcesses(dir, Map.of())) {
            createTopic(cluster);
            List<String> values = new ArrayList<>();
            List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
            try (TidemarkAdmin admin = cluster.admin();
                 TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap())
                         .lingerMs(2).requestTimeoutMs(3000).build())) {
                for (int i = 0; i < 2000; i++) {
                    values.add("p" + i);
                    sends.add(producer.send(new ProducerRecord("chaos", 0, null, values.get(i).getBytes(StandardCharsets.UTF_8))));
                    if (i == 700) {
                        producer.flush();
                        int paused = leader(admin);
                        Map<Integer, Long> electionsBefore = new HashMap<>();
                        for (int node = 1; node <= 3; node++) {
                            electionsBefore.put(node, cluster.elections(node));
                        }
                        cluster.signal(paused, "STOP");
                        int elected = await().atMost(Duration.ofSeconds(60))
                                .ignoreException(TidemarkException.class)
                                .until(() -> leaderSeenFrom(cluster, paused), node -> node > 0 && node != paused);
                        assertTrue(cluster.elections(elected) > electionsBefore.get(elected),
                                "the new leader's broker counts the election it won in its /metrics");
                    }
                    if (i == 1400) {
                        for (int node = 1; node <= 3; node++) {
                            cluster.signal(node, "CONT");
                        }
                    }
                }
                producer.flush();
            }
            Set<String> acknowledged = PartitionChecker.acknowledged(values, sends);
            assertTrue(acknowledged.size() >= 1000, "acknowledged " + acknowledged.size() + "; first failure: "
                    + PartitionChecker.firstFailure(sends));
            PartitionChecker.check(cluster.bootstrap(), PARTITION, acknowledged);
            ReplicaCheck.assertReplicasAgree(dir, cluster.bootstrap());
        }
    }

    /** The partition's leader as a broker other than {@code paused} sees it. */
    private static int leaderSeenFrom(ClusterProcesses cluster, int paused) {
        int other = paused == 1 ? 2 : 1;
        try (TidemarkAdmin admin = new TidemarkAdmin(io.tidemark.client.api.AdminConfig.builder("127.0.0.1:"
                + cluster.clientPort(other)).requestTimeoutMs(3000).build())) {
            return leader(admin);
        }
    }

    /**
     * ReceiveTime never decreases through leader changes between brokers whose clocks disagree (node 1 30 s behind,
     * node 3 a day ahead); node 3 stamps no further ahead of the cluster's median clock than
     * receive.time.max.ahead.ms (60 s), so it cannot pin the partition's ReceiveTime a day in the future.
     */
    @Test
    void receiveTimeStaysMonotonicAcrossLeadersWithSkewedClocks() throws Exception {
        // Leadership moves by hand here; the balancer would move it back to the preferred replica meanwhile.
        String balancingOff = "leader.balance.enabled=0\n";
        try (ClusterProcesses cluster = new ClusterProcesses(dir, Map.of(1, "clock.offset.ms=-30000\n" + balancingOff,
                2, balancingOff, 3, "clock.offset.ms=86400000\n" + balancingOff))) {
            createTopic(cluster);
            List<String> values = new ArrayList<>();
            List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
            try (TidemarkAdmin admin = cluster.admin();
                 TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap())
                         .lingerMs(1).build())) {
                for (int leader : new int[] {3, 1, 2, 3, 1}) {
                    assertEquals(leader, admin.transferLeadership(PARTITION, leader, 10_000).getLeaderNodeId());
                    for (int i = 0; i < 50; i++) {
                        values.add("leader " + leader + " #" + values.size());
                        sends.add(producer.send(new ProducerRecord("chaos", 0, null,
                                values.get(values.size() - 1).getBytes(StandardCharsets.UTF_8))));
                    }
                    producer.flush();
                    if (leader == 3) {
                        long aheadOfRealTime = Instant.now().toEpochMilli() + 3_600_000 + 15_000;
                        String ahead = "ahead #" + values.size();
                        RecordMetadata accepted = producer.send(new ProducerRecord("chaos", 0, null,
                                ahead.getBytes(StandardCharsets.UTF_8), aheadOfRealTime)).join();
                        assertTrue(accepted.receiveTimeMs() >= aheadOfRealTime - 3_600_000
                                && accepted.receiveTimeMs() <= Instant.now().toEpochMilli() + 60_000 + 10_000,
                                "stamped by the leader's clock, a day ahead, held to 60 s ahead of the cluster's: "
                                        + accepted.receiveTimeMs() + " at " + Instant.now().toEpochMilli());
                        values.add(ahead);
                        sends.add(CompletableFuture.completedFuture(accepted));
                    }
                }
            }
            List<ConsumerRecord> records = PartitionChecker.check(cluster.bootstrap(), PARTITION,
                    PartitionChecker.acknowledged(values, sends));
            assertEquals(values.size(), records.size());
            long latest = Instant.now().toEpochMilli() + 60_000;
            assertTrue(records.stream().allMatch(r -> r.receiveTimeMs() <= latest), "no ReceiveTime a day ahead: "
                    + records.get(records.size() - 1).receiveTimeMs() + " last, now " + Instant.now());
            ReplicaCheck.assertReplicasAgree(dir, cluster.bootstrap());
        }
    }
}
