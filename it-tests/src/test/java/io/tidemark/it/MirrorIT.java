package io.tidemark.it;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.sink.DeadLetterHeaders;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.ProvenanceHeaders.Provenance;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorStateRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mirrors as real {@code tidemark mirror} processes between clusters of real broker processes (one-broker ones, and a
 * three-node target whose partition leader is killed): what a copy keeps and adds, two mirrors writing into one topic
 * (one copying day-old data), a mirror killed and restarted during a copy with a second one started by mistake, a
 * target leader dying during a copy, two clusters mirroring each other, mirrors pointed at other clusters than
 * their names say, and a source topic deleted and created again under its name while a mirror copies it. Every cluster has its name as cluster.name, so the mirrors take the target's name from the target
 * and check the source's.
 */
class MirrorIT {
    private static final Duration COPY_TIMEOUT = Duration.ofSeconds(60);
    private static final long DAY_MS = 86_400_000L;
    /** A SendTime years before any broker's clock: 2020-09-13T12:26:40Z. */
    private static final long OLD_SEND_TIME_MS = 1_600_000_000_000L;

    @TempDir
    Path dir;
    @RegisterExtension
    final StartedInTest running = new StartedInTest();

    /** A one-broker cluster named {@code name}, with broker config lines (key=value); its bootstrap. */
    private String cluster(String name, String... configLines) throws IOException {
        return broker(name, configLines).bootstrap();
    }

    private BrokerProcess broker(String name, String... configLines) throws IOException {
        return brokerOn(FreePorts.freeBasePort(), name, configLines);
    }

    /** The broker of a one-broker cluster named {@code name}, on {@code port}, a port of a {@link FreePorts} range. */
    private BrokerProcess brokerOn(int port, String name, String... configLines) throws IOException {
        Path home = Files.createDirectories(dir.resolve(name));
        Path config = home.resolve("broker.properties");
        Files.writeString(config, "cluster.name=" + name + "\n" + String.join("\n", configLines));
        BrokerProcess broker = BrokerProcess.startListening(port, home.resolve("data"), home, "--config",
                config.toString());
        running.add(broker::stop);
        return broker;
    }

    /** A mirror taking the target's name from the target. */
    private MirrorProcess mirror(String name, String source, String sourceName, String target, String... extraArgs)
            throws IOException {
        MirrorProcess mirror = MirrorProcess.startTakingTargetName(dir, name, source, sourceName, target, extraArgs);
        running.add(mirror);
        return mirror;
    }

    private TidemarkAdmin admin(String bootstrap) {
        TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap).requestTimeoutMs(5000).build());
        running.add(admin);
        return admin;
    }

    private TidemarkProducer producer(String bootstrap) {
        TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap).build());
        running.add(producer);
        return producer;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Sends records "PREFIX-p-i" (key "k-i") to each partition and waits for every acknowledgement. */
    private static Map<String, RecordMetadata> produce(TidemarkProducer producer, String topic, int partitions,
                                                       int perPartition, String prefix, Long sendTimeMs)
            throws Exception {
        Map<String, CompletableFuture<RecordMetadata>> sends = new HashMap<>();
        for (int i = 0; i < perPartition; i++) {
            for (int p = 0; p < partitions; p++) {
                String value = prefix + "-" + p + "-" + i;
                sends.put(value, producer.send(new ProducerRecord(topic, p, bytes("k-" + i), bytes(value),
                        sendTimeMs == null ? null : sendTimeMs + i, List.of(new Header("h", bytes(value))))));
            }
        }
        Map<String, RecordMetadata> acknowledged = new HashMap<>();
        for (Map.Entry<String, CompletableFuture<RecordMetadata>> send : sends.entrySet()) {
            acknowledged.put(send.getKey(), send.getValue().get(30, TimeUnit.SECONDS));
        }
        return acknowledged;
    }

    private static void awaitEnd(TidemarkAdmin admin, TopicPartition tp, long records) {
        await().atMost(COPY_TIMEOUT).ignoreException(TidemarkException.class)
                .until(() -> admin.listOffsets(tp, OffsetSpec.latest()).offset() >= records);
    }

    /** Every record of a target partition: offsets contiguous, ReceiveTime never decreasing, no value twice. */
    /**
     * Waits until every partition of {@code topic} on the target holds {@code records} records, then checks that they
     * are the copies of exactly the records {@code sent} to the source, each once, at its source offset.
     */
    private void assertEveryRecordCopiedOnceInOrder(String a, String b, String topic, int partitions,
                                                    Map<String, RecordMetadata> sent, long records) {
        UUID topicId = topicId(a, topic);
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            awaitEnd(admin(b), tp, records);
            Set<String> expected = Set.copyOf(sent.entrySet().stream().filter(e -> e.getValue().partition()
                    == tp.partition()).map(Map.Entry::getKey).toList());
            for (ConsumerRecord copy : readChecked(b, tp, expected)) {
                RecordMetadata original = sent.get(text(copy.value()));
                assertCopy(copy, original, "A", topicId);
                assertEquals(original.offset(), copy.offset(), "every source record once, in order, from offset 0");
            }
        }
    }

    private static List<ConsumerRecord> readChecked(String bootstrap, TopicPartition tp, Set<String> expected) {
        List<ConsumerRecord> records = PartitionChecker.check(bootstrap, tp, expected);
        assertEquals(expected.size(), records.size(), "exactly the expected records in " + tp);
        return records;
    }

    private static Provenance provenance(ConsumerRecord record) {
        return ProvenanceHeaders.read(record.headers()).orElseThrow(() -> new AssertionError("no provenance: " + record));
    }

    /** The id of {@code topic} on the cluster at {@code bootstrap}. */
    private UUID topicId(String bootstrap, String topic) {
        return TopicIds.fromBytes(admin(bootstrap).describeTopics(List.of(topic)).get(0).getTopicId());
    }

    /**
     * Checks a copy against its original: key, value, user headers and SendTime kept, one provenance header added,
     * naming the source topic by its id.
     */
    private static void assertCopy(ConsumerRecord copy, RecordMetadata original, String sourceName,
                                   UUID sourceTopicId) {
        String value = text(copy.value());
        assertEquals(original.sendTimeMs(), copy.sendTimeMs(), "SendTime of " + value);
        assertEquals(new Header("h", bytes(value)), copy.headers().get(0), "user header of " + value);
        assertEquals(List.of("h", ProvenanceHeaders.NAME), copy.headers().stream().map(Header::name).toList(),
                "headers of " + value);
        assertEquals(new Provenance(new OriginPartition(sourceName, original.topic(), sourceTopicId,
                original.partition()), original.offset(), original.receiveTimeMs(), List.of(sourceName)),
                provenance(copy));
    }

    /** The first __mirror_state record of the target that matches. */
    private static MirrorStateRecord awaitState(String bootstrap, Predicate<MirrorStateRecord> wanted) {
        TopicPartition state = new TopicPartition(MirrorStateFormat.TOPIC, 0);
        try (TidemarkConsumer consumer = new TidemarkConsumer(ConsumerConfig.builder(bootstrap)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).build())) {
            consumer.assign(List.of(state));
            MirrorStateRecord[] found = new MirrorStateRecord[1];
            await().atMost(COPY_TIMEOUT).until(() -> {
                for (ConsumerRecord record : consumer.poll(Duration.ofMillis(200))) {
                    MirrorStateRecord parsed = MirrorStateFormat.parse(record.value());
                    if (wanted.test(parsed)) {
                        found[0] = parsed;
                    }
                }
                return found[0] != null;
            });
            return found[0];
        }
    }

    @Test
    void aCopyKeepsSendTimeAddsProvenanceAndCheckpointsTranslateExactly() throws Exception {
        BrokerProcess brokerA = broker("A");
        String a = brokerA.bootstrap();
        String b = cluster("B");
        TidemarkAdmin adminA = admin(a);
        TidemarkAdmin adminB = admin(b);
        adminA.createTopic("orders", 2, 0, Map.of("retention.ms", "86400000"));
        long sendTime = System.currentTimeMillis() - 60_000;
        Map<String, RecordMetadata> sent = produce(producer(a), "orders", 2, 400, "A", sendTime);
        adminA.commitOffsets("g", Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(123)));

        UUID ordersId = topicId(a, "orders");

        mirror("mirror", a, "A", b);
        for (int p = 0; p < 2; p++) {
            TopicPartition tp = new TopicPartition("orders", p);
            awaitEnd(adminB, tp, 400);
            Set<String> expected = Set.copyOf(sent.keySet().stream().filter(v -> v.startsWith("A-" + tp.partition()
                    + "-")).toList());
            for (ConsumerRecord copy : readChecked(b, tp, expected)) {
                RecordMetadata original = sent.get(text(copy.value()));
                assertCopy(copy, original, "A", ordersId);
                assertEquals(original.offset(), copy.offset(), "partition p to p, in order");
                assertTrue(copy.receiveTimeMs() >= original.receiveTimeMs(), "the target stamps a fresh ReceiveTime");
            }
        }
        assertEquals("86400000", adminB.describeTopics(List.of("orders")).get(0).getConfigsOrThrow("retention.ms"),
                "the target topic got the source's overrides");

        MirrorCheckpoint checkpoint = awaitState(b, r -> r.hasCheckpoint() && r.getCheckpoint().getGroup().equals("g")
                && r.getCheckpoint().getSourceOffset() == 123 && !r.getCheckpoint().getMirrorBehind()).getCheckpoint();
        RecordMetadata lastConsumed = sent.get("A-0-122");
        assertEquals(MirrorCheckpoint.newBuilder().setSourceCluster("A").setTargetCluster("B").setGroup("g")
                .setSourceTopic("orders").setSourceTopicId(TopicIds.toBytes(ordersId)).setPartition(0)
                .setTargetTopic("orders").setSourceOffset(123)
                .setSourceCommitTimeMs(checkpoint.getSourceCommitTimeMs()).setTargetOffset(123)
                .setLastConsumedKnown(true).setLastConsumedSendTimeMs(lastConsumed.sendTimeMs())
                .setLastConsumedReceiveTimeMs(lastConsumed.receiveTimeMs())
                .setCheckpointTimeMs(checkpoint.getCheckpointTimeMs()).build(), checkpoint);
        MirrorHeartbeat heartbeat = awaitState(b, r -> r.hasHeartbeat() && r.getHeartbeat().getRecordsCopied() == 800)
                .getHeartbeat();
        assertEquals("A", heartbeat.getSourceCluster());
        assertTrue(heartbeat.getLastHeardFromSourceMs() > 0 && heartbeat.getLastHeardFromSourceMs()
                <= heartbeat.getMirrorTimeMs(), heartbeat.toString());

        adminA.createTopic("later", 1, 0, Map.of());
        Map<String, RecordMetadata> later = produce(producer(a), "later", 1, 10, "L", null);
        awaitEnd(adminB, new TopicPartition("later", 0), 10);
        UUID laterId = topicId(a, "later");
        for (ConsumerRecord copy : readChecked(b, new TopicPartition("later", 0), later.keySet())) {
            assertCopy(copy, later.get(text(copy.value())), "A", laterId);
        }

        brokerA.kill();
        long killedMs = System.currentTimeMillis();
        MirrorHeartbeat silent = awaitState(b, r -> r.hasHeartbeat() && r.getHeartbeat().getMirrorTimeMs()
                > killedMs + 2_000).getHeartbeat();
        assertTrue(silent.getLastHeardFromSourceMs() <= killedMs, "heartbeats go on and show when the source went "
                + "silent: " + silent);
    }

    /**
     * Issue 10: a source topic deleted and created again under its name while a mirror copies it. The new topic's
     * offsets start at 0 again, below what the mirror copied of the old one; every record of the new topic arrives once,
     * with provenance naming the new topic's id, first while it holds fewer records than the old one had, then past
     * the old one's end. The old copies stay, and a group's checkpoint on the new topic translates into its copies.
     */
    @Test
    void aSourceTopicDeletedAndCreatedAgainIsCopiedWholeAsANewOrigin() throws Exception {
        String a = cluster("A");
        String b = cluster("B");
        TidemarkAdmin adminA = admin(a);
        TidemarkAdmin adminB = admin(b);
        TopicPartition t0 = new TopicPartition("t", 0);
        adminA.createTopic("t", 1, 0, Map.of());
        UUID oldId = topicId(a, "t");
        Map<String, RecordMetadata> old = produce(producer(a), "t", 1, 300, "old", null);
        mirror("a-to-b", a, "A", b);
        awaitEnd(adminB, t0, 300);

        adminA.deleteTopic("t");
        adminA.createTopic("t", 1, 0, Map.of());
        UUID newId = topicId(a, "t");
        assertNotEquals(oldId, newId, "a new topic, a new id");
        TidemarkProducer newTopicProducer = producer(a);
        Map<String, RecordMetadata> fewer = produce(newTopicProducer, "t", 1, 100, "new", null);
        awaitEnd(adminB, t0, 400);
        Map<String, RecordMetadata> past = produce(newTopicProducer, "t", 1, 300, "past", null);
        awaitEnd(adminB, t0, 700);

        Map<String, RecordMetadata> all = new HashMap<>(old);
        all.putAll(fewer);
        all.putAll(past);
        List<ConsumerRecord> copies = readChecked(b, t0, all.keySet());
        for (ConsumerRecord copy : copies) {
            String value = text(copy.value());
            RecordMetadata original = all.get(value);
            boolean ofOld = value.startsWith("old-");
            assertCopy(copy, original, "A", ofOld ? oldId : newId);
            assertEquals(ofOld ? original.offset() : 300 + original.offset(), copy.offset(),
                    "the old copies stay at 0-299; the new topic's offsets 0-399 follow in order: " + value);
        }
        assertEquals(399, past.get("past-0-299").offset(), "the new topic grew past the old one's end (300)");

        adminA.commitOffsets("g", Map.of(t0, new OffsetAndMetadata(150)));
        MirrorCheckpoint checkpoint = awaitState(b, r -> r.hasCheckpoint() && r.getCheckpoint().getGroup().equals("g"))
                .getCheckpoint();
        assertEquals(TopicIds.toBytes(newId), checkpoint.getSourceTopicId());
        assertEquals(450, checkpoint.getTargetOffset(), "the copy of the new topic's offset 150");
    }

    @Test
    void twoMirrorsIntoOneTopicOneCopyingDayOldDataKeepReceiveTimeMonotonic() throws Exception {
        String a = cluster("A");
        String b = cluster("B");
        String c = cluster("C", "clock.offset.ms=-" + DAY_MS);
        admin(a).createTopic("t", 1, 0, Map.of());
        admin(c).createTopic("t", 1, 0, Map.of());
        MirrorProcess fromAToB = mirror("a-to-b", a, "A", b);
        mirror("c-to-b", c, "C", b, "--target-name", "B");
        long now = System.currentTimeMillis();
        CompletableFuture<Map<String, RecordMetadata>> fromA = CompletableFuture.supplyAsync(() -> produceQuietly(a,
                "A", null));
        CompletableFuture<Map<String, RecordMetadata>> fromC = CompletableFuture.supplyAsync(() -> produceQuietly(c,
                "C", now - DAY_MS));
        Map<String, RecordMetadata> sent = new HashMap<>(fromA.get(60, TimeUnit.SECONDS));
        sent.putAll(fromC.get(60, TimeUnit.SECONDS));

        TopicPartition t0 = new TopicPartition("t", 0);
        awaitEnd(admin(b), t0, sent.size());
        Map<String, UUID> sourceTopicIds = Map.of("A", topicId(a, "t"), "C", topicId(c, "t"));
        long[] nextOrigin = new long[2];
        Map<Long, Long> copiesOfA = new HashMap<>();
        for (ConsumerRecord copy : readChecked(b, t0, sent.keySet())) {
            String source = text(copy.value()).substring(0, 1);
            if (source.equals("A")) {
                copiesOfA.put(provenance(copy).originOffset(), copy.offset());
            }
            RecordMetadata original = sent.get(text(copy.value()));
            assertCopy(copy, original, source, sourceTopicIds.get(source));
            int which = source.equals("A") ? 0 : 1;
            assertEquals(nextOrigin[which]++, provenance(copy).originOffset(), "each origin in order, once");
            if (source.equals("C")) {
                assertTrue(copy.receiveTimeMs() - provenance(copy).originReceiveTimeMs() >= DAY_MS - 60_000,
                        "C's data is a day old: " + copy);
            }
        }

        fromAToB.close();
        mirror("a-to-b-again", a, "A", b);
        admin(a).commitOffsets("ga", Map.of(t0, new OffsetAndMetadata(1234)));
        MirrorCheckpoint checkpoint = awaitState(b, r -> r.hasCheckpoint() && r.getCheckpoint().getGroup().equals("ga"))
                .getCheckpoint();
        assertEquals(copiesOfA.get(1234L), checkpoint.getTargetOffset(), "a commit older than the restarted mirror "
                + "remembers is found on the target, between C's copies");
    }

    /** 2000 records of one partition of "t" in batches, for a producing thread. */
    private Map<String, RecordMetadata> produceQuietly(String bootstrap, String prefix, Long sendTimeMs) {
        try {
            return produce(producer(bootstrap), "t", 1, 2000, prefix, sendTimeMs);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Produces {@code rounds} rounds of 100 records per partition of "t" on another thread: the first half at once, the
     * second half once {@code killed} completes (at most 60 s later), so a kill falls between records copied before
     * it and records produced after it, and mirrors started after the kill race for the second half.
     */
    private static CompletableFuture<Map<String, RecordMetadata>> loadInTwoHalves(TidemarkProducer producer,
                                                                                  int partitions, int rounds,
                                                                                  CompletableFuture<Void> killed) {
        return CompletableFuture.supplyAsync(() -> {
            Map<String, RecordMetadata> sent = new HashMap<>();
            try {
                for (int round = 0; round < rounds; round++) {
                    if (round == rounds / 2) {
                        killed.get(60, TimeUnit.SECONDS);
                    }
                    sent.putAll(produce(producer, "t", partitions, 100, "A" + round, null));
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            return sent;
        });
    }

    @Test
    void aMirrorKilledAndRestartedAlongsideASecondOneCopiesEveryRecordOnce() throws Exception {
        String a = cluster("A");
        String b = cluster("B");
        admin(a).createTopic("t", 2, 0, Map.of());
        TidemarkAdmin adminB = admin(b);
        TidemarkProducer producer = producer(a);
        MirrorProcess first = mirror("first", a, "A", b);
        CompletableFuture<Void> killed = new CompletableFuture<>();
        CompletableFuture<Map<String, RecordMetadata>> load = loadInTwoHalves(producer, 2, 60, killed);
        TopicPartition t0 = new TopicPartition("t", 0);
        await().atMost(COPY_TIMEOUT).pollInterval(Duration.ofMillis(10)).ignoreException(TidemarkException.class)
                .until(() -> adminB.listOffsets(t0, OffsetSpec.latest()).offset() > 1000);
        first.kill();
        mirror("restarted", a, "A", b);
        mirror("by-mistake", a, "A", b);
        killed.complete(null);
        Map<String, RecordMetadata> sent = load.get(60, TimeUnit.SECONDS);

        assertEveryRecordCopiedOnceInOrder(a, b, "t", 2, sent, 6000);

        Tidemark.Result perf = Tidemark.run(dir, "perf", "mirror", "--source", a, "--target", b, "--topic", "t",
                "--latency", "--warm-up", "0s");
        assertEquals(0, perf.exitCode(), perf.err());
        List<String> lines = perf.out().lines().toList();
        assertEquals("waiting for 12000 records of t on the target", lines.get(0));
        assertTrue(lines.get(1).matches("12000 records on the target, first to last in \\d+\\.\\d s: \\d+ records/s, "
                + "\\d+\\.\\d MB/s of source bytes; bytes on the target \\d+, on the source \\d+ \\(\\+\\d+\\.\\d%\\); "
                + "\\d+\\.\\d s since this command started"), perf.out());
        assertEquals("latency over 12000 records after the first 0 ms (negative values count as 0):", lines.get(2));
        assertTrue(lines.get(3).matches("  target ReceiveTime - origin ReceiveTime \\(the hop\\): "
                + "p50 \\d+ ms, p99 \\d+ ms, p99\\.9 \\d+ ms, max \\d+ ms"), perf.out());
    }

    @Test
    void theTargetPartitionsLeaderDyingDuringACopyLosesAndDuplicatesNothing() throws Exception {
        String a = cluster("A");
        ClusterProcesses b = new ClusterProcesses(Files.createDirectories(dir.resolve("B")), Map.of(1,
                "cluster.name=B", 2, "cluster.name=B", 3, "cluster.name=B"));
        running.add(b);
        admin(a).createTopic("t", 1, 0, Map.of());
        TidemarkProducer producer = producer(a);
        mirror("a-to-b", a, "A", b.bootstrap(), "--dead-letter-topic", "dead");
        CompletableFuture<Void> killed = new CompletableFuture<>();
        CompletableFuture<Map<String, RecordMetadata>> load = loadInTwoHalves(producer, 1, 40, killed);
        TopicPartition t0 = new TopicPartition("t", 0);
        TidemarkAdmin adminB = b.admin();
        running.add(adminB);
        assertEquals(2_092_991, adminB.clusterStatus().getLargestBatchBytes(), "what a Raft entry holds");
        assertEquals("2092991", adminB.describeTopics(List.of("dead")).get(0).getConfigsOrThrow("max.batch.bytes"),
                "the dead-letter topic takes the largest batch the replicated target takes");
        await().atMost(COPY_TIMEOUT).pollInterval(Duration.ofMillis(10)).ignoreException(TidemarkException.class)
                .until(() -> adminB.listOffsets(t0, OffsetSpec.latest()).offset() > 500);
        int leader = adminB.describeTopics(List.of("t")).get(0).getPartitions(0).getLeaderNodeId();
        b.kill(leader);
        killed.complete(null);
        Map<String, RecordMetadata> sent = load.get(60, TimeUnit.SECONDS);
        awaitEnd(adminB, t0, 4000);
        UUID tId = topicId(a, "t");
        for (ConsumerRecord copy : readChecked(b.bootstrap(), t0, sent.keySet())) {
            RecordMetadata original = sent.get(text(copy.value()));
            assertCopy(copy, original, "A", tId);
            assertEquals(original.offset(), copy.offset(), "every source record once, in order");
        }
    }

    @Test
    void twoClustersMirroringEachOtherWithTheSameTopicNamesBounceNothing() throws Exception {
        String a = cluster("A");
        String b = cluster("B");
        TidemarkAdmin adminA = admin(a);
        TidemarkAdmin adminB = admin(b);
        adminA.createTopic("t", 1, 0, Map.of());
        adminB.createTopic("t", 1, 0, Map.of());
        mirror("a-to-b", a, "A", b);
        mirror("b-to-a", b, "B", a);
        Map<String, RecordMetadata> fromA = produce(producer(a), "t", 1, 500, "A", null);
        Map<String, RecordMetadata> fromB = produce(producer(b), "t", 1, 500, "B", null);
        Set<String> all = new java.util.HashSet<>(fromA.keySet());
        all.addAll(fromB.keySet());
        TopicPartition t0 = new TopicPartition("t", 0);
        awaitEnd(adminA, t0, 1000);
        awaitEnd(adminB, t0, 1000);
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() ->
                adminA.listOffsets(t0, OffsetSpec.latest()).offset() == 1000
                        && adminB.listOffsets(t0, OffsetSpec.latest()).offset() == 1000);
        Map<String, UUID> ids = Map.of("A", topicId(a, "t"), "B", topicId(b, "t"));
        for (String cluster : List.of("A", "B")) {
            String bootstrap = cluster.equals("A") ? a : b;
            for (ConsumerRecord record : readChecked(bootstrap, t0, all)) {
                String value = text(record.value());
                Optional<Provenance> provenance = ProvenanceHeaders.read(record.headers());
                boolean local = value.startsWith(cluster);
                assertEquals(!local, provenance.isPresent(), "only copies carry provenance: " + value);
                assertFalse(ProvenanceHeaders.crossed(record.headers(), cluster), "nothing came back: " + value);
                if (!local) {
                    String source = cluster.equals("A") ? "B" : "A";
                    assertCopy(record, (cluster.equals("A") ? fromB : fromA).get(value), source, ids.get(source));
                }
            }
        }
    }

    @Test
    void aMirrorPointedAtAnotherClusterThanNamedStopsAtStartOrWhenTheSourceFirstAnswers() throws Exception {
        String b = cluster("B");
        int port = FreePorts.freeBasePort();
        String a = "127.0.0.1:" + port;
        mirror("waiting", a, "A", b);
        MirrorProcess misnamed = mirror("misnamed", a, "C", b);
        brokerOn(port, "A");
        String wrongSource = "error: the source cluster " + a + " is named 'A' (its cluster.name), not 'C' as "
                + "--source-name says: check --source and --source-name";
        assertEquals(1, misnamed.awaitExit(), "stopped when the source first answered");
        assertEquals(List.of(wrongSource), misnamed.errors());

        admin(a).createTopic("t", 1, 0, Map.of());
        Map<String, RecordMetadata> sent = produce(producer(a), "t", 1, 10, "A", null);
        TopicPartition t0 = new TopicPartition("t", 0);
        awaitEnd(admin(b), t0, 10);
        for (ConsumerRecord copy : readChecked(b, t0, sent.keySet())) {
            assertCopy(copy, sent.get(text(copy.value())), "A", topicId(a, "t"));
        }

        assertRefused(wrongSource, "--source", a, "--source-name", "C", "--target", b);
        assertRefused("error: the target cluster " + b + " is named 'B' (its cluster.name), not 'X' as --target-name "
                + "says: check --target, or leave --target-name out to take the target's own name",
                "--source", a, "--source-name", "A", "--target", b, "--target-name", "X");
        assertRefused("error: the source and target names are both 'B'; a mirror copies between two clusters with "
                + "different names", "--source", b, "--source-name", "B", "--target", b);
    }

    /** Runs a mirror that exits 1 at start with {@code error}. */
    private void assertRefused(String error, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("mirror"));
        command.addAll(List.of(args));
        Tidemark.Result refused = Tidemark.run(dir, command.toArray(String[]::new));
        assertEquals(1, refused.exitCode(), refused.err());
        assertEquals(List.of(error), MirrorProcess.errorLines(refused.err()));
    }
    /** {@code tidemark mirror status --target B --source-name A --output json}: the source's one line, parsed. */
    private JsonObject mirrorStatus(String target) throws Exception {
        Tidemark.Result status = Tidemark.run(dir, "mirror", "status", "--target", target, "--source-name", "A",
                "--output", "json");
        assertEquals(0, status.exitCode(), status.err());
        List<String> lines = status.out().lines().toList();
        assertEquals(1, lines.size(), status.out());
        return JsonParser.parseString(lines.get(0)).getAsJsonObject();
    }

    /** The status of source partition {@code partition} of {@code topic} in {@link #mirrorStatus}'s object. */
    private static Optional<JsonObject> partitionStatus(JsonObject status, String topic, int partition) {
        return status.getAsJsonArray("partitions").asList().stream().map(JsonElement::getAsJsonObject)
                .filter(p -> p.get("sourceTopic").getAsString().equals(topic)
                        && p.get("partition").getAsInt() == partition).findFirst();
    }

    /** Waits until {@code tidemark mirror status} shows the partition in {@code state}; its status. */
    private JsonObject awaitPartitionState(String target, String topic, int partition, String state) {
        JsonObject[] found = new JsonObject[1];
        await().atMost(COPY_TIMEOUT).pollInterval(Duration.ofMillis(500)).until(() -> {
            found[0] = partitionStatus(mirrorStatus(target), topic, partition)
                    .filter(p -> p.get("state").getAsString().equals(state)).orElse(null);
            return found[0] != null;
        });
        return found[0];
    }

    /** A value of {@code bytes} bytes that is its own text, for records sized to a limit. */
    private static byte[] filler(int bytes) {
        return bytes("x".repeat(bytes));
    }

    /** The bytes of a batch of one record with this key, value and headers, as a producer or the mirror builds it. */
    private static int batchBytes(byte[] key, byte[] value, List<Header> headers, boolean mirrored) {
        RecordBatchBuilder builder = new RecordBatchBuilder();
        if (mirrored) {
            builder.mirrored();
        }
        return builder.append(0, key, value, headers).sizeInBytes();
    }

    @Test
    void aSourceRecordRightAtMaxBatchBytesIsCopiedAndASystematicRefusalStopsOnlyItsPartitionSayingWhy()
            throws Exception {
        String a = cluster("A");
        String b = cluster("B");
        TidemarkAdmin adminA = admin(a);
        TidemarkAdmin adminB = admin(b);
        adminA.createTopic("exact", 1, 0, Map.of("max.batch.bytes", "2000"));
        adminA.createTopic("t", 2, 0, Map.of());
        TidemarkProducer producer = producer(a);
        byte[] key = bytes("k");
        // Around 1,900 bytes every value byte adds one batch byte (the length varints stay 2 bytes long).
        byte[] atLimit = filler(1900 + 2000 - batchBytes(key, filler(1900), List.of(), false));
        assertEquals(2000, batchBytes(key, atLimit, List.of(), false));
        RecordMetadata exact = producer.send(new ProducerRecord("exact", 0, key, atLimit, null, List.of()))
                .get(30, TimeUnit.SECONDS);
        Map<String, RecordMetadata> before = produce(producer, "t", 2, 10, "A", null);

        mirror("mirror", a, "A", b);
        TopicPartition exact0 = new TopicPartition("exact", 0);
        awaitEnd(adminB, exact0, 1);
        ConsumerRecord copy = readChecked(b, exact0, Set.of(text(atLimit))).get(0);
        assertEquals(new Provenance(new OriginPartition("A", "exact", topicId(a, "exact"), 0), exact.offset(),
                exact.receiveTimeMs(),
                List.of("A")), provenance(copy), "the copy of a record the source took at its max.batch.bytes");
        assertEquals("2000", adminB.describeTopics(List.of("exact")).get(0).getConfigsOrThrow("max.batch.bytes"));

        TopicPartition t0 = new TopicPartition("t", 0);
        TopicPartition t1 = new TopicPartition("t", 1);
        awaitEnd(adminB, t0, 10);
        awaitEnd(adminB, t1, 10);
        adminB.alterTopicConfig("t", Map.of("max.batch.bytes", "2000"), List.of());
        byte[] large = filler(5000);
        RecordMetadata refused = producer.send(new ProducerRecord("t", 0, key, large, null, List.of()))
                .get(30, TimeUnit.SECONDS);
        Map<String, RecordMetadata> after = produce(producer, "t", 2, 10, "B", null);

        int copyBytes = batchBytes(key, large, ProvenanceHeaders.forCopy(List.of(), new OriginPartition("A", "t",
                topicId(a, "t"), 0), refused.offset(), refused.receiveTimeMs()), true);
        int sourceBytes = batchBytes(key, large, List.of(), false);
        String why = "mirrored batch of " + copyBytes + " bytes is above max.batch.bytes 2000 of this topic plus the "
                + (copyBytes - sourceBytes) + " bytes of its tidemark.origin headers (" + (2000 + copyBytes
                - sourceBytes) + " bytes): its records take " + sourceBytes + " bytes as the origin held them";
        JsonObject stopped = awaitPartitionState(b, "t", 0, "stopped");
        JsonObject reason = stopped.getAsJsonObject("stopReason");
        assertEquals(10, reason.get("sourceOffset").getAsLong());
        assertEquals("RECORD_TOO_LARGE", reason.get("code").getAsString());
        assertEquals(why, reason.get("message").getAsString());
        assertEquals(9, stopped.get("lastOriginOffset").getAsLong(), "the last record before it was copied");
        awaitEnd(adminB, t1, 20);
        Set<String> expected1 = new HashSet<>();
        for (Map<String, RecordMetadata> sent : List.of(before, after)) {
            sent.forEach((value, metadata) -> {
                if (metadata.partition() == 1) {
                    expected1.add(value);
                }
            });
        }
        readChecked(b, t1, expected1);
        assertEquals("copying", partitionStatus(mirrorStatus(b), "t", 1).orElseThrow().get("state").getAsString(),
                "the other partition keeps copying");
        await().atMost(COPY_TIMEOUT).until(() -> partitionStatus(mirrorStatus(b), "t", 0).orElseThrow()
                .get("recordsBehind").getAsLong() == 11);
        assertEquals(10, adminB.listOffsets(t0, OffsetSpec.latest()).offset(), "nothing after the refused record");

        Tidemark.Result text = Tidemark.run(dir, "mirror", "status", "--target", b);
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().startsWith("Mirror A -> B: last heartbeat "), text.out());
        assertTrue(text.out().lines().anyMatch(line -> line.matches("t +0 t +stopped +11 \\S+ +9  RECORD_TOO_LARGE at "
                + "source offset 10, stopped \\S+: " + Pattern.quote(why))), text.out());
    }

    @Test
    void withADeadLetterTopicARefusedRecordGoesThereAndCopyingGoesOn() throws Exception {
        String a = cluster("A");
        String b = cluster("B");
        TidemarkAdmin adminA = admin(a);
        TidemarkAdmin adminB = admin(b);
        adminA.createTopic("t", 1, 0, Map.of("send.time.before.max.ms", "-1"));
        adminB.createTopic("t", 1, 0, Map.of("send.time.before.max.ms", "3600000"));
        TidemarkProducer producer = producer(a);
        Map<String, RecordMetadata> before = produce(producer, "t", 1, 5, "A", null);
        RecordMetadata old = producer.send(new ProducerRecord("t", 0, bytes("old"), bytes("years old"),
                OLD_SEND_TIME_MS, List.of(new Header("h", bytes("kept"))))).get(30, TimeUnit.SECONDS);
        Map<String, RecordMetadata> after = produce(producer, "t", 1, 5, "B", null);

        mirror("mirror", a, "A", b, "--dead-letter-topic", "A.dead-letters");
        TopicPartition t0 = new TopicPartition("t", 0);
        awaitEnd(adminB, t0, 10);
        Set<String> copied = new HashSet<>(before.keySet());
        copied.addAll(after.keySet());
        for (ConsumerRecord copy : readChecked(b, t0, copied)) {
            String value = text(copy.value());
            assertCopy(copy, (before.containsKey(value) ? before : after).get(value), "A", topicId(a, "t"));
        }
        TopicPartition dead = new TopicPartition("A.dead-letters", 0);
        awaitEnd(adminB, dead, 1);
        ConsumerRecord letter = readChecked(b, dead, Set.of("years old")).get(0);
        assertEquals(OLD_SEND_TIME_MS, letter.sendTimeMs());
        assertEquals("old", text(letter.key()));
        assertEquals(List.of("h", DeadLetterHeaders.ERROR, DeadLetterHeaders.MESSAGE, DeadLetterHeaders.TOPIC,
                DeadLetterHeaders.PARTITION, ProvenanceHeaders.NAME), letter.headers().stream().map(Header::name)
                .toList());
        DeadLetterHeaders.DeadLetter why = DeadLetterHeaders.read(letter.headers()).orElseThrow();
        assertEquals(t0, why.meantFor());
        assertEquals(ErrorCode.INVALID_TIMESTAMP, why.code());
        assertTrue(why.message().startsWith("record 0 of the batch has SendTime " + OLD_SEND_TIME_MS
                + " (2020-09-13T12:26:40Z), outside the allowed range ["), why.message());
        assertTrue(why.message().endsWith("] = origin ReceiveTime " + old.receiveTimeMs()
                + " - send.time.before.max.ms 3600000 .. + send.time.after.max.ms 3600000; the whole batch was "
                + "rejected"), why.message());
        assertEquals(new Provenance(new OriginPartition("A", "t", topicId(a, "t"), 0), old.offset(),
                old.receiveTimeMs(), List.of("A")), provenance(letter));
        Map<String, String> deadConfig = adminB.describeTopics(List.of("A.dead-letters")).get(0).getConfigsMap();
        int largestBatch = adminB.clusterStatus().getLargestBatchBytes();
        assertEquals(2_092_991, largestBatch, "what a Raft entry of the default 2 MiB write buffer holds");
        assertEquals(List.of("-1", "-1", "-1", Integer.toString(largestBatch)), List.of(
                deadConfig.get("send.time.before.max.ms"), deadConfig.get("send.time.after.max.ms"),
                deadConfig.get("retention.ms"), deadConfig.get("max.batch.bytes")));
        assertEquals("copying", awaitPartitionState(b, "t", 0, "copying").get("state").getAsString());
        await().atMost(COPY_TIMEOUT).until(() -> partitionStatus(mirrorStatus(b), "t", 0).orElseThrow()
                .get("recordsBehind").getAsLong() == 0);
    }

    @Test
    void aTargetTopicDeletedWhileTheMirrorRunsIsMadeAgainAndGetsEveryRecordOnce() throws Exception {
        String a = cluster("A");
        String b = cluster("B");
        admin(a).createTopic("t", 2, 0, Map.of("retention.ms", "86400000"));
        TidemarkAdmin adminB = admin(b);
        TidemarkProducer producer = producer(a);
        Map<String, RecordMetadata> sent = new HashMap<>(produce(producer, "t", 2, 100, "A0", null));
        mirror("mirror", a, "A", b);
        for (int p = 0; p < 2; p++) {
            awaitEnd(adminB, new TopicPartition("t", p), 100);
        }
        adminB.deleteTopic("t");
        sent.putAll(produce(producer, "t", 2, 100, "A1", null));

        assertEveryRecordCopiedOnceInOrder(a, b, "t", 2, sent, 200);
        assertEquals("86400000", adminB.describeTopics(List.of("t")).get(0).getConfigsOrThrow("retention.ms"),
                "made again like the source topic");
    }

    @Test
    void aTargetTopicWithFewerPartitionsGetsThoseItHasAndStatusShowsTheOthersStopped() throws Exception {
        String a = cluster("A");
        String b = cluster("B");
        admin(a).createTopic("t", 3, 0, Map.of());
        TidemarkAdmin adminB = admin(b);
        adminB.createTopic("t", 1, 0, Map.of());
        Map<String, RecordMetadata> sent = produce(producer(a), "t", 3, 20, "A", null);
        mirror("mirror", a, "A", b);

        TopicPartition t0 = new TopicPartition("t", 0);
        awaitEnd(adminB, t0, 20);
        readChecked(b, t0, Set.copyOf(sent.keySet().stream().filter(v -> v.startsWith("A-0-")).toList()));
        String why = "target topic t has 1 partitions, fewer than the 3 of source topic t; partition p is copied to "
                + "partition p";
        for (int p = 1; p < 3; p++) {
            JsonObject stopped = awaitPartitionState(b, "t", p, "stopped");
            JsonObject reason = stopped.getAsJsonObject("stopReason");
            assertTrue(reason.get("sourceOffset").isJsonNull(), "no record was refused");
            assertEquals("UNKNOWN_PARTITION", reason.get("code").getAsString());
            assertEquals(why, reason.get("message").getAsString());
        }
        await().atMost(COPY_TIMEOUT).until(() -> partitionStatus(mirrorStatus(b), "t", 1).orElseThrow()
                .get("recordsBehind").getAsLong() == 20);
        assertEquals("copying", partitionStatus(mirrorStatus(b), "t", 0).orElseThrow().get("state").getAsString());

        Tidemark.Result unknown = Tidemark.run(dir, "mirror", "status", "--target", b, "--source-name", "X");
        assertEquals(1, unknown.exitCode());
        assertEquals("error: no mirror from cluster X left a heartbeat or partition status in the target's "
                + "__mirror_state (sources there: A)\n", unknown.err());
    }
}
