package io.tidemark.it;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
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
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.ListOffsetsRequest;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.PartitionRef;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TransferLeadershipResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Three cluster nodes in this JVM on 127.0.0.1, every partition a Raft group of three replicas. */
class ReplicatedClusterIT {
    /** Snapshots every 100 Raft entries, so restarts go through the snapshot-then-replay path. */
    private static final Map<String, String> SNAPSHOTS_OFTEN = Map.of("raft.snapshot.interval.entries", "100");

    @TempDir
    Path dir;
    private InJvmCluster cluster;

    private void startCluster(Map<String, String> brokerSettings) throws IOException {
        cluster = InJvmCluster.start(dir, 3, brokerSettings);
    }

    /** Every test ends with every partition's replicas compared, then stops the cluster. */
    @AfterEach
    void stopCluster() throws IOException {
        if (cluster != null) {
            try {
                ReplicaCheck.assertReplicasAgree(dir, bootstrap());
            } finally {
                cluster.close();
            }
        }
    }

    private String bootstrap() {
        return cluster.bootstrap();
    }

    @Test
    void produceAndConsumeThroughAnyBrokerAndSurviveALeaderCrash() throws Exception {
        startCluster(SNAPSHOTS_OFTEN);
        UUID createdId;
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            TidemarkException tooLarge = assertThrows(TidemarkException.class,
                    () -> admin.createTopic("huge", 1, 3, Map.of("max.batch.bytes", "2097152")));
            assertEquals(ErrorCode.INVALID_CONFIG, tooLarge.code());
            assertEquals("max.batch.bytes 2097152 is above the largest batch a Raft entry holds on this broker: "
                    + "2092991 bytes (raft.log.write.buffer.bytes less 4161); lower it or raise "
                    + "raft.log.write.buffer.bytes on every broker", tooLarge.getMessage());
            TopicDescription created = admin.createTopic("orders", 3, 3, Map.of());
            assertEquals(3, created.getReplicationFactor());
            createdId = TopicIds.fromBytes(created.getTopicId());
            await().atMost(Duration.ofSeconds(60)).until(() -> admin.describeTopics(List.of("orders")).get(0)
                    .getPartitionsList().stream().allMatch(p -> p.getLeaderNodeId() > 0));
        }
        List<RecordMetadata> acknowledged = new ArrayList<>();
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).build())) {
            acknowledged.addAll(send(producer, 0, 300));
            int leader = leaderOf(0);
            cluster.stop(leader);
            acknowledged.addAll(send(producer, 300, 300));
            cluster.start(leader);
            acknowledged.addAll(send(producer, 600, 300));
        }
        assertEquals(900, acknowledged.size());
        List<ConsumerRecord> records = new ArrayList<>();
        try (TidemarkConsumer consumer = new TidemarkConsumer(ConsumerConfig.builder(bootstrap())
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).build())) {
            consumer.assign(List.of(new TopicPartition("orders", 0)));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                records.addAll(consumer.poll(Duration.ofMillis(200)));
                return records.size() >= 900;
            });
        }
        assertEquals(900, records.size(), "every acknowledged record, exactly once");
        assertEquals(Map.of(1, createdId, 2, createdId, 3, createdId), topicIdOnEachBroker("orders"),
                "every broker applied the id the creating broker chose, the restarted one too");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            int leader = leaderOf(0);
            assertTrue(leader > 0, "orders-0 has a leader, not " + leader);
            assertEquals("NOT_LEADER: node " + leader + " leads orders-0, not this broker",
                    followerAnswer(leader % 3 + 1), "clients read a partition on its leader only");
        });
        for (int i = 0; i < records.size(); i++) {
            ConsumerRecord r = records.get(i);
            assertEquals(i, r.offset(), "offsets are contiguous");
            assertEquals("record " + i, new String(r.value(), StandardCharsets.UTF_8));
            if (i > 0) {
                assertTrue(r.receiveTimeMs() >= records.get(i - 1).receiveTimeMs(), "ReceiveTime never decreases");
            }
        }
    }

    @Test
    void rollingRestartUnderLoadLosesNothing() throws Exception {
        startCluster(SNAPSHOTS_OFTEN);
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            admin.createTopic("orders", 1, 3, Map.of());
            await().atMost(Duration.ofSeconds(60)).until(() -> admin.describeTopics(List.of("orders")).get(0)
                    .getPartitions(0).getLeaderNodeId() > 0);
        }
        List<String> values = new ArrayList<>();
        List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).lingerMs(0)
                .build())) {
            for (int round = 0; round < 4; round++) {
                for (int i = 0; i < 150; i++) {
                    values.add("round " + round + " #" + i);
                    sends.add(producer.send(new ProducerRecord("orders", 0, null,
                            values.get(values.size() - 1).getBytes(StandardCharsets.UTF_8))));
                }
                if (round < 3) {
                    int node = round + 1;
                    cluster.stop(node);
                    cluster.start(node);
                }
            }
            producer.flush();
        }
        java.util.Set<String> acknowledged = PartitionChecker.acknowledged(values, sends);
        assertEquals(values.size(), acknowledged.size(), "every send acknowledged through the "
                + "rolling restart; first failure: " + PartitionChecker.firstFailure(sends));
        PartitionChecker.check(bootstrap(), new TopicPartition("orders", 0), acknowledged);
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(dir)) {
            assertTrue(files.anyMatch(f -> f.getFileName().toString().matches("snapshot\\.\\d+_\\d+")),
                    "the partitions took snapshots, so the restarts replayed from them");
        }
    }

    @Test
    void plannedTransfersUnderLoadLoseNothing() throws Exception {
        // The balancer would move leadership back to the preferred replica while the test moves it around.
        Map<String, String> balancingOff = new HashMap<>(SNAPSHOTS_OFTEN);
        balancingOff.put("leader.balance.enabled", "0");
        startCluster(balancingOff);
        List<String> values = new ArrayList<>();
        List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build());
             TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).lingerMs(1).build())) {
            admin.createTopic("orders", 1, 3, Map.of());
            await().atMost(Duration.ofSeconds(60)).until(() -> leaderOf(0) > 0);
            for (int target : new int[] {1, 2, 3, 1, 2, 3}) {
                for (int i = 0; i < 200; i++) {
                    values.add("to " + target + " #" + values.size());
                    sends.add(producer.send(new ProducerRecord("orders", 0, null,
                            values.get(values.size() - 1).getBytes(StandardCharsets.UTF_8))));
                }
                if (leaderOf(0) != target) {
                    TransferLeadershipResponse moved = admin.transferLeadership(new TopicPartition("orders", 0),
                            target, 10_000);
                    assertEquals(target, moved.getLeaderNodeId());
                    assertEquals(partitionsOfGroup(admin, groupOf(admin, "orders", 0)), moved.getMovedList(),
                            "every partition of orders-0's group moved with it, and only those");
                }
            }
            producer.flush();
        }
        java.util.Set<String> acknowledged = PartitionChecker.acknowledged(values, sends);
        assertEquals(values.size(), acknowledged.size(), "every send acknowledged through the "
                + "transfers; first failure: " + PartitionChecker.firstFailure(sends));
        PartitionChecker.check(bootstrap(), new TopicPartition("orders", 0), acknowledged);

        // Here, not in LeaderBalanceIT: a balancer moving the group back meanwhile made a move fail there.
        Tidemark.Result transfers = Tidemark.run(dir, "perf", "transfer", "--bootstrap", bootstrap(),
                "--transfers", "2", "--warmup", "0", "--rate", "200");
        assertEquals(0, transfers.exitCode(), transfers.out() + transfers.err());
        List<String> lines = transfers.out().lines().toList();
        assertTrue(lines.get(0).startsWith("transfer 1: to node "), transfers.out());
        assertTrue(lines.get(1).startsWith("transfer 2: to node "), transfers.out());
        assertTrue(lines.get(2).startsWith("2 transfers at 200 records/s: pause p50 "), transfers.out());
        assertTrue(lines.get(2).endsWith(" 0 failed)"), transfers.out());

        // The topic holds the records above: the end-to-end reader starts at its end and reads exactly this run's.
        Tidemark.Result endToEnd = Tidemark.run(dir, "perf", "end-to-end", "--bootstrap", bootstrap(),
                "--topic", "orders", "--rate", "200", "--duration", "2s", "--warmup", "0s", "--record-size", "100");
        assertEquals(0, endToEnd.exitCode(), endToEnd.out() + endToEnd.err());
        List<String> run = endToEnd.out().lines().toList();
        assertEquals("reading orders from its end (partitions: 1); sending 400 records at 200/s", run.get(0));
        assertTrue(run.get(run.size() - 1).startsWith("end-to-end: sent 400, failed 0, read distinct 400, "
                + "duplicates 0, measured 400, latency ms p50 "), endToEnd.out());
    }

    private static String groupOf(TidemarkAdmin admin, String topic, int partition) {
        return admin.describeTopics(List.of(topic)).get(0).getPartitions(partition).getGroupId();
    }

    /** The partitions describe places in {@code group} (the internal topics' too), by topic and partition. */
    private static List<PartitionRef> partitionsOfGroup(TidemarkAdmin admin, String group) {
        List<PartitionRef> partitions = new ArrayList<>();
        for (TopicDescription topic : admin.describeTopics(List.of("orders", GroupOffsetStore.TOPIC,
                MirrorStateFormat.TOPIC))) {
            for (PartitionDescription partition : topic.getPartitionsList()) {
                if (partition.getGroupId().equals(group)) {
                    partitions.add(PartitionRef.newBuilder().setTopic(topic.getName())
                            .setPartition(partition.getPartition()).build());
                }
            }
        }
        partitions.sort(java.util.Comparator.comparing(PartitionRef::getTopic)
                .thenComparingInt(PartitionRef::getPartition));
        return partitions;
    }

    /** The id each broker gives {@code topic}, by node id. */
    private Map<Integer, UUID> topicIdOnEachBroker(String topic) {
        Map<Integer, UUID> ids = new HashMap<>();
        for (int node = 1; node <= 3; node++) {
            try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(cluster.clientAddress(node)).build())) {
                ids.put(node, TopicIds.fromBytes(admin.describeTopics(List.of(topic)).get(0).getTopicId()));
            }
        }
        return ids;
    }

    private String followerAnswer(int follower) throws InterruptedException {
        ManagedChannel channel = NettyChannelBuilder.forTarget(cluster.clientAddress(follower)).usePlaintext().build();
        try {
            BrokerServiceGrpc.BrokerServiceBlockingStub stub = BrokerServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS);
            TidemarkException listOffsets = GrpcErrors.fromThrowable(assertThrows(StatusRuntimeException.class,
                    () -> stub.listOffsets(ListOffsetsRequest.newBuilder().setTopic("orders").setPartition(0)
                            .setLatest(true).build())));
            TidemarkException fetch = GrpcErrors.fromThrowable(assertThrows(StatusRuntimeException.class,
                    () -> stub.fetch(FetchRequest.newBuilder().setTopic("orders").setPartition(0).setOffset(0)
                            .setMaxBytes(1024).build())));
            assertEquals(listOffsets.toString(), fetch.toString());
            return listOffsets.toString();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * Retention deletes only what a snapshot of the group covers (a restart replays the rest from the Raft log): with
     * snapshots rare, the segments it holds back make each replica take one, and the next pass deletes them; a
     * restart of every broker then keeps the log start, the end and the records between them.
     */
    @Test
    void retentionAsksForTheSnapshotItNeedsAndARestartKeepsWhatItLeft() throws Exception {
        startCluster(Map.of("retention.check.interval.ms", "100"));
        TopicPartition orders = new TopicPartition("orders", 0);
        List<Long> logStarts = new ArrayList<>();
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            admin.createTopic("orders", 1, 3, Map.of("segment.bytes", "1000"));
            await().atMost(Duration.ofSeconds(60)).until(() -> leaderOf(0) > 0);
            try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).build())) {
                for (int from = 0; from < 300; from += 10) {
                    send(producer, from, 10);
                }
            }
            admin.alterTopicConfig("orders", Map.of("retention.bytes", "0"), List.of());
            await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class).until(() -> {
                logStarts.add(admin.listOffsets(orders, OffsetSpec.earliest()).logStartOffset());
                return logStarts.get(logStarts.size() - 1) > 200;
            });
        }
        long logStart = logStarts.get(logStarts.size() - 1);
        for (int node = 1; node <= 3; node++) {
            cluster.stop(node);
        }
        for (int node = 1; node <= 3; node++) {
            cluster.start(node);
        }
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            await("the leader after the restart starts its log where retention left it")
                    .atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class)
                    .until(() -> admin.listOffsets(orders, OffsetSpec.earliest()).logStartOffset() == logStart);
        }
        List<ConsumerRecord> records = new ArrayList<>();
        try (TidemarkConsumer consumer = new TidemarkConsumer(ConsumerConfig.builder(bootstrap()).build())) {
            consumer.assign(List.of(orders));
            consumer.seek(orders, logStart);
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                records.addAll(consumer.poll(Duration.ofMillis(200)));
                return records.size() >= 300 - logStart;
            });
        }
        assertEquals(300 - logStart, records.size(), "the records from the log start on, once each");
        for (int i = 0; i < records.size(); i++) {
            assertEquals(logStart + i, records.get(i).offset());
            assertEquals("record " + (logStart + i), new String(records.get(i).value(), StandardCharsets.UTF_8));
        }
    }

    private int leaderOf(int partition) {
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap()).build())) {
            return admin.describeTopics(List.of("orders")).get(0).getPartitions(partition).getLeaderNodeId();
        }
    }

    private static List<RecordMetadata> send(TidemarkProducer producer, int from, int count) {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            futures.add(producer.send(new ProducerRecord("orders", 0, null,
                    ("record " + i).getBytes(StandardCharsets.UTF_8))));
        }
        producer.flush();
        return futures.stream().map(CompletableFuture::join).toList();
    }
}
