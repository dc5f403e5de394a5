package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.PartitionDescription;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A thousand partitions, replication factor 3, on three broker processes: every partition gets a leader, the
 * partitions share the three partition groups of the three replica lists (consensus per replica set, not per
 * partition), an idempotent producer writes to every one of them, the broker leading partition 0 is SIGKILLed and
 * later restarted while it writes, and every partition then holds every acknowledged record exactly once, at
 * contiguous offsets, with ReceiveTime never decreasing.
 */
class ManyPartitionsIT {
    private static final String TOPIC = "many";
    private static final int PARTITIONS = 1000;
    /** Two records per partition a second: every partition is written to all through the test. */
    private static final int RECORDS_PER_SECOND = 2000;
    private static final int RECORDS_MAX = 1_000_000;
    private static final Duration LOAD_TIME_MAX = Duration.ofMinutes(6);
    /** A create is not retried (a retry of one that went through finds the topic); it gets time to go through. */
    private static final Duration CREATE_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration LED_BOUND = Duration.ofSeconds(120);
    private static final Duration PROGRESS_BOUND = Duration.ofSeconds(60);
    /**
     * How soon the restarted broker leads again: it must keep pace with the load (at most the leader's in-flight
     * entries behind) and reach the others on fresh evidence, then wait a balance interval (8-9 s here).
     */
    private static final Duration HAND_BACK_BOUND = Duration.ofSeconds(60);
    /** Stalled partitions a failure message describes, at most. */
    private static final int STALLED_LISTED = 20;

    /** Kept when the test fails: the brokers' logs say why (the balancer logs why a group stays led away). */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    @Test
    void aThousandPartitionsAreLedWrittenAndReadAndALeaderKilledAndRestartedLosesNothing() throws Exception {
        try (ClusterProcesses cluster = new ClusterProcesses(dir, Map.of());
             TidemarkAdmin admin = cluster.admin()) {
            try (TidemarkAdmin patient = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap())
                    .requestTimeoutMs(CREATE_TIMEOUT.toMillis()).build())) {
                patient.createTopic(TOPIC, PARTITIONS, 3, Map.of());
            }
            await("every partition led").atMost(LED_BOUND).ignoreException(TidemarkException.class)
                    .until(() -> partitions(admin).stream().allMatch(p -> p.getLeaderNodeId() > 0));
            Set<String> groups = partitions(admin).stream().map(PartitionDescription::getGroupId)
                    .collect(Collectors.toSet());
            assertEquals(3, groups.size(), "one partition group per replica list (3 rotations of 3 brokers): "
                    + groups);

            ProducerConfig producerConfig = ProducerConfig.builder(cluster.bootstrap()).lingerMs(5)
                    .requestTimeoutMs(5_000).deliveryTimeoutMs(120_000).build();
            try (PartitionLoad load = PartitionLoad.start(producerConfig, TOPIC, PARTITIONS, RECORDS_PER_SECOND,
                    RECORDS_MAX, LOAD_TIME_MAX)) {
                long loadStart = System.nanoTime();
                await("a record acknowledged on every partition").atMost(PROGRESS_BOUND)
                        .until(() -> load.progressedSince(loadStart));

                // the victim must be partition 0's preferred replica, for the balancer to hand it back: a kill during
                // the balancer's first moves would otherwise take a leader that is not, and it would never lead again
                int victim = await("partition 0 led by its preferred replica").atMost(PROGRESS_BOUND)
                        .ignoreException(TidemarkException.class).until(() -> partitions(admin).get(0),
                                p -> p.getLeaderNodeId() == p.getReplicaNodeIds(0)).getLeaderNodeId();
                cluster.kill(victim);
                long killed = System.nanoTime();
                awaitProgress(load, "after node " + victim + " was killed", killed);

                cluster.start(victim);
                long restarted = System.nanoTime();
                await("node " + victim + " leads again (the balancer hands its partitions back)")
                        .atMost(HAND_BACK_BOUND).ignoreException(TidemarkException.class)
                        .until(() -> leaderSeenBy(cluster, victim) == victim);
                awaitProgress(load, "after node " + victim + " came back", restarted);

                assertTrue(load.running(), "the load ran through the kill and the restart (raise its bounds if not)");
                load.stop();
                assertEquals(0, load.failed(), "every record sent is acknowledged (a majority was always up); "
                        + "first failure: " + load.firstFailure());
                Map<Integer, Set<String>> acknowledged = load.acknowledgedByPartition();
                Map<Integer, List<ConsumerRecord>> records = PartitionChecker.checkTopic(cluster.bootstrap(), TOPIC,
                        PARTITIONS, p -> acknowledged.getOrDefault(p, Set.of()), load.sendTimes());
                for (int p = 0; p < PARTITIONS; p++) {
                    assertEquals(acknowledged.get(p), records.get(p).stream().map(r -> new String(r.value(),
                            StandardCharsets.UTF_8)).collect(Collectors.toSet()), "partition " + p + " holds the "
                            + "records sent to it, each once");
                }
            }
            ReplicaCheck.assertReplicasAgree(dir, cluster.bootstrap());
        }
    }

    /** Awaits a record acknowledged on every partition sent since {@code sinceNanos}; names the stalled ones if not. */
    private static void awaitProgress(PartitionLoad load, String when, long sinceNanos) {
        try {
            await("every partition written to " + when).atMost(PROGRESS_BOUND)
                    .until(() -> load.progressedSince(sinceNanos));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("not every partition was written to " + when + " within " + PROGRESS_BOUND
                    .toSeconds() + " s: " + load.stalledReport(sinceNanos, STALLED_LISTED), e);
        }
    }

    /** The leader of partition 0 as broker {@code node} sees it. */
    private static int leaderSeenBy(ClusterProcesses cluster, int node) {
        try (TidemarkAdmin admin = cluster.admin(node)) {
            return partitions(admin).get(0).getLeaderNodeId();
        }
    }

    private static List<PartitionDescription> partitions(TidemarkAdmin admin) {
        return admin.describeTopics(List.of(TOPIC)).get(0).getPartitionsList();
    }
}
