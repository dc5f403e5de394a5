package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.PartitionDescription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tidemark partitions reassign} on three broker processes: a partition of replication factor 2 moves off its
 * leader's broker to the broker outside its replicas while an idempotent producer streams 20,000 records into it;
 * nothing acknowledged is lost or stored twice, the new replicas hold everything, and the broker left out deleted
 * its replica.
 */
class ReassignIT {
    private static final TopicPartition PARTITION = new TopicPartition("moves", 0);
    private static final int RECORDS = 20_000;
    /** Snapshots every 100 Raft entries, so the joining replica may find the leader's Raft log purged. */
    private static final String BROKER_CONFIG = "raft.snapshot.interval.entries=100\n";
    /** Records in the partition before the crash test's move: about 60 MB to copy. */
    private static final int PRELOADED = 60_000;
    private static final int RECORD_BYTES = 1000;
    private static final int SENT_THROUGH_THE_KILL = 2_000;
    private static final long KILL_AFTER_COPIED_BYTES = 8L << 20;

    /** Kept when the test fails: the brokers' logs are there ({@code node-N.log}). */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    private static PartitionDescription describe(TidemarkAdmin admin) {
        return admin.describeTopics(List.of(PARTITION.topic())).get(0).getPartitions(0);
    }

    /** The partition as the broker {@code node} sees its own replica. */
    private static PartitionDescription describeOn(ClusterProcesses cluster, int node) {
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder("127.0.0.1:" + cluster.clientPort(node))
                .requestTimeoutMs(3000).build())) {
            return describe(admin);
        }
    }

    @Test
    void aPartitionMovesUnderLoadWithoutLosingOrDuplicatingARecord() throws Exception {
        try (ClusterProcesses cluster = new ClusterProcesses(dir, Map.of(1, BROKER_CONFIG, 2, BROKER_CONFIG, 3,
                BROKER_CONFIG))) {
            List<Integer> before = createPartition(cluster);
            // A replica's broker knows the leader (another answers with the preferred one).
            await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class)
                    .until(() -> describeOn(cluster, before.get(0)).getLeaderNodeId() > 0);
            int leaving = describeOn(cluster, before.get(0)).getLeaderNodeId();
            String groupBefore = describeOn(cluster, before.get(0)).getGroupId();
            int staying = before.stream().filter(n -> n != leaving).findFirst().orElseThrow();
            int joining = List.of(1, 2, 3).stream().filter(n -> !before.contains(n)).findFirst().orElseThrow();
            List<Integer> target = List.of(staying, joining);

            String twice = target.get(0) + "," + target.get(0);
            Tidemark.Result refused = Tidemark.run(dir, "partitions", "reassign", "--bootstrap", cluster.bootstrap(),
                    "--topic", PARTITION.topic(), "--partition", "0", "--replicas", twice);
            assertEquals(1, refused.exitCode());
            assertTrue(refused.err().contains("node " + target.get(0) + " is listed twice in replicas [" + target.get(0)
                    + ", " + target.get(0) + "]; a broker holds at most one replica of a partition"), refused.err());

            List<String> values = new ArrayList<>();
            List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
            long ackedWhenMoveBegan;
            long ackedWhenMoveEnded;
            try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap())
                    .batchSizeBytes(1024).lingerMs(1).requestTimeoutMs(5000).build())) {
                for (int i = 0; i < RECORDS; i++) {
                    values.add("record " + i);
                    sends.add(producer.send(new ProducerRecord(PARTITION.topic(), 0, null,
                            values.get(i).getBytes(StandardCharsets.UTF_8))));
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> acknowledged(sends) >= 1000);
                ackedWhenMoveBegan = acknowledged(sends);
                Tidemark.Result moved = Tidemark.run(dir, "partitions", "reassign", "--bootstrap",
                        cluster.bootstrap(), "--topic", PARTITION.topic(), "--partition", "0", "--replicas",
                        target.get(0) + "," + target.get(1), "--timeout", "40s");
                ackedWhenMoveEnded = acknowledged(sends);
                assertEquals(0, moved.exitCode(), moved.err());
                assertEquals("moves-0 is now on replicas " + target + System.lineSeparator(), moved.out());
                producer.flush();
            }
            assertTrue(ackedWhenMoveBegan < RECORDS && ackedWhenMoveEnded > ackedWhenMoveBegan,
                    "records were acknowledged while the partition moved: " + ackedWhenMoveBegan + " before, "
                            + ackedWhenMoveEnded + " after");
            Set<String> acknowledged = PartitionChecker.acknowledged(values, sends);
            assertEquals(RECORDS, acknowledged.size(), "every send acknowledged through the move");
            assertEquals(RECORDS, PartitionChecker.check(cluster.bootstrap(), PARTITION, acknowledged).size());

            try (TidemarkAdmin admin = cluster.admin()) {
                assertEquals(target, describe(admin).getReplicaNodeIdsList());
                assertTrue(target.contains(describe(admin).getLeaderNodeId()), "a new replica leads");
            }
            for (int node : target) {
                await().atMost(Duration.ofSeconds(30)).ignoreException(TidemarkException.class)
                        .until(() -> describeOn(cluster, node).getLogEndOffset() == RECORDS);
            }
            try (TidemarkAdmin admin = cluster.admin()) {
                assertNotEquals(groupBefore, describe(admin).getGroupId(), "the partition moved to another group");
            }
            Path leftReplica = cluster.dataDir(leaving).resolve("raft").resolve(groupBefore);
            await("node " + leaving + " deleted its replica " + leftReplica
                    + " of the old group, which hosts nothing more").atMost(Duration.ofSeconds(30))
                    .until(() -> !Files.exists(leftReplica));
            assertEquals(List.of(), describeOn(cluster, leaving).getReplicaNodeIdsList().stream()
                    .filter(n -> n == leaving).toList(), "the broker left out knows it holds no replica");
            String gauge = "partition_log_end_offset_moves_0 ";
            assertTrue(cluster.metrics(joining).contains(gauge + RECORDS + ".0"), "the new replica's gauge");
            assertFalse(cluster.metrics(leaving).contains(gauge), "the replica that left has no gauge");

            Tidemark.Result described = Tidemark.run(dir, "topics", "describe", "--bootstrap", cluster.bootstrap(),
                    "--topic", PARTITION.topic());
            assertTrue(described.out().contains("replicas " + target), described.out());
            Tidemark.Result status = Tidemark.run(dir, "status", "--bootstrap", cluster.bootstrap());
            assertTrue(status.out().contains("moves-0  leader") && status.out().contains("replicas " + target),
                    status.out());
            assertFalse(status.out().contains("down"), status.out());

            Tidemark.Result grown = Tidemark.run(dir, "partitions", "reassign", "--bootstrap", cluster.bootstrap(),
                    "--topic", PARTITION.topic(), "--partition", "0", "--replicas",
                    target.get(0) + "," + target.get(1) + "," + leaving, "--timeout", "40s");
            assertEquals(0, grown.exitCode(), grown.err());
            try (TidemarkAdmin admin = cluster.admin()) {
                assertEquals(3, admin.describeTopics(List.of(PARTITION.topic())).get(0).getReplicationFactor(),
                        "the replication factor follows the replica count");
            }
            ReplicaCheck.assertReplicasAgree(dir, cluster.bootstrap());
        }
    }

    /**
     * The broker joining the partition's replicas is killed (SIGKILL) while the partition's 60 MB are being copied
     * into the new group, which then has no majority or no mover; restarted, the move goes on from where the copy
     * got to and completes, and every record, those sent before and those an idempotent producer sends through the
     * kill, is there once, on replicas that agree byte for byte.
     */
    @Test
    void aMoveCutOffByACrashOfTheJoiningBrokerMidCopyCompletesAfterItsRestart() throws Exception {
        try (ClusterProcesses cluster = new ClusterProcesses(dir, Map.of(1, BROKER_CONFIG, 2, BROKER_CONFIG, 3,
                BROKER_CONFIG))) {
            List<Integer> before = createPartition(cluster);
            int staying = before.get(0);
            int joining = List.of(1, 2, 3).stream().filter(n -> !before.contains(n)).findFirst().orElseThrow();
            List<Integer> target = List.of(staying, joining);

            List<String> values = new ArrayList<>();
            List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
            String padding = "x".repeat(RECORD_BYTES);
            try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap())
                    .lingerMs(5).requestTimeoutMs(5000).build())) {
                for (int i = 0; i < PRELOADED; i++) {
                    values.add("record " + i + " " + padding);
                    sends.add(producer.send(new ProducerRecord(PARTITION.topic(), 0, null,
                            values.get(i).getBytes(StandardCharsets.UTF_8))));
                }
                producer.flush();
                assertEquals(PRELOADED, acknowledged(sends), PartitionChecker.firstFailure(sends));

                CompletableFuture<List<Integer>> moved = CompletableFuture.supplyAsync(() -> {
                    try (TidemarkAdmin admin = cluster.admin(staying)) {
                        return admin.reassignPartition(PARTITION, target, 120_000);
                    }
                });
                await("the copy into node " + joining + " is under way").atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(20)).until(() -> copiedBytes(cluster.dataDir(joining))
                                >= KILL_AFTER_COPIED_BYTES || moved.isDone());
                assertFalse(moved.isDone(), "the move was over before the kill: copy more");
                cluster.kill(joining);
                long copiedAtTheKill = copiedBytes(cluster.dataDir(joining));
                for (int i = PRELOADED; i < PRELOADED + SENT_THROUGH_THE_KILL; i++) {
                    values.add("record " + i);
                    sends.add(producer.send(new ProducerRecord(PARTITION.topic(), 0, null,
                            values.get(i).getBytes(StandardCharsets.UTF_8))));
                }
                try (TidemarkAdmin admin = cluster.admin(staying)) {
                    assertEquals(before, describe(admin).getReplicaNodeIdsList(), "the move was cut off mid-copy ("
                            + copiedAtTheKill + " bytes copied): the partition is still on its replicas");
                }
                cluster.start(joining);
                assertEquals(target, moved.get(150, TimeUnit.SECONDS), "the move completed after the restart");
                producer.flush();
            }
            int total = PRELOADED + SENT_THROUGH_THE_KILL;
            Set<String> acknowledged = PartitionChecker.acknowledged(values, sends);
            assertEquals(total, acknowledged.size(), "every send acknowledged: "
                    + PartitionChecker.firstFailure(sends));
            assertEquals(total, PartitionChecker.check(cluster.bootstrap(), PARTITION, acknowledged).size());
            for (int node : target) {
                await().atMost(Duration.ofSeconds(30)).ignoreException(TidemarkException.class)
                        .until(() -> describeOn(cluster, node).getLogEndOffset() == total);
            }
            ReplicaCheck.assertReplicasAgree(dir, cluster.bootstrap());
        }
    }

    /** Creates the test's partition with two replicas; returns them. */
    private static List<Integer> createPartition(ClusterProcesses cluster) {
        try (TidemarkAdmin admin = cluster.admin()) {
            return admin.createTopic(PARTITION.topic(), 1, 2, Map.of()).getPartitions(0).getReplicaNodeIdsList();
        }
    }

    /** The bytes of the partition's files under a broker's data directory (its replicas in any group). */
    private static long copiedBytes(Path dataDir) throws IOException {
        try (Stream<Path> files = Files.walk(dataDir)) {
            return files.filter(f -> f.getParent().getFileName().toString().startsWith(PARTITION.topic() + "-0-")
                    && f.getFileName().toString().endsWith(".log")).mapToLong(f -> f.toFile().length()).sum();
        } catch (UncheckedIOException e) {
            return 0;
        }
    }

    private static long acknowledged(List<CompletableFuture<RecordMetadata>> sends) {
        return sends.stream().filter(f -> f.isDone() && !f.isCompletedExceptionally()).count();
    }
}
