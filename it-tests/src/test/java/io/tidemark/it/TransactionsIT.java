package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.core.txn.TransactionStateFormat;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TransactionPhase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Producer transactions on three brokers, so a transaction's partitions sit in several Raft groups led by different
 * brokers and the coordinator writes most markers through other brokers: committed transactions become visible to
 * read_committed consumers whole, aborted ones never; an open transaction holds read_committed readers of its
 * partitions back (also from later records outside it); a new instance of a transactional id fences the old one and
 * aborts what it left open; a transaction past its timeout is aborted and its producer fenced; a read-process-write
 * pipeline that dies inside a transaction outputs every input once, its offsets committed with its outputs; a
 * transaction within the coordinator's Raft group ends in one entry, others in two phases.
 */
class TransactionsIT {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path dir;
    private static InJvmCluster cluster;
    private static TidemarkAdmin admin;

    @BeforeAll
    static void start() throws Exception {
        cluster = InJvmCluster.start(dir, 3, Map.of());
        admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).build());
    }

    @AfterAll
    static void stop() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void committedTransactionsAreVisibleWholeAndAbortedOnesNever() {
        admin.createTopic("orders", 3, 3, Map.of());
        admin.createTopic("audit", 2, 3, Map.of());
        try (TidemarkProducer producer = transactional("shop", 60_000)) {
            producer.initTransactions();
            sendTransaction(producer, "t1", true);
            sendTransaction(producer, "t2", false);
            sendTransaction(producer, "t3", true);
        }
        List<String> committed = readToEnd(List.of("orders", "audit"), ConsumerConfig.IsolationLevel.READ_COMMITTED);
        assertEquals(expected("t1", "t3"), sorted(committed), "t2 aborted: never read at read_committed");
        List<String> all = readToEnd(List.of("orders", "audit"), ConsumerConfig.IsolationLevel.READ_UNCOMMITTED);
        assertEquals(expected("t1", "t2", "t3"), sorted(all), "read_uncommitted reads every record, no marker");
    }

    @Test
    void anOpenTransactionHoldsReadCommittedReadersBackUntilItEnds() {
        admin.createTopic("held", 1, 3, Map.of());
        TopicPartition held = new TopicPartition("held", 0);
        try (TidemarkProducer producer = transactional("holder", 60_000);
             TidemarkProducer plain = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap()).build())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord("held", 0, null, bytes("in-transaction"))).join();
            plain.send(new ProducerRecord("held", 0, null, bytes("after-it"))).join();
            try (TidemarkConsumer reader = reader(List.of(held), ConsumerConfig.IsolationLevel.READ_COMMITTED)) {
                await().during(Duration.ofSeconds(1)).atMost(WAIT).until(() -> reader.poll(Duration.ofMillis(100))
                        .isEmpty());
                assertEquals(0, reader.position(held), "held at the open transaction's first offset");
                producer.commitTransaction();
                List<String> read = new ArrayList<>();
                await().atMost(WAIT).until(() -> {
                    reader.poll(Duration.ofMillis(100)).forEach(r -> read.add(text(r)));
                    return read.size() == 2;
                });
                assertEquals(List.of("in-transaction", "after-it"), read);
                await().atMost(WAIT).until(() -> {
                    reader.poll(Duration.ofMillis(100));
                    return reader.position(held) == 3;
                });
            }
        }
    }

    @Test
    void aNewInstanceFencesTheOldOneAndAbortsWhatItLeftOpen() {
        admin.createTopic("fenced", 2, 3, Map.of());
        try (TidemarkProducer zombie = transactional("worker", 60_000);
             TidemarkProducer successor = transactional("worker", 60_000)) {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord("fenced", 0, null, bytes("zombie"))).join();
            successor.initTransactions();
            TidemarkException fenced = assertThrows(TidemarkException.class, zombie::commitTransaction);
            assertEquals(ErrorCode.INVALID_PRODUCER_EPOCH, fenced.code(), fenced.getMessage());
            assertThrows(IllegalStateException.class,
                    () -> zombie.send(new ProducerRecord("fenced", 1, null, bytes("late"))));
            successor.beginTransaction();
            successor.send(new ProducerRecord("fenced", 0, null, bytes("successor")));
            successor.commitTransaction();
        }
        assertEquals(List.of("successor"), readToEnd(List.of("fenced"), ConsumerConfig.IsolationLevel.READ_COMMITTED));
    }

    /**
     * A transaction whose partitions sit in the Raft group of {@code __group_offsets} (whose leader coordinates) ends
     * in one entry of that group: the id's stored states go from ONGOING straight to EMPTY, the markers in the same
     * entry. One whose partition sits in another group takes the two phases: PREPARE_COMMIT stored first. Both are
     * read whole at read_committed.
     */
    @Test
    void aTransactionInTheCoordinatorsRaftGroupEndsInOneEntryAnotherInTwoPhases() {
        admin.createTopic("placed", 3, 3, Map.of());
        String coordinatorGroup = admin.describeTopics(List.of(GroupOffsetStore.TOPIC)).get(0).getPartitions(0).getGroupId();
        // the broker asked may not have applied the topic's creation yet (UNKNOWN_TOPIC failed a CI run here)
        List<PartitionDescription> placed = await().atMost(WAIT).ignoreException(TidemarkException.class)
                .until(() -> admin.describeTopics(List.of("placed")).get(0).getPartitionsList(), p -> p.size() == 3);
        int together = placed.stream().filter(p -> p.getGroupId().equals(coordinatorGroup)).findFirst()
                .orElseThrow().getPartition();
        int apart = placed.stream().filter(p -> !p.getGroupId().equals(coordinatorGroup)).findFirst()
                .orElseThrow().getPartition();
        for (Map.Entry<String, Integer> id : Map.of("placed-together", together, "placed-apart", apart).entrySet()) {
            try (TidemarkProducer producer = transactional(id.getKey(), 60_000)) {
                producer.initTransactions();
                producer.beginTransaction();
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord("placed", id.getValue(), null, bytes(id.getKey() + "-" + i)));
                }
                producer.commitTransaction();
            }
        }
        assertEquals(List.of("placed-apart-0", "placed-apart-1", "placed-apart-2", "placed-together-0",
                "placed-together-1", "placed-together-2"), sorted(readToEnd(List.of("placed"),
                ConsumerConfig.IsolationLevel.READ_COMMITTED)));
        Map<String, List<TransactionPhase>> phases = storedPhases(Set.of("placed-together", "placed-apart"));
        assertEquals(List.of(TransactionPhase.EMPTY, TransactionPhase.ONGOING, TransactionPhase.EMPTY),
                phases.get("placed-together"), "partition " + together + " in the coordinator's group " + coordinatorGroup);
        assertEquals(List.of(TransactionPhase.EMPTY, TransactionPhase.ONGOING, TransactionPhase.PREPARE_COMMIT,
                TransactionPhase.EMPTY), phases.get("placed-apart"), "partition " + apart + " in another group");
    }

    /** The phases each of these transactional ids was stored in, in order, read from {@code __group_offsets}. */
    private static Map<String, List<TransactionPhase>> storedPhases(Set<String> transactionalIds) {
        Map<String, List<TransactionPhase>> phases = new HashMap<>();
        TopicPartition offsets = new TopicPartition(GroupOffsetStore.TOPIC, 0);
        long end = admin.listOffsets(offsets, OffsetSpec.latest()).logEndOffset();
        try (TidemarkConsumer reader = reader(List.of(offsets), ConsumerConfig.IsolationLevel.READ_UNCOMMITTED)) {
            await().atMost(WAIT).until(() -> {
                for (ConsumerRecord record : reader.poll(Duration.ofMillis(100))) {
                    if (TransactionStateFormat.isTransactionStateKey(record.key())
                            && transactionalIds.contains(TransactionStateFormat.readTransactionalId(record.key()))) {
                        phases.computeIfAbsent(TransactionStateFormat.readTransactionalId(record.key()),
                                id -> new ArrayList<>()).add(TransactionStateFormat.readValue(record.value())
                                .getPhase());
                    }
                }
                return reader.position(offsets) >= end;
            });
        }
        return phases;
    }

    @Test
    void noTransactionWritesToAnInternalTopic() {
        try (TidemarkProducer producer = transactional("intruder", 60_000)) {
            producer.initTransactions();
            producer.beginTransaction();
            TidemarkException refused = assertThrows(TidemarkException.class, () -> producer.send(
                    new ProducerRecord("__group_offsets", 0, null, bytes("forged"))));
            assertEquals(ErrorCode.INVALID_REQUEST, refused.code());
            assertEquals("__group_offsets-0 is a partition of an internal topic, "
                    + "which no transaction writes to (offsets go in with sendOffsetsToTransaction)",
                    refused.getMessage());
            producer.abortTransaction();
        }
    }

    @Test
    void aTransactionPastItsTimeoutIsAbortedAndItsProducerFenced() {
        admin.createTopic("slow", 1, 3, Map.of());
        try (TidemarkProducer producer = transactional("slowpoke", 1_500)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord("slow", 0, null, bytes("too-late"))).join();
            TopicPartition slow = new TopicPartition("slow", 0);
            await().atMost(WAIT).until(() -> admin.listOffsets(slow, OffsetSpec.latest()).logEndOffset() == 2);
            TidemarkException fenced = assertThrows(TidemarkException.class, producer::commitTransaction);
            assertEquals(ErrorCode.INVALID_PRODUCER_EPOCH, fenced.code(), fenced.getMessage());
        }
        assertEquals(List.of(), readToEnd(List.of("slow"), ConsumerConfig.IsolationLevel.READ_COMMITTED));
    }

    @Test
    void aReadProcessWritePipelineOutputsEachInputOnceAcrossACrash() {
        admin.createTopic("in", 2, 3, Map.of());
        admin.createTopic("out", 2, 3, Map.of());
        try (TidemarkProducer input = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap()).build())) {
            for (int i = 0; i < 40; i++) {
                input.send(new ProducerRecord("in", i % 2, null, bytes("r" + i)));
            }
            input.flush();
        }
        List<TopicPartition> in = List.of(new TopicPartition("in", 0), new TopicPartition("in", 1));
        try (TidemarkConsumer consumer = pipelineConsumer(in);
             TidemarkProducer producer = transactional("pipe", 60_000)) {
            producer.initTransactions();
            transform(consumer, producer, pollAtLeast(consumer, 10));
            producer.commitTransaction();
            transform(consumer, producer, pollAtLeast(consumer, 10));
            producer.flush();
        }
        try (TidemarkConsumer consumer = pipelineConsumer(in);
             TidemarkProducer producer = transactional("pipe", 60_000)) {
            producer.initTransactions();
            await().atMost(WAIT).until(() -> {
                List<ConsumerRecord> read = consumer.poll(Duration.ofMillis(100));
                if (!read.isEmpty()) {
                    transform(consumer, producer, read);
                    producer.commitTransaction();
                }
                return in.stream().allMatch(tp -> consumer.position(tp) == 20);
            });
        }
        List<String> outputs = readToEnd(List.of("out"), ConsumerConfig.IsolationLevel.READ_COMMITTED);
        assertEquals(IntStream.range(0, 40).mapToObj(i -> "out-r" + i).sorted().toList(), sorted(outputs),
                "every input once: the crashed transaction's outputs were aborted, its offsets never committed");
        try (TidemarkConsumer reader = pipelineConsumer(in)) {
            Map<TopicPartition, OffsetAndMetadata> committed = reader.committed(Set.copyOf(in));
            assertEquals(20, committed.get(in.get(0)).offset());
            assertEquals(20, committed.get(in.get(1)).offset());
        }
    }

    private static TidemarkConsumer pipelineConsumer(List<TopicPartition> in) {
        TidemarkConsumer consumer = new TidemarkConsumer(ConsumerConfig.builder(cluster.bootstrap()).group("pipeline")
                .enableAutoCommit(false).autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)
                .isolationLevel(ConsumerConfig.IsolationLevel.READ_COMMITTED).maxPollRecords(5).build());
        consumer.assign(in);
        return consumer;
    }

    /** Opens a transaction with {@code read} transformed into it and the consumer's positions after them. */
    private static void transform(TidemarkConsumer consumer, TidemarkProducer producer, List<ConsumerRecord> read) {
        producer.beginTransaction();
        read.forEach(r -> producer.send(new ProducerRecord("out", r.partition(), null, bytes("out-" + text(r)))));
        producer.sendOffsetsToTransaction(positions(consumer, List.of(new TopicPartition("in", 0),
                new TopicPartition("in", 1))), consumer.groupMetadata());
    }

    private static List<ConsumerRecord> pollAtLeast(TidemarkConsumer consumer, int count) {
        List<ConsumerRecord> read = new ArrayList<>();
        await().atMost(WAIT).until(() -> {
            read.addAll(consumer.poll(Duration.ofMillis(100)));
            return read.size() >= count;
        });
        return read;
    }

    private static Map<TopicPartition, OffsetAndMetadata> positions(TidemarkConsumer consumer,
                                                                    List<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
        partitions.forEach(tp -> positions.put(tp, new OffsetAndMetadata(consumer.position(tp), "")));
        return positions;
    }

    private static TidemarkProducer transactional(String transactionalId, long timeoutMs) {
        return new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap()).transactionalId(transactionalId)
                .transactionTimeoutMs(timeoutMs).build());
    }

    /** Sends 10 records of transaction {@code name} over orders and audit, then commits or aborts. */
    private static void sendTransaction(TidemarkProducer producer, String name, boolean commit) {
        producer.beginTransaction();
        for (int i = 0; i < 10; i++) {
            String topic = i % 3 == 0 ? "audit" : "orders";
            producer.send(new ProducerRecord(topic, i % (topic.equals("audit") ? 2 : 3), null,
                    bytes(name + "-" + i)));
        }
        if (commit) {
            producer.commitTransaction();
        } else {
            producer.flush();
            producer.abortTransaction();
        }
    }

    private static List<String> expected(String... transactions) {
        List<String> values = new ArrayList<>();
        for (String name : transactions) {
            IntStream.range(0, 10).forEach(i -> values.add(name + "-" + i));
        }
        return sorted(values);
    }

    /** Every record of the topics' partitions up to their log end offsets, read at {@code isolation}. */
    private static List<String> readToEnd(List<String> topics, ConsumerConfig.IsolationLevel isolation) {
        // a partition nothing was written to may still be electing its group's leader, and listOffsets asks the leader
        await().atMost(WAIT).until(() -> admin.describeTopics(topics).stream()
                .flatMap(topic -> topic.getPartitionsList().stream()).allMatch(p -> p.getLeaderNodeId() > 0));
        List<TopicPartition> partitions = new ArrayList<>();
        for (TopicDescription topic : admin.describeTopics(topics)) {
            IntStream.range(0, topic.getPartitionsCount()).forEach(p -> partitions.add(
                    new TopicPartition(topic.getName(), p)));
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        partitions.forEach(tp -> ends.put(tp, admin.listOffsets(tp, OffsetSpec.latest()).logEndOffset()));
        List<String> read = new ArrayList<>();
        try (TidemarkConsumer reader = reader(partitions, isolation)) {
            await().atMost(WAIT).until(() -> {
                reader.poll(Duration.ofMillis(100)).forEach(r -> read.add(text(r)));
                return partitions.stream().allMatch(tp -> reader.position(tp) >= ends.get(tp));
            });
        }
        return read;
    }

    private static TidemarkConsumer reader(List<TopicPartition> partitions, ConsumerConfig.IsolationLevel isolation) {
        TidemarkConsumer reader = new TidemarkConsumer(ConsumerConfig.builder(cluster.bootstrap())
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).isolationLevel(isolation).build());
        reader.assign(partitions);
        return reader;
    }

    private static List<String> sorted(List<String> values) {
        return values.stream().sorted().toList();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(ConsumerRecord record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }
}
