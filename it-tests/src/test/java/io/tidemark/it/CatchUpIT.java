package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.DurableFiles;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.file.DiskFaults;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.PartitionDescription;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replica that needs Raft entries its leader purged after taking snapshots (a replica added by a reassignment,
 * or one whose Raft storage was lost) catches up by copying the leader's partition log (segment copy, on Ratis'
 * snapshot notification), ends up with the same batches byte for byte, and can then lead and serve everything.
 * Three cluster nodes in this JVM on 127.0.0.1.
 */
class CatchUpIT {
    private static final TopicPartition PARTITION = new TopicPartition("orders", 0);
    private static final int PRODUCERS = 8;
    private static final int RECORDS_PER_PRODUCER = 170;
    /** Rounds of PRODUCERS x RECORDS_PER_PRODUCER records produced at most until the leader purges. */
    private static final int MAX_FILL_ROUNDS = 10;
    private static final String PADDING = "x".repeat(2000);

    private static final DiskFaults FAULTS = DiskFaults.install();

    /** Kept when a test fails: the brokers' logs are in it. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;
    /** Operations failed by faults before the test. */
    private long failedBefore;
    private InJvmCluster cluster;
    /** The partition's group, as describe named it last. */
    private String groupId;

    /** Snapshots every 100 Raft entries and 1 MiB Raft log segments, so the leader purges early. */
    @BeforeEach
    void startCluster() throws IOException {
        failedBefore = FAULTS.failedOperations();
        cluster = InJvmCluster.start(dir, 3, Map.of("raft.snapshot.interval.entries", "100",
                "raft.log.segment.bytes", "1048576"));
    }

    @AfterEach
    void stopCluster() throws IOException {
        FAULTS.clear(dir);
        if (cluster != null) {
            cluster.close();
        }
    }

    private String bootstrap() {
        return cluster.bootstrap();
    }

    /** The partition as the broker {@code node} sees its own replica. */
    private PartitionDescription describeOn(int node) {
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.clientAddress(node))
                .requestTimeoutMs(3000).build())) {
            return admin.describeTopics(List.of(PARTITION.topic())).get(0).getPartitions(0);
        }
    }

    /**
     * The directory of the partition's group on {@code node}: the group describe names (read once the group is the
     * one the test checks, since the files are read after the cluster stopped).
     */
    private Path groupDir(int node) {
        if (groupId == null) {
            groupId = describe().getGroupId();
        }
        return cluster.dataDir(node).resolve("raft").resolve(groupId);
    }

    /** Whether the node's Raft log of the partition still holds index 0. */
    private boolean raftLogStartsAtZero(int node) throws IOException {
        return InJvmCluster.raftLogStartsAtZero(groupDir(node));
    }

    /**
     * Creates the topic with {@code replicationFactor} replicas and acknowledges records, a round at a time, until its
     * leader took a snapshot and began purging its Raft log (the purge itself may come a moment later). How many Raft
     * entries a round makes depends on how many of its produce requests group commit puts into one entry.
     */
    private Set<String> createAndFill(int replicationFactor) throws IOException {
        groupId = null;
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            admin.createTopic(PARTITION.topic(), 1, replicationFactor, Map.of());
            await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class)
                    .until(() -> admin.describeTopics(List.of(PARTITION.topic())).get(0).getPartitions(0)
                            .getLeaderNodeId() > 0);
        }
        List<String> values = new ArrayList<>();
        List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
        for (int round = 1; raftLogStartsAtZero(describe().getLeaderNodeId()); round++) {
            assertTrue(round <= MAX_FILL_ROUNDS, "the leader's Raft log still starts at index 0 after "
                    + MAX_FILL_ROUNDS + " rounds of " + PRODUCERS * RECORDS_PER_PRODUCER + " records");
            produce(values, sends);
        }
        Set<String> acknowledged = PartitionChecker.acknowledged(values, sends);
        assertEquals(values.size(), acknowledged.size());
        return acknowledged;
    }

    private PartitionDescription describe() {
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            return admin.describeTopics(List.of(PARTITION.topic())).get(0).getPartitions(0);
        }
    }

    /**
     * A partition's replicas are its group's, so adding a replica moves the partition into a group of the new replica
     * list, which copies the leader's log through its own Raft log (PartitionMove) rather than by a snapshot install.
     */
    @Test
    void aReplicaAddedAfterThePurgeCopiesTheLeadersLogAndCanLeadAfterwards() throws Exception {
        Set<String> acknowledged = createAndFill(2);
        List<Integer> before = describe().getReplicaNodeIdsList();
        int leader = describe().getLeaderNodeId();
        await("the leader purged the start of its Raft log").atMost(Duration.ofSeconds(60))
                .until(() -> !raftLogStartsAtZero(leader));
        int added = List.of(1, 2, 3).stream().filter(n -> !before.contains(n)).findFirst().orElseThrow();
        List<Integer> after = List.of(before.get(0), before.get(1), added);
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            assertEquals(after, admin.reassignPartition(PARTITION, after, 60_000));
        }
        assertCaughtUpLeadsAndMatches(added, leader, after, acknowledged, false);
    }

    /**
     * A follower that lost its Raft storage, with leadership moved at once to the other healthy replica, which finds
     * it empty and asks it to install a snapshot.
     */
    @Test
    void aReplicaThatLostItsRaftStorageCopiesTheLeadersLogAndCanLeadAfterwards() throws Exception {
        Wiped wiped = moveLeadershipToTheOther(wipeAFollower(groupDir -> { }));
        assertCaughtUpLeadsAndMatches(wiped.node(), wiped.leader(), List.of(1, 2, 3), wiped.acknowledged(), true);
    }

    /**
     * The same without a transfer: the leader still believes the follower holds what it had matched, but the follower
     * answers the append after it INCONSISTENCY naming index 0, and Ratis goes below its belief for the refusal of an
     * append that started right after it ({@code LogAppenderBase.getNextIndexForInconsistency}): the same leader asks
     * it to install a snapshot.
     */
    @Test
    void aReplicaThatLostItsRaftStorageCatchesUpFromTheSameLeader() throws Exception {
        Wiped wiped = wipeAFollower(groupDir -> { });
        Set<String> acknowledged = sendMore(wiped.acknowledged(), "after the wipe", 10);
        long end = describeOn(wiped.leader()).getLogEndOffset();
        await("replica " + wiped.node() + " caught up").atMost(Duration.ofSeconds(60))
                .ignoreException(TidemarkException.class)
                .until(() -> describeOn(wiped.node()).getLogEndOffset() == end);
        assertEquals(wiped.leader(), describe().getLeaderNodeId(), "the leader that saw it hold everything");
        assertCaughtUpLeadsAndMatches(wiped.node(), wiped.leader(), List.of(1, 2, 3), acknowledged, true);
    }

    /** A follower that lost its Raft storage, a replica it will copy from, and what was acknowledged before. */
    private record Wiped(int node, int leader, Set<String> acknowledged) {
    }

    /**
     * Fills the partition until its leader purged the start of its Raft log, stops a follower, deletes its group's
     * directory, runs {@code beforeRestart} on it, and restarts it; the leader is still the one that saw it hold
     * everything.
     */
    private Wiped wipeAFollower(Consumer<Path> beforeRestart) throws Exception {
        Set<String> acknowledged = createAndFill(3);
        int leader = describe().getLeaderNodeId();
        await("the leader purged the start of its Raft log").atMost(Duration.ofSeconds(60))
                .until(() -> !raftLogStartsAtZero(leader));
        int wiped = leader % 3 + 1;
        cluster.stop(wiped);
        DurableFiles.deleteTree(groupDir(wiped));
        beforeRestart.accept(groupDir(wiped));
        cluster.start(wiped);
        await().atMost(Duration.ofSeconds(30)).ignoreException(TidemarkException.class)
                .until(() -> describeOn(wiped).getLogEndOffset() == 0);
        return new Wiped(wiped, leader, acknowledged);
    }

    /** Moves leadership to the healthy replica that does not lead, which then asks the wiped one to install. */
    private Wiped moveLeadershipToTheOther(Wiped wiped) {
        int other = List.of(1, 2, 3).stream().filter(n -> n != wiped.node() && n != wiped.leader()).findFirst()
                .orElseThrow();
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            assertEquals(other, admin.transferLeadership(PARTITION, other, 10_000).getLeaderNodeId());
        }
        return new Wiped(wiped.node(), other, wiped.acknowledged());
    }

    /**
     * A crash in the middle of a snapshot install: the copy is whole and committed (its manifest written), the live
     * logs are deleted, and the rename of the copy into their place fails, as at a crash there. The broker restarted
     * finishes the install when it opens the group, and the replica catches up, leads and matches byte for byte.
     */
    @Test
    void aSnapshotInstallCutOffAfterItsCommitPointIsFinishedAtTheRestart() throws Exception {
        Wiped wiped = moveLeadershipToTheOther(wipeAFollower(groupDir -> FAULTS.failExactly(
                installDir(groupDir).resolve("partitions"), DiskFaults.Operation.RENAME, "Input/output error")));
        Path staging = installDir(groupDir(wiped.node()));
        await("the install committed and its rename failed").atMost(Duration.ofSeconds(60))
                .until(() -> Files.exists(staging.resolve("installed")) && FAULTS.failedOperations() > failedBefore);
        cluster.stop(wiped.node());
        FAULTS.clear(dir);
        cluster.start(wiped.node());
        assertFalse(Files.exists(staging), "the restart finished the install");
        assertCaughtUpLeadsAndMatches(wiped.node(), wiped.leader(), List.of(1, 2, 3), wiped.acknowledged(),
                true);
    }

    /** Where a replica stages a snapshot install in its group's directory ({@code StagedInstall}). */
    private static Path installDir(Path groupDir) {
        return groupDir.resolve("sm").resolve("install");
    }

    /**
     * Sends {@code count} records "PREFIX #i" with one producer; returns {@code before} and them, once every one is
     * acknowledged.
     */
    private Set<String> sendMore(Set<String> before, String prefix, int count) {
        List<String> values = new ArrayList<>();
        List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).build())) {
            for (int i = 0; i < count; i++) {
                values.add(prefix + " #" + i);
                sends.add(producer.send(new ProducerRecord(PARTITION.topic(), 0, null,
                        values.get(i).getBytes(StandardCharsets.UTF_8))));
            }
            producer.flush();
        }
        Set<String> all = new HashSet<>(before);
        all.addAll(PartitionChecker.acknowledged(values, sends));
        assertEquals(before.size() + count, all.size(), "every record acknowledged: "
                + PartitionChecker.firstFailure(sends));
        return all;
    }

    /**
     * The replica {@code caughtUp} reaches the log of {@code source} (by a snapshot install when
     * {@code bySnapshot}: its Raft log does not start at 0), leads, serves every record with more produced after, and
     * holds the same batches as every other replica, byte for byte.
     */
    private void assertCaughtUpLeadsAndMatches(int caughtUp, int source, List<Integer> replicas,
                                               Set<String> acknowledged, boolean bySnapshot) throws Exception {
        groupId = describe().getGroupId();
        PartitionDescription onSource = describeOn(source);
        await("replica " + caughtUp + " caught up").atMost(Duration.ofSeconds(60))
                .ignoreException(TidemarkException.class)
                .until(() -> describeOn(caughtUp).getLogEndOffset() == onSource.getLogEndOffset());
        assertEquals(onSource.getLogStartOffset(), describeOn(caughtUp).getLogStartOffset());
        if (bySnapshot) {
            assertTrue(!raftLogStartsAtZero(caughtUp), "the replica installed a snapshot: its Raft log starts after "
                    + "it");
        }

        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            assertEquals(caughtUp, admin.transferLeadership(PARTITION, caughtUp, 10_000).getLeaderNodeId());
        }
        Set<String> all = sendMore(acknowledged, "after the copy", 20);
        assertEquals(all.size(), PartitionChecker.check(bootstrap(), PARTITION, all).size(),
                "the replica that caught up leads and serves every record");

        long end = describeOn(caughtUp).getLogEndOffset();
        await("every replica applied the last records").atMost(Duration.ofSeconds(30))
                .ignoreException(TidemarkException.class)
                .until(() -> replicas.stream().allMatch(node -> describeOn(node).getLogEndOffset() == end));
        cluster.close();
        List<ByteBuffer> sourceBatches = batches(source);
        assertEquals(end, RecordBatchFormat.lastOffset(sourceBatches.get(sourceBatches.size() - 1), 0) + 1);
        for (int node : replicas) {
            assertEquals(sourceBatches, batches(node), "replica " + node + " holds the same batches, offsets and "
                    + "ReceiveTimes, byte for byte");
        }
    }

    /** One round: each producer sends its next RECORDS_PER_PRODUCER records, each value unique across rounds. */
    private void produce(List<String> values, List<CompletableFuture<RecordMetadata>> sends) {
        List<TidemarkProducer> producers = new ArrayList<>();
        try {
            for (int p = 0; p < PRODUCERS; p++) {
                producers.add(new TidemarkProducer(ProducerConfig.builder(bootstrap()).batchSizeBytes(1).lingerMs(0)
                        .build()));
            }
            int first = values.size() / PRODUCERS;
            for (int i = first; i < first + RECORDS_PER_PRODUCER; i++) {
                for (int p = 0; p < PRODUCERS; p++) {
                    String value = "producer " + p + " #" + i + " " + PADDING;
                    values.add(value);
                    sends.add(producers.get(p).send(new ProducerRecord(PARTITION.topic(), 0, null,
                            value.getBytes(StandardCharsets.UTF_8))));
                }
            }
            producers.forEach(TidemarkProducer::flush);
        } finally {
            producers.forEach(TidemarkProducer::close);
        }
    }

    /** The directory of the partition's log in its group's state machine directory: TOPIC-PARTITION-TOPICID. */
    private Path partitionDir(int node) throws IOException {
        String prefix = PARTITION.topic() + "-" + PARTITION.partition() + "-";
        try (Stream<Path> dirs = Files.list(groupDir(node).resolve("sm").resolve("partitions"))) {
            List<Path> found = dirs.filter(dir -> dir.getFileName().toString().startsWith(prefix)).toList();
            assertEquals(1, found.size(), "one directory of the partition on node " + node + ": " + found);
            return found.get(0);
        }
    }

    /** Every batch of the node's partition log, read from its files. */
    private List<ByteBuffer> batches(int node) throws IOException {
        List<ByteBuffer> batches = new ArrayList<>();
        try (PartitionLog log = PartitionLog.open(partitionDir(node),
                TopicConfig.parse(Map.of()), Clock.systemUTC().millis())) {
            for (long offset = log.logStartOffset(); offset < log.logEndOffset(); ) {
                ByteBuffer batch = log.read(offset, 1).batches();
                batches.add(batch);
                offset = RecordBatchFormat.lastOffset(batch, 0) + 1;
            }
        }
        return batches;
    }
}
