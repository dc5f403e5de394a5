package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.log.file.DiskFaults;
import io.tidemark.proto.error.TidemarkException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One replica's disk fails under a producer's load ({@link DiskFaults} on that broker's data directory: a full disk,
 * failed fsyncs): the replica stops taking entries and says so, the partition stays available on the other two,
 * nothing acknowledged is lost, and the broker restarted once the disk is repaired recovers and agrees with the
 * others byte for byte. A slow disk stops nothing: its replica falls behind and catches up. Three cluster nodes in this JVM on 127.0.0.1.
 */
class DiskFaultIT {
    private static final DiskFaults FAULTS = DiskFaults.install();
    private static final TopicPartition PARTITION = new TopicPartition("orders", 0);
    private static final int BATCH = 200;
    private static final int ROUND = 2;
    private static final int KEYS = 10;

    @TempDir
    Path dir;
    private InJvmCluster cluster;

    @BeforeEach
    void startCluster() throws IOException {
        cluster = InJvmCluster.start(dir, 3, Map.of("raft.snapshot.interval.entries", "100",
                "retention.check.interval.ms", "500"));
    }

    @AfterEach
    void stopCluster() throws IOException {
        FAULTS.clear(dir);
        if (cluster != null) {
            cluster.close();
        }
    }

    private int leader() {
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap())
                .requestTimeoutMs(3000).build())) {
            return admin.describeTopics(List.of(PARTITION.topic())).get(0).getPartitions(0).getLeaderNodeId();
        }
    }

    /** Creates {@link #PARTITION}'s topic, three replicas, and waits for its leader. */
    private void createTopic(Map<String, String> config) {
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).build())) {
            admin.createTopic(PARTITION.topic(), 1, 3, config);
        }
        await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class).until(() -> leader() > 0);
    }

    private int stoppedReplicas(int node) {
        return (Integer) cluster.metrics(node).getGauges().get("replicas.disk.stopped").getValue();
    }

    /** Sends {@code count} records from {@code from} on and waits for every answer. */
    private static void send(TidemarkProducer producer, int from, int count, List<String> values,
                             List<CompletableFuture<RecordMetadata>> sends) {
        for (int i = from; i < from + count; i++) {
            values.add("record " + i);
            sends.add(producer.send(new ProducerRecord(PARTITION.topic(), PARTITION.partition(), null,
                    values.get(values.size() - 1).getBytes(StandardCharsets.UTF_8))));
        }
        producer.flush();
    }

    private void loseDiskUnderLoad(boolean leaderDisk, DiskFaults.Operation operation, String error)
            throws Exception {
        createTopic(Map.of());
        List<String> values = new ArrayList<>();
        List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
        int broken;
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap())
                .lingerMs(1).build())) {
            send(producer, 0, BATCH, values, sends);
            int leader = leader();
            broken = leaderDisk ? leader : leader % 3 + 1;
            FAULTS.fail(cluster.dataDir(broken), operation, error);
            // Small rounds: Raft entries enough for snapshots, whose fsyncs the partition logs wait for.
            for (int from = BATCH; from < 3 * BATCH; from += ROUND) {
                send(producer, from, ROUND, values, sends);
            }
        }
        Set<String> acknowledged = PartitionChecker.acknowledged(values, sends);
        assertEquals(values.size(), acknowledged.size(), "every send acknowledged while node " + broken
                + "'s disk failed; the first failure: " + PartitionChecker.firstFailure(sends));
        await("node " + broken + " says a disk error stopped its replica of " + PARTITION)
                .atMost(Duration.ofSeconds(60)).until(() -> stoppedReplicas(broken) > 0);
        Tidemark.Result verify = Tidemark.run(dir, "replicas", "verify", "--bootstrap", cluster.bootstrap(),
                "--topic", PARTITION.topic(), "--partition", Integer.toString(PARTITION.partition()));
        assertEquals(3, verify.exitCode(), "not checked:\n" + verify.out() + verify.err());
        assertTrue(verify.out().contains("not checked: node " + broken + ": NOT_AVAILABLE: the replica "),
                verify.out());
        assertTrue(verify.out().contains(" stopped on a disk error ("), verify.out());
        assertTrue(verify.out().contains(error + " ("), verify.out());
        PartitionChecker.check(cluster.bootstrap(), PARTITION, acknowledged);

        cluster.stop(broken);
        FAULTS.clear(cluster.dataDir(broken));
        cluster.start(broken);
        assertEquals(0, stoppedReplicas(broken));
        ReplicaCheck.assertReplicasAgree(dir, cluster.bootstrap());
        PartitionChecker.check(cluster.bootstrap(), PARTITION, acknowledged);
    }

    @Test
    void aFollowersSlowDiskSlowsNoAcknowledgementAndItsReplicaCatchesUp() throws Exception {
        createTopic(Map.of());
        List<String> values = new ArrayList<>();
        List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
        int slow;
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap())
                .lingerMs(1).build())) {
            send(producer, 0, BATCH, values, sends);
            slow = leader() % 3 + 1;
            FAULTS.slow(cluster.dataDir(slow), DiskFaults.Operation.WRITE, Duration.ofMillis(20));
            FAULTS.slow(cluster.dataDir(slow), DiskFaults.Operation.FSYNC, Duration.ofMillis(200));
            for (int from = BATCH; from < 3 * BATCH; from += ROUND) {
                send(producer, from, ROUND, values, sends);
            }
        }
        Set<String> acknowledged = PartitionChecker.acknowledged(values, sends);
        assertEquals(values.size(), acknowledged.size(), "every send acknowledged while node " + slow
                + "'s disk was slow; the first failure: " + PartitionChecker.firstFailure(sends));
        assertEquals(0, stoppedReplicas(slow), "a slow disk stops nothing");
        FAULTS.clear(cluster.dataDir(slow));
        ReplicaCheck.assertReplicasAgree(dir, cluster.bootstrap());
        PartitionChecker.check(cluster.bootstrap(), PARTITION, acknowledged);
    }

    /**
     * A crash in the middle of a compaction: the swap of a compacted segment on one replica stops after the segment
     * closed and before its compacted copy took its place (the rename of the copy fails, as at a crash there). That
     * replica stops; restarted, it holds the segment as before the swap, compacts again, and agrees with the others;
     * every key's latest acknowledged value is there.
     */
    @Test
    void aCompactionCutOffHalfWayThroughItsSwapLosesNothingAfterTheRestart() throws Exception {
        createTopic(Map.of("cleanup.policy", "compact", "segment.bytes", "1024"));
        int crashing = leader() % 3 + 1;
        Path staging = LogCompactor.stagingDir(partitionDir(crashing));
        FAULTS.fail(staging.resolve("00000000000000000000.log"), DiskFaults.Operation.RENAME, "Input/output error");
        Map<String, String> latest = new HashMap<>();
        List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap())
                .lingerMs(1).build())) {
            int[] next = {0};
            await("node " + crashing + "'s compaction failed half way and stopped its replica")
                    .atMost(Duration.ofSeconds(90)).until(() -> {
                        for (int i = 0; i < ROUND * 10; i++, next[0]++) {
                            String key = "key-" + next[0] % KEYS;
                            String value = "value " + next[0];
                            latest.put(key, value);
                            sends.add(producer.send(new ProducerRecord(PARTITION.topic(), PARTITION.partition(),
                                    key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8))));
                            if (i % ROUND == ROUND - 1) {
                                producer.flush();
                            }
                        }
                        return stoppedReplicas(crashing) > 0;
                    });
        }
        assertEquals(0, sends.stream().filter(CompletableFuture::isCompletedExceptionally).count(),
                "every send acknowledged; the first failure: " + PartitionChecker.firstFailure(sends));

        cluster.stop(crashing);
        FAULTS.clear(dir);
        cluster.start(crashing);
        ReplicaCheck.assertReplicasAgree(dir, cluster.bootstrap());
        assertEquals(latest, latestValues(), "each key's latest acknowledged value");
    }

    /**
     * The directory of {@link #PARTITION}'s log on {@code node}, once that broker created it: a topic is created, and
     * its partition has a leader, once a majority of its replicas started, and the third may start a little later.
     */
    private Path partitionDir(int node) {
        return await("node " + node + "'s directory of " + PARTITION).atMost(Duration.ofSeconds(60))
                .until(() -> findPartitionDir(node), Optional::isPresent).orElseThrow();
    }

    private Optional<Path> findPartitionDir(int node) throws IOException {
        try (Stream<Path> dirs = Files.find(cluster.dataDir(node).resolve("raft"), 4,
                (path, attributes) -> attributes.isDirectory()
                        && path.getFileName().toString().startsWith(PARTITION + "-")
                        && path.getParent().getFileName().toString().equals("partitions"))) {
            return dirs.findFirst();
        }
    }

    /** The partition read from its start to its end: each key's last value. */
    private Map<String, String> latestValues() {
        long end;
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).build())) {
            end = admin.listOffsets(PARTITION, OffsetSpec.latest()).offset();
        }
        Map<String, String> values = new HashMap<>();
        try (TidemarkConsumer consumer = new TidemarkConsumer(ConsumerConfig.builder(cluster.bootstrap())
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).build())) {
            consumer.assign(List.of(PARTITION));
            long[] position = {0};
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                for (ConsumerRecord record : consumer.poll(Duration.ofMillis(200))) {
                    values.put(new String(record.key(), StandardCharsets.UTF_8),
                            new String(record.value(), StandardCharsets.UTF_8));
                    position[0] = record.offset() + 1;
                }
                return position[0] >= end;
            });
        }
        return values;
    }

    @Test
    void aFollowersFullDiskStopsItsReplicaAndARestartAfterTheRepairRecoversIt() throws Exception {
        loseDiskUnderLoad(false, DiskFaults.Operation.WRITE, "No space left on device");
    }

    @Test
    void aLeadersFailingFsyncsMoveTheLeadershipAndLoseNothingAcknowledged() throws Exception {
        loseDiskUnderLoad(true, DiskFaults.Operation.FSYNC, "Input/output error");
    }
}
