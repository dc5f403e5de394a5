package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.core.log.DurableFiles;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.replication.raft.RaftGroups;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The metadata group takes snapshots and purges its log behind them; a broker restarted after the purge comes back with
 * every topic, from its own snapshot, or from the leader's when it lost its metadata storage. Three cluster nodes in
 * this JVM on 127.0.0.1.
 */
class MetadataSnapshotIT {
    /**
     * Snapshots every 100 entries and Raft log segments of 1 MiB (the least allowed): the metadata log is purged once a
     * segment is full, which alters of a topic of {@value #WIDE_PARTITIONS} partitions (each carries the topic's
     * assignment, about 30 bytes a partition) reach in a few hundred entries.
     */
    private static final Map<String, String> SETTINGS = Map.of("raft.snapshot.interval.entries", "100",
            "raft.log.segment.bytes", "1048576");
    private static final int WIDE_PARTITIONS = 300;
    private static final int MAX_ALTERS = 1_000;
    private static final int RESTARTED = 3;
    private static final Duration BACK_MAX = Duration.ofSeconds(90);

    @TempDir
    Path dir;
    private InJvmCluster cluster;
    /** Every topic as node 1 describes it before the restart. */
    private Map<String, String> before;

    @AfterEach
    void stopCluster() throws IOException {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** An admin client that asks only broker {@code node}: its own view of the topics. */
    private TidemarkAdmin admin(int node) {
        return new TidemarkAdmin(AdminConfig.builder(cluster.clientAddress(node)).build());
    }

    private Path metadataDir(int node) {
        return cluster.dataDir(node).resolve("raft").resolve(RaftGroups.METADATA.getUuid().toString());
    }

    /**
     * kept (3 partitions), wide ({@value #WIDE_PARTITIONS} partitions, one replica each), recreated (deleted and
     * created again: another id) and gone (deleted); then wide's retention altered until every broker purged the
     * start of its metadata log.
     */
    @BeforeEach
    void purgeTheMetadataLog() throws IOException {
        cluster = InJvmCluster.start(dir, 3, SETTINGS);
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).build())) {
            admin.createTopic("kept", 3, 3, Map.of());
            admin.createTopic("wide", WIDE_PARTITIONS, 1, Map.of());
            admin.createTopic("recreated", 1, 3, Map.of());
            admin.deleteTopic("recreated");
            admin.createTopic("recreated", 1, 3, Map.of("retention.ms", "60000"));
            admin.createTopic("gone", 1, 3, Map.of());
            admin.deleteTopic("gone");
            int alters = 0;
            while (alters < MAX_ALTERS && List.of(1, 2, 3).stream().anyMatch(this::metadataLogStartsAtZero)) {
                admin.alterTopicConfig("wide", Map.of("retention.ms", Long.toString(3_600_000L + alters)), List.of());
                alters++;
            }
            assertTrue(alters < MAX_ALTERS, "every broker purged its metadata log within " + MAX_ALTERS + " alters");
        }
        before = topicsOn(1);
        assertEquals(List.of("kept", "recreated", "wide"), List.copyOf(before.keySet()));
    }

    private boolean metadataLogStartsAtZero(int node) {
        try {
            return InJvmCluster.raftLogStartsAtZero(metadataDir(node));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every topic as {@code node} describes it: its id, overrides and each partition's replicas and group. */
    private Map<String, String> topicsOn(int node) {
        try (TidemarkAdmin admin = admin(node)) {
            Map<String, String> topics = new TreeMap<>();
            for (TopicDescription topic : admin.describeTopics(List.of())) {
                StringBuilder described = new StringBuilder(TopicIds.fromBytes(topic.getTopicId()).toString());
                topic.getOverriddenKeysList().stream().sorted().forEach(key -> described.append(' ').append(key)
                        .append('=').append(topic.getConfigsOrThrow(key)));
                for (PartitionDescription partition : topic.getPartitionsList()) {
                    described.append(' ').append(partition.getPartition()).append(partition.getReplicaNodeIdsList())
                            .append(partition.getGroupId());
                }
                topics.put(topic.getName(), described.toString());
            }
            return topics;
        }
    }

    /** The restarted broker serves every topic as before, and its partitions take records. */
    private void assertBackWithEveryTopic() throws Exception {
        await("node " + RESTARTED + " has every topic").atMost(BACK_MAX).ignoreException(TidemarkException.class)
                .until(() -> topicsOn(RESTARTED).equals(before));
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(
                cluster.clientAddress(RESTARTED)).build())) {
            for (String topic : List.of("kept", "recreated")) {
                producer.send(new ProducerRecord(topic, 0, null, "after".getBytes(StandardCharsets.UTF_8)))
                        .get(60, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aBrokerRestartedAfterThePurgeComesBackWithEveryTopicFromItsSnapshot() throws Exception {
        cluster.stop(RESTARTED);
        cluster.start(RESTARTED);

        assertBackWithEveryTopic();
        assertFalse(metadataLogStartsAtZero(RESTARTED), "restored from the snapshot, not replayed from entry 0");
    }

    /**
     * A broker that lost its metadata storage gets the leader's snapshot: the whole cluster restarts so that the
     * leader is new, since Ratis' leader keeps what a follower had matched and would not notice the loss.
     */
    @Test
    void aBrokerThatLostItsMetadataStorageComesBackWithEveryTopicFromTheLeadersSnapshot() throws Exception {
        cluster.close();
        DurableFiles.deleteTree(metadataDir(RESTARTED));
        for (int node = 1; node <= 3; node++) {
            cluster.start(node);
        }

        assertBackWithEveryTopic();
        assertFalse(metadataLogStartsAtZero(RESTARTED), "installed the leader's snapshot");
    }
}
