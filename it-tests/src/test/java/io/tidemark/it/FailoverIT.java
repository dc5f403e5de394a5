package io.tidemark.it;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RebalanceListener;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.failover.MirrorState;
import io.tidemark.mirror.failover.MirrorStateReader;
import io.tidemark.mirror.failover.TargetFacts;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupPartitionLag;
import io.tidemark.proto.v1.MirrorCheckpoint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The disaster drill, on a cluster A of one broker alone and on one of three brokers replicating every partition:
 * cluster B (one broker; both named by {@code cluster.name}), a mirror A -> B held to
 * {@value #MIRROR_BYTES_PER_SECOND} bytes a second (a thin link: less than the producer writes, more than the groups
 * consume), a producer writing to A at a fixed rate with SendTime,
 * and two consumer groups committing on A, one to be moved exactly and one by time. Every A process is SIGKILLed
 * mid-stream, right after both groups committed; then {@code tidemark failover plan} and {@code apply} move the groups
 * to B, where they continue. Checked for each group: every record it had not committed on A that the mirror had
 * copied is consumed on B (no loss); re-reads are counted and bounded (exact: by what the group committed after the
 * last checkpoint and by the plan's bound; time: no record older than T - X is read). The plan's count of records the
 * mirror had not copied is checked against what A really held, counted by starting A again afterwards. Also apply's
 * idempotence and refusal, and the errors of bad input.
 */
class FailoverIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 2;
    private static final String EXACT_GROUP = "billing";
    private static final String TIME_GROUP = "audit";
    /** The producer sends this many records to each partition every {@value #ROUND_INTERVAL_MS} ms: 1,000 a second. */
    private static final int RECORDS_PER_ROUND = 10;
    private static final long ROUND_INTERVAL_MS = 20;
    private static final int VALUE_BYTES = 200;
    /** About 200 records a second: below what the producer writes (1,000), above what a group reads (100). */
    private static final long MIRROR_BYTES_PER_SECOND = 40_000;
    /** Each group on A takes this many records every {@value #CONSUME_INTERVAL_MS} ms and commits them. */
    private static final int POLL_RECORDS_ON_A = 10;
    private static final long CONSUME_INTERVAL_MS = 100;
    private static final int POLL_RECORDS_ON_B = 10_000;
    /**
     * The mirror learns A's log ends from its fetches and lists them every checkpoint interval (500 ms here): what A
     * took with it beyond the plan's count was acknowledged in this window before the kill, or was in flight.
     */
    private static final long LOG_END_STALENESS_MS = 3_000;
    /** How the failover tool prints times. */
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);

    /** Kept when a test fails: the brokers' and the mirror's logs are in it. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;
    @RegisterExtension
    final StartedInTest running = new StartedInTest();

    /** Cluster A's processes: killed all at once, started again on their data. */
    private interface SourceCluster {
        String bootstrap();

        void killAll() throws InterruptedException;

        /** Starts every process again; the bootstrap afterwards. */
        String restartAll() throws IOException;
    }

    private SourceCluster sourceCluster(int nodes) throws IOException {
        Path home = Files.createDirectories(dir.resolve("A"));
        if (nodes == 1) {
            BrokerProcess broker = closing(BrokerProcess.start(home.resolve("data"), home, "--config",
                    Files.writeString(home.resolve("broker.properties"), "cluster.name=A\n").toString()));
            return new SourceCluster() {
                @Override
                public String bootstrap() {
                    return broker.bootstrap();
                }

                @Override
                public void killAll() throws InterruptedException {
                    broker.kill();
                }

                @Override
                public String restartAll() throws IOException {
                    broker.restart();
                    return broker.bootstrap();
                }
            };
        }
        Map<Integer, String> configs = new HashMap<>();
        for (int node = 1; node <= nodes; node++) {
            configs.put(node, "cluster.name=A\n");
        }
        ClusterProcesses cluster = closing(new ClusterProcesses(home, configs));
        return new SourceCluster() {
            @Override
            public String bootstrap() {
                return cluster.bootstrap();
            }

            @Override
            public void killAll() throws InterruptedException {
                for (int node = 1; node <= nodes; node++) {
                    cluster.kill(node);
                }
            }

            @Override
            public String restartAll() throws IOException {
                for (int node = 1; node <= nodes; node++) {
                    cluster.start(node);
                }
                cluster.awaitReady();
                return cluster.bootstrap();
            }
        };
    }

    /** A single-broker cluster named {@code name}, with more lines of broker config. */
    private BrokerProcess broker(String name, String... config) throws IOException {
        Path home = Files.createDirectories(dir.resolve(name));
        BrokerProcess broker = BrokerProcess.start(home.resolve("data"), home, "--config",
                Files.writeString(home.resolve("broker.properties"), "cluster.name=" + name + "\n"
                        + String.join("\n", config) + "\n").toString());
        running.add(broker::close);
        return broker;
    }

    private <T extends AutoCloseable> T closing(T closeable) {
        running.add(closeable);
        return closeable;
    }

    /** A consumer of a group on a cluster, both partitions assigned, from the earliest offset when none is committed. */
    private TidemarkConsumer consumer(String bootstrap, String group, int maxPollRecords) {
        TidemarkConsumer consumer = closing(new TidemarkConsumer(ConsumerConfig.builder(bootstrap).group(group)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).maxPollRecords(maxPollRecords)
                .requestTimeoutMs(3_000).build()));
        consumer.assign(partitions());
        return consumer;
    }

    private static List<TopicPartition> partitions() {
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(TOPIC, p));
        }
        return partitions;
    }

    /** The producer's record of what A acknowledged: a record's offset in its partition, and when. */
    private record Ack(long atMs, int partition, long offset) {
    }

    /**
     * Every {@value #ROUND_INTERVAL_MS} ms, sends {@value #RECORDS_PER_ROUND} records to each partition with SendTime
     * one second back, without waiting for earlier rounds (so the rate does not depend on A's latency); adds each
     * acknowledgement to {@code acked} and counts the records sent per partition in {@code sent}. After the first
     * failure (A was killed) it sends no more.
     */
    private static void produceAtFixedRate(TidemarkProducer producer, ScheduledExecutorService scheduler,
                                           List<Ack> acked, AtomicLongArray sent) {
        byte[] padding = new byte[VALUE_BYTES];
        AtomicBoolean failed = new AtomicBoolean();
        scheduler.scheduleAtFixedRate(() -> {
            for (int i = 0; i < RECORDS_PER_ROUND && !failed.get(); i++) {
                for (int p = 0; p < PARTITIONS; p++) {
                    sent.incrementAndGet(p);
                    producer.send(new ProducerRecord(TOPIC, p, null, padding, System.currentTimeMillis() - 1_000))
                            .whenComplete((metadata, error) -> {
                                if (error == null) {
                                    acked.add(new Ack(System.currentTimeMillis(), metadata.partition(),
                                            metadata.offset()));
                                } else {
                                    failed.set(true);
                                }
                            });
                }
            }
        }, 0, ROUND_INTERVAL_MS, TimeUnit.MILLISECONDS);
    }

    /** One poll of a group on A and a synchronous commit; the committed offsets afterwards. */
    private static Map<TopicPartition, Long> pollAndCommit(TidemarkConsumer consumer) {
        consumer.poll(Duration.ofMillis(50));
        consumer.commitSync();
        Map<TopicPartition, Long> committed = new HashMap<>();
        partitions().forEach(tp -> committed.put(tp, consumer.position(tp)));
        return committed;
    }

    /** Each partition's checkpoint as "partition: source offset at checkpoint time". */
    private static String checkpointTimes(MirrorState state) {
        return state.checkpoints().entrySet().stream().map(e -> e.getKey().partition() + ": "
                + e.getValue().getSourceOffset() + " at " + e.getValue().getCheckpointTimeMs()).sorted().toList()
                .toString();
    }

    private static MirrorState mirrorState(TidemarkAdmin adminB, String group) {
        return new MirrorStateReader(adminB).read("A", group);
    }

    private Tidemark.Result failover(String command, String b, String group, String... extra)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("failover", command, "--target", b, "--source-name", "A",
                "--group", group));
        args.addAll(List.of(extra));
        return Tidemark.run(dir, args.toArray(String[]::new));
    }

    /** Runs a failover command with --output json; checks it succeeded; its JSON object. */
    private JsonObject failoverJson(String command, String b, String group, String... extra)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of(extra));
        args.addAll(List.of("--output", "json"));
        Tidemark.Result result = failover(command, b, group, args.toArray(String[]::new));
        assertEquals(0, result.exitCode(), result.err());
        return JsonParser.parseString(result.out()).getAsJsonObject();
    }

    /** Every record of a partition of B. */
    private static List<ConsumerRecord> readAll(TidemarkAdmin admin, TopicPartition tp) {
        long end = admin.listOffsets(tp, OffsetSpec.latest()).logEndOffset();
        List<ConsumerRecord> records = new ArrayList<>();
        long offset = 0;
        while (offset < end) {
            List<ConsumerRecord> read = admin.read(tp, offset, 1 << 20);
            records.addAll(read.stream().filter(r -> r.offset() < end).toList());
            offset = read.get(read.size() - 1).offset() + 1;
        }
        return records;
    }

    /** The group's records on B from its committed offsets to the end of each partition. */
    private List<ConsumerRecord> consumeToEnd(String b, String group, TidemarkAdmin adminB) {
        TidemarkConsumer consumer = consumer(b, group, POLL_RECORDS_ON_B);
        Map<TopicPartition, Long> ends = new HashMap<>();
        partitions().forEach(tp -> ends.put(tp, adminB.listOffsets(tp, OffsetSpec.latest()).logEndOffset()));
        List<ConsumerRecord> consumed = new ArrayList<>();
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(1)).until(() -> {
            consumed.addAll(consumer.poll(Duration.ofMillis(200)));
            return partitions().stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
        });
        consumer.commitSync();
        return consumed;
    }

    private static long originOffset(ConsumerRecord copy) {
        return ProvenanceHeaders.read(copy.headers()).orElseThrow(() -> new AssertionError("no provenance: " + copy))
                .originOffset();
    }

    /**
     * Checks that the group lost nothing on B: every copy of a record at or above its committed offset on A is among
     * the records it consumed, once. Returns the re-reads per partition (copies below its committed offset on A).
     */
    private static Map<TopicPartition, Long> checkNoLossAndCountRereads(TidemarkAdmin adminB,
                                                                        Map<TopicPartition, Long> committedOnA,
                                                                        List<ConsumerRecord> consumed) {
        Map<TopicPartition, Long> rereads = new TreeMap<>((x, y) -> Integer.compare(x.partition(), y.partition()));
        for (TopicPartition tp : partitions()) {
            long committed = committedOnA.get(tp);
            List<Long> consumedOrigins = consumed.stream().filter(r -> r.topicPartition().equals(tp))
                    .map(FailoverIT::originOffset).toList();
            List<Long> owed = readAll(adminB, tp).stream().map(FailoverIT::originOffset).filter(o -> o >= committed)
                    .toList();
            assertEquals(owed, consumedOrigins.stream().filter(o -> o >= committed).toList(),
                    "every copied record " + tp + " had not committed on A is consumed on B, once, in order");
            rereads.put(tp, consumedOrigins.stream().filter(o -> o < committed).count());
        }
        return rereads;
    }

    @ParameterizedTest(name = "cluster A of {0} broker(s)")
    @ValueSource(ints = {1, 3})
    void aGroupMovedToTheMirrorAfterItsClusterDiedLosesNothingAndRereadsLittle(int nodesInA) throws Exception {
        SourceCluster source = sourceCluster(nodesInA);
        String a = source.bootstrap();
        String b = broker("B").bootstrap();
        TidemarkAdmin adminA = closing(new TidemarkAdmin(AdminConfig.builder(a).requestTimeoutMs(15_000).build()));
        TidemarkAdmin adminB = closing(new TidemarkAdmin(AdminConfig.builder(b).requestTimeoutMs(5_000).build()));
        adminA.createTopic(TOPIC, PARTITIONS, 0, Map.of());
        closing(MirrorProcess.startTakingTargetName(dir, "mirror", a, "A", b, "--max-bytes-per-second",
                Long.toString(MIRROR_BYTES_PER_SECOND)));
        await().atMost(TIMEOUT).ignoreException(TidemarkException.class)
                .until(() -> adminB.describeTopics(List.of(TOPIC)).size() == 1);

        ScheduledExecutorService producing = Executors.newSingleThreadScheduledExecutor();
        ScheduledExecutorService consuming = Executors.newSingleThreadScheduledExecutor();
        closing(producing::shutdownNow);
        closing(consuming::shutdownNow);
        TidemarkProducer producer = closing(new TidemarkProducer(ProducerConfig.builder(a).requestTimeoutMs(1_000)
                .deliveryTimeoutMs(3_000).build()));
        List<Ack> acked = Collections.synchronizedList(new ArrayList<>());
        AtomicLongArray sent = new AtomicLongArray(PARTITIONS);
        produceAtFixedRate(producer, producing, acked, sent);
        TidemarkConsumer exactOnA = consumer(a, EXACT_GROUP, POLL_RECORDS_ON_A);
        TidemarkConsumer timeOnA = consumer(a, TIME_GROUP, POLL_RECORDS_ON_A);
        AtomicReference<Map<TopicPartition, Long>> exactCommittedNow = new AtomicReference<>(Map.of());
        AtomicReference<Map<TopicPartition, Long>> timeCommittedNow = new AtomicReference<>(Map.of());
        ScheduledFuture<?> consumers = consuming.scheduleAtFixedRate(() -> {
            exactCommittedNow.set(pollAndCommit(exactOnA));
            timeCommittedNow.set(pollAndCommit(timeOnA));
        }, 0, CONSUME_INTERVAL_MS, TimeUnit.MILLISECONDS);
        long readyAtMs = System.currentTimeMillis() + 5_000;
        await().atMost(TIMEOUT).until(() -> {
            if (consumers.isDone()) {
                consumers.get(); // throws what stopped the groups
            }
            return System.currentTimeMillis() > readyAtMs
                    && mirrorState(adminB, EXACT_GROUP).checkpoints().size() == PARTITIONS
                    && mirrorState(adminB, TIME_GROUP).checkpoints().values().stream()
                    .filter(c -> c.getLastConsumedKnown()).count() == PARTITIONS;
        });
        consumers.cancel(false);
        consuming.submit(() -> { }).get(); // the last poll and commit are done: nothing is in flight at the kill
        exactOnA.close();
        timeOnA.close();
        Map<TopicPartition, Long> exactCommitted = exactCommittedNow.get();
        Map<TopicPartition, Long> timeCommitted = timeCommittedNow.get();
        assertTrue(acked.size() > 0 && acked.get(acked.size() - 1).atMs() > readyAtMs - 1_000,
                "the producer is still writing: " + acked.size() + " records acknowledged");
        source.killAll();
        long killedMs = System.currentTimeMillis();
        producing.shutdown();
        assertTrue(producing.awaitTermination(30, TimeUnit.SECONDS), "the producer stopped sending");
        producer.close(Duration.ZERO);

        // The mirror writes what it had fetched, then its heartbeats show A silent and what it did not copy.
        await().atMost(TIMEOUT).until(() -> {
            MirrorState state = mirrorState(adminB, EXACT_GROUP);
            return state.lastHeartbeat().filter(h -> h.getMirrorTimeMs() > killedMs + 1_000).isPresent()
                    && partitions().stream().allMatch(tp -> heldAtHeartbeat(state, tp)
                    .orElse(logEnd(adminB, tp)) == logEnd(adminB, tp));
        });

        // Exact mode: plan, apply twice, continue on B.
        Tidemark.Result text = failover("plan", b, EXACT_GROUP);
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().startsWith("Failover of group billing from cluster A to cluster B, planned at "),
                text.out());
        System.out.print(text.out());
        // The plan is checked against the state it was made from: the same when read before and after it. A CI run
        // once saw a checkpoint land after the heartbeats showed A silent (1,700 read, then 1,720 in the plan); such
        // a change is printed, with its checkpoint times, and the plan made again.
        AtomicReference<MirrorState> planState = new AtomicReference<>();
        AtomicReference<JsonObject> planJson = new AtomicReference<>();
        await().atMost(TIMEOUT).until(() -> {
            MirrorState before = mirrorState(adminB, EXACT_GROUP);
            JsonObject made = failoverJson("plan", b, EXACT_GROUP);
            MirrorState after = mirrorState(adminB, EXACT_GROUP);
            if (!before.checkpoints().equals(after.checkpoints())) {
                System.out.println("The checkpoints changed during the plan, " + killedMs + " ms being the kill: "
                        + checkpointTimes(before) + " -> " + checkpointTimes(after));
                return false;
            }
            planState.set(before);
            planJson.set(made);
            return true;
        });
        MirrorState exactState = planState.get();
        JsonObject plan = planJson.get();
        assertTrue(exactState.sourceLastHeardMs().orElseThrow() <= killedMs, "heartbeats show the silence");
        for (TopicPartition tp : partitions()) {
            JsonObject row = plan.getAsJsonArray("partitions").get(tp.partition()).getAsJsonObject();
            JsonObject checkpoint = row.getAsJsonObject("checkpoint");
            assertEquals("exact", row.get("mode").getAsString(), row.toString());
            long checkpointTarget = exactState.checkpoints().get(tp).getTargetOffset();
            if (checkpoint.get("checkpointOffset").isJsonNull()) {
                assertEquals(checkpointTarget, row.get("offset").getAsLong(), row.toString());
            } else {
                // Checkpointed while the mirror was behind the group: the copies it had not made yet lie between.
                assertEquals(checkpointTarget, checkpoint.get("checkpointOffset").getAsLong(), row.toString());
                assertTrue(checkpoint.get("mirrorBehind").getAsBoolean(), row.toString());
                assertTrue(row.get("offset").getAsLong() > checkpointTarget, row.toString());
            }
            assertEquals(exactState.checkpoints().get(tp).getSourceOffset(), checkpoint.get("sourceOffset").getAsLong());
            assertEquals(exactState.notCopied(tp), row.get("notCopied").getAsLong());
        }
        // What the planner reads of B through the brokers' API: its partitions hold A's copies and nothing else.
        TargetFacts facts = TargetFacts.over(adminB);
        for (TopicPartition tp : partitions()) {
            MirrorCheckpoint checkpoint = exactState.checkpoints().get(tp);
            OriginPartition origin = new OriginPartition(exactState.sourceCluster(), checkpoint.getSourceTopic(),
                    TopicIds.fromBytes(checkpoint.getSourceTopicId()), checkpoint.getPartition());
            OriginPartition otherPartition = new OriginPartition(exactState.sourceCluster(),
                    checkpoint.getSourceTopic(), TopicIds.fromBytes(checkpoint.getSourceTopicId()),
                    checkpoint.getPartition() + 1);
            long end = logEnd(adminB, tp);
            long lastOrigin = facts.lastCopy(tp, origin).orElseThrow().originOffset();
            assertTrue(facts.onlyCopiesBelow(tp, 0, end, origin, lastOrigin + 1), tp + " holds only copies of A");
            assertFalse(facts.onlyCopiesBelow(tp, 0, end, origin, lastOrigin), "the last copy is not below itself");
            assertFalse(facts.onlyCopiesBelow(tp, 0, end, otherPartition, Long.MAX_VALUE), "another origin's");
        }
        assertEquals("committed", failoverJson("apply", b, EXACT_GROUP).get("applied").getAsString());
        assertEquals("unchanged", failoverJson("apply", b, EXACT_GROUP).get("applied").getAsString(), "idempotent");
        List<ConsumerRecord> exactConsumed = consumeToEnd(b, EXACT_GROUP, adminB);
        Map<TopicPartition, Long> exactRereads = checkNoLossAndCountRereads(adminB, exactCommitted, exactConsumed);
        for (TopicPartition tp : partitions()) {
            JsonObject row = plan.getAsJsonArray("partitions").get(tp.partition()).getAsJsonObject();
            long committedAfterCheckpoint = exactCommitted.get(tp)
                    - row.getAsJsonObject("checkpoint").get("sourceOffset").getAsLong();
            assertTrue(exactRereads.get(tp) <= committedAfterCheckpoint, tp + ": " + exactRereads.get(tp) + " re-read, "
                    + committedAfterCheckpoint + " committed after the checkpoint");
            assertTrue(exactRereads.get(tp) <= row.get("rereadsAtMost").getAsLong(), "the plan's bound: " + row);
            if (!row.get("receiveTime").isJsonNull()) {
                ConsumerRecord first = exactConsumed.stream().filter(r -> r.topicPartition().equals(tp)).findFirst()
                        .orElseThrow();
                assertEquals(row.get("sendTime").getAsLong(), first.sendTimeMs(), "the plan shows the record there");
            }
        }
        System.out.println("Exact failover: re-read " + exactRereads + ", the plan estimated " + plan
                .getAsJsonArray("partitions").asList().stream().map(row -> row.getAsJsonObject().get("rereads")
                        + " (at most " + row.getAsJsonObject().get("rereadsAtMost") + ")").toList() + "; "
                + plan.get("notCopied") + " records not copied");

        // Apply is refused once the group's consumers commit on B.
        Tidemark.Result refused = failover("apply", b, EXACT_GROUP);
        List<GroupPartitionLag> onB = adminB.describeGroup(EXACT_GROUP).getPartitionsList();
        assertEquals(1, refused.exitCode());
        assertEquals("error: group 'billing' has active consumers on the target: it committed "
                + onB.stream().map(p -> p.getTopic() + "-" + p.getPartition()).collect(Collectors.joining(", "))
                + " in the last 60.000 s (--active-window), the latest at " + TIME.format(Instant.ofEpochMilli(onB
                .stream().mapToLong(GroupPartitionLag::getCommitTimeMs).max().orElseThrow()))
                + "; stop them first: apply would move the positions they read from\n", refused.err());

        // Apply is refused while the group has a live member on B; the plan names it.
        try (TidemarkConsumer member = new TidemarkConsumer(ConsumerConfig.builder(b).group(TIME_GROUP)
                .clientId("failover-drill").enableAutoCommit(false).build())) {
            member.subscribe(List.of(TOPIC), RebalanceListener.NONE);
            await().atMost(TIMEOUT).until(() -> {
                member.poll(Duration.ofMillis(200));
                return !member.assignment().isEmpty();
            });
            String members = failover("plan", b, TIME_GROUP, "--time", "last-consumed").out().lines()
                    .filter(line -> line.startsWith("Members of group audit on the target: ")).findFirst()
                    .orElseThrow();
            assertTrue(members.contains(" (client failover-drill, host 127.0.0.1:"), members);
            Tidemark.Result withMember = failover("apply", b, TIME_GROUP, "--time", "last-consumed");
            assertEquals(1, withMember.exitCode());
            assertTrue(withMember.err().startsWith("error: group 'audit' has 1 live member(s) on the target: "),
                    withMember.err());
        }

        // Time mode: T is the last consumed record's time from the checkpoint, X auto.
        System.out.print(failover("plan", b, TIME_GROUP, "--time", "last-consumed").out());
        JsonObject timePlan = failoverJson("apply", b, TIME_GROUP, "--time", "last-consumed");
        assertEquals("committed", timePlan.get("applied").getAsString());
        assertEquals("auto", timePlan.getAsJsonObject("buffer").get("derivation").getAsString());
        List<ConsumerRecord> timeConsumed = consumeToEnd(b, TIME_GROUP, adminB);
        Map<TopicPartition, Long> timeRereads = checkNoLossAndCountRereads(adminB, timeCommitted, timeConsumed);
        for (TopicPartition tp : partitions()) {
            JsonObject row = timePlan.getAsJsonArray("partitions").get(tp.partition()).getAsJsonObject();
            assertEquals("time", row.get("mode").getAsString());
            assertEquals("last-consumed", row.getAsJsonObject("time").get("timeFrom").getAsString());
            long lookupMs = row.getAsJsonObject("time").get("lookupTime").getAsLong();
            List<ConsumerRecord> all = readAll(adminB, tp);
            long offset = row.get("offset").getAsLong();
            assertTrue(timeConsumed.stream().filter(r -> r.topicPartition().equals(tp))
                    .allMatch(r -> r.receiveTimeMs() >= lookupMs), "no record older than T - X is read");
            assertTrue(offset == 0 || all.get((int) offset - 1).receiveTimeMs() < lookupMs,
                    "the first record at or after T - X: " + row);
        }
        System.out.println("Time failover: re-read " + timeRereads + " with X = "
                + timePlan.getAsJsonObject("buffer").get("ms") + " ms");

        // Bad input.
        Tidemark.Result unknownGroup = failover("plan", b, "nobody");
        assertEquals(1, unknownGroup.exitCode());
        assertEquals("error: UNKNOWN_GROUP: group 'nobody' has no checkpoint from cluster A on the target (groups with "
                + "checkpoints from A: audit, billing); the mirror checkpoints the groups that match its --groups. To "
                + "move a group without checkpoints by time, name its topics with --topic\n", unknownGroup.err());
        Tidemark.Result future = failover("plan", b, EXACT_GROUP, "--time", "2999-01-01T00:00:00Z");
        assertEquals(1, future.exitCode());
        assertTrue(future.err().matches("error: --time 2999-01-01T00:00:00.000Z is in the future \\(now is "
                + "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d.\\d{3}Z\\): T is a time the source cluster reached before it "
                + "went silent\n"), future.err());
        Tidemark.Result unreachable = failover("plan", "127.0.0.1:" + FreePorts.freeBasePort(), EXACT_GROUP);
        assertEquals(1, unreachable.exitCode());
        assertTrue(unreachable.err().startsWith("error: NOT_AVAILABLE: no broker of bootstrap [127.0.0.1:"),
                unreachable.err());

        // A comes back with every record it acknowledged and every one the mirror saw committed; the plan counted
        // what A took with it, short of it by no more than what A got in its last seconds.
        long[] endsOfB = partitions().stream().mapToLong(tp -> logEnd(adminB, tp)).toArray(); // the mirror resumes
        TidemarkAdmin adminAgain = closing(new TidemarkAdmin(AdminConfig.builder(source.restartAll())
                .requestTimeoutMs(3_000).build()));
        long[] ackedEnds = logEndsAckedBy(acked, Long.MAX_VALUE);
        long[] ackedBeforeStaleness = logEndsAckedBy(acked, killedMs - LOG_END_STALENESS_MS);
        long[] endsOfA = new long[PARTITIONS];
        await().atMost(TIMEOUT).ignoreException(TidemarkException.class).until(() -> partitions().stream()
                .allMatch(tp -> {
                    // A replica answers from what it applied, and a new leader may not have applied its
                    // predecessor's last entries yet: the highest answer counts.
                    endsOfA[tp.partition()] = Math.max(endsOfA[tp.partition()], logEnd(adminAgain, tp));
                    return endsOfA[tp.partition()] >= Math.max(ackedEnds[tp.partition()],
                            heldAtHeartbeat(exactState, tp).orElse(0) + exactState.notCopied(tp));
                }));
        for (TopicPartition tp : partitions()) {
            long lost = endsOfA[tp.partition()] - endsOfB[tp.partition()];
            long notCopied = plan.getAsJsonArray("partitions").get(tp.partition()).getAsJsonObject()
                    .get("notCopied").getAsLong();
            assertTrue(notCopied > 0, tp + ": the mirror was behind when A died");
            assertTrue(notCopied <= lost, tp + ": the plan counts " + notCopied + " records not copied; A held "
                    + lost + " that B does not");
            long lateOrUnacknowledged = sent.get(tp.partition()) - ackedBeforeStaleness[tp.partition()];
            assertTrue(lost - notCopied <= lateOrUnacknowledged, tp + ": A held " + lost + " records B does not, "
                    + "the plan counts " + notCopied + "; only " + lateOrUnacknowledged + " were sent in A's last "
                    + LOG_END_STALENESS_MS + " ms or never acknowledged");
            System.out.println(tp + ": the plan counted " + notCopied + " records not copied; A held " + lost
                    + " that B does not (" + sent.get(tp.partition()) + " sent)");
        }
    }

    /**
     * What a new user found (issue 10): a group that read only partition 1 of A must not lose partition 0 on B, and a
     * plan that would pass over records a group had not consumed names them and is applied only when allowed. A and
     * B are one broker each, the mirror copies all 1,000 records; group {@code reader} consumed 400 of partition 1
     * and never committed partition 0; group {@code early} committed partition 0 at 100, then partition 1 at 450.
     */
    @Test
    void aPartitionTheGroupNeverCommittedStaysUncommittedAndSkipsAreNamedAndRefused() throws Exception {
        BrokerProcess brokerA = broker("A");
        String a = brokerA.bootstrap();
        String b = broker("B").bootstrap();
        TidemarkAdmin adminA = closing(new TidemarkAdmin(AdminConfig.builder(a).requestTimeoutMs(15_000).build()));
        TidemarkAdmin adminB = closing(new TidemarkAdmin(AdminConfig.builder(b).requestTimeoutMs(5_000).build()));
        adminA.createTopic(TOPIC, PARTITIONS, 0, Map.of());
        closing(MirrorProcess.startTakingTargetName(dir, "mirror", a, "A", b));
        TopicPartition p0 = new TopicPartition(TOPIC, 0);
        TopicPartition p1 = new TopicPartition(TOPIC, 1);
        produce(a, p0, 0, 500);
        produce(a, p1, 0, 500);
        TidemarkConsumer reader = closing(new TidemarkConsumer(ConsumerConfig.builder(a).group("reader")
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).build()));
        reader.assign(List.of(p1));
        await().atMost(TIMEOUT).until(() -> {
            reader.poll(Duration.ofMillis(200));
            return reader.position(p1) >= 400;
        });
        reader.commitSync(Map.of(p1, new OffsetAndMetadata(400)));
        adminA.commitOffsets("early", Map.of(p0, new OffsetAndMetadata(100)));
        await().atMost(TIMEOUT).until(() -> mirrorState(adminB, "early").checkpoints().containsKey(p0));
        adminA.commitOffsets("early", Map.of(p1, new OffsetAndMetadata(450)));
        await().atMost(TIMEOUT).ignoreException(TidemarkException.class).until(() -> {
            MirrorState readerState = mirrorState(adminB, "reader");
            MirrorState earlyState = mirrorState(adminB, "early");
            return logEnd(adminB, p0) == 500 && logEnd(adminB, p1) == 500
                    && readerState.checkpoints().containsKey(p0) && readerState.checkpoints().get(p0).getNoCommit()
                    && readerState.checkpoints().containsKey(p1)
                    && earlyState.checkpoints().containsKey(p1)
                    && earlyState.checkpoints().get(p1).getSourceOffset() == 450;
        });
        reader.close();
        brokerA.kill();
        long killedMs = System.currentTimeMillis();
        await().atMost(TIMEOUT).until(() -> mirrorState(adminB, "reader").lastHeartbeat()
                .filter(h -> h.getMirrorTimeMs() > killedMs + 1_000).isPresent());

        // reader: partition 0 stays uncommitted (its reset policy reads all of it on B), partition 1 exact at 400.
        Tidemark.Result text = failover("plan", b, "reader");
        assertEquals(0, text.exitCode(), text.err());
        System.out.print(text.out());
        assertTrue(text.out().contains("no commit on A, checkpoint made "), text.out());
        JsonObject plan = failoverJson("plan", b, "reader");
        JsonObject row0 = plan.getAsJsonArray("partitions").get(0).getAsJsonObject();
        JsonObject row1 = plan.getAsJsonArray("partitions").get(1).getAsJsonObject();
        assertEquals("none", row0.get("mode").getAsString(), row0.toString());
        assertTrue(row0.get("offset").isJsonNull(), row0.toString());
        assertEquals("exact", row1.get("mode").getAsString(), row1.toString());
        assertEquals(400, row1.get("offset").getAsLong(), row1.toString());
        JsonObject totals = plan.getAsJsonObject("totals");
        assertEquals(0, totals.get("skipped").getAsLong());
        assertEquals(0, totals.get("notCopied").getAsLong());
        assertEquals("committed", failoverJson("apply", b, "reader").get("applied").getAsString());
        assertEquals(List.of(p1), adminB.describeGroup("reader").getPartitionsList().stream()
                .map(c -> new TopicPartition(c.getTopic(), c.getPartition())).toList(), "partition 0 not committed");
        List<ConsumerRecord> consumed = consumeToEnd(b, "reader", adminB);
        assertEquals(LongStream.range(0, 500).boxed().toList(), consumed.stream()
                .filter(r -> r.partition() == 0).map(FailoverIT::originOffset).toList(), "all of partition 0");
        assertEquals(LongStream.range(400, 500).boxed().toList(), consumed.stream()
                .filter(r -> r.partition() == 1).map(FailoverIT::originOffset).toList(), "partition 1 from 400");

        // early, by the silence with no buffer: both partitions would resume at the log end, passing over records it
        // had not consumed (100 to 499 and 450 to 499): named, and refused unless allowed.
        JsonObject skipping = failoverJson("plan", b, "early", "--time", "source-silent", "--buffer", "0s");
        List<Long> skipped = skipping.getAsJsonArray("partitions").asList().stream()
                .map(row -> row.getAsJsonObject().get("skipped").getAsLong()).toList();
        assertEquals(List.of(400L, 50L), skipped, skipping.toString());
        assertEquals(450, skipping.getAsJsonObject("totals").get("skipped").getAsLong());
        Tidemark.Result refused = failover("apply", b, "early", "--time", "source-silent", "--buffer", "0s");
        assertEquals(1, refused.exitCode());
        assertEquals("error: the plan skips records group 'early' had not consumed on A: orders-0: 400 (from its "
                + "position at the last checkpoint to T - X), orders-1: 50 (from its position at the last checkpoint "
                + "to T - X); resume earlier (an earlier --time, or --time last-consumed where it has checkpoints), or "
                + "give --allow-skip to skip them\n", refused.err());
        assertEquals(ErrorCode.UNKNOWN_GROUP, assertThrows(TidemarkException.class,
                () -> adminB.describeGroup("early")).code(), "nothing was committed");

        // early, exactly: partition 0 at 100, committed long before the failure, partition 1 at 450.
        JsonObject exact = failoverJson("apply", b, "early");
        assertEquals(List.of(100L, 450L), exact.getAsJsonArray("partitions").asList().stream()
                .map(row -> row.getAsJsonObject().get("offset").getAsLong()).toList(), exact.toString());
        List<ConsumerRecord> early = consumeToEnd(b, "early", adminB);
        assertEquals(400, early.stream().filter(r -> r.partition() == 0).count());
        assertEquals(50, early.stream().filter(r -> r.partition() == 1).count());
    }

    /**
     * Records the source's retention removed before the mirror copied them are named in the plan as lost: the mirror
     * copies 100 records of A and stops; A takes 200 more and its retention removes every closed segment; the mirror
     * starts again and finds the hole; A dies. A group committed at 50 lost the records of the hole.
     */
    @Test
    void recordsTheSourcesRetentionRemovedBeforeTheyWereCopiedAreCountedAsLost() throws Exception {
        BrokerProcess brokerA = broker("A", "retention.check.interval.ms=100");
        String a = brokerA.bootstrap();
        String b = broker("B").bootstrap();
        TidemarkAdmin adminA = closing(new TidemarkAdmin(AdminConfig.builder(a).requestTimeoutMs(15_000).build()));
        TidemarkAdmin adminB = closing(new TidemarkAdmin(AdminConfig.builder(b).requestTimeoutMs(5_000).build()));
        TopicPartition tp = new TopicPartition("retained", 0);
        adminA.createTopic(tp.topic(), 1, 0, Map.of("segment.bytes", "1000"));
        MirrorProcess mirror = MirrorProcess.startTakingTargetName(dir, "mirror", a, "A", b);
        produce(a, tp, 0, 100);
        adminA.commitOffsets("g", Map.of(tp, new OffsetAndMetadata(50)));
        await().atMost(TIMEOUT).ignoreException(TidemarkException.class).until(() -> logEnd(adminB, tp) == 100
                && mirrorState(adminB, "g").checkpoints().containsKey(tp));
        mirror.close();

        produce(a, tp, 100, 200);
        adminA.alterTopicConfig(tp.topic(), Map.of("retention.bytes", "0"), List.of());
        await().atMost(TIMEOUT).until(() -> adminA.listOffsets(tp, OffsetSpec.earliest()).logStartOffset() > 100);
        long logStartOfA = adminA.listOffsets(tp, OffsetSpec.earliest()).logStartOffset();
        long restartedMs = System.currentTimeMillis();
        closing(MirrorProcess.startTakingTargetName(dir, "mirror", a, "A", b));
        await().atMost(TIMEOUT).ignoreException(TidemarkException.class).until(() -> {
            MirrorState state = mirrorState(adminB, "g");
            return logEnd(adminB, tp) == 100 + 300 - logStartOfA && state.gaps().containsKey(tp)
                    && state.checkpoints().get(tp).getCheckpointTimeMs() > restartedMs
                    && !state.checkpoints().get(tp).getMirrorBehind();
        });
        assertEquals(List.of(List.of(100L, logStartOfA)), mirrorState(adminB, "g").gaps().get(tp).stream()
                .map(gap -> List.of(gap.getFromOffset(), gap.getToOffset())).toList());
        brokerA.kill();
        long killedMs = System.currentTimeMillis();
        await().atMost(TIMEOUT).until(() -> mirrorState(adminB, "g").lastHeartbeat()
                .filter(h -> h.getMirrorTimeMs() > killedMs + 1_000).isPresent());

        Tidemark.Result text = failover("plan", b, "g");
        assertEquals(0, text.exitCode(), text.err());
        System.out.print(text.out());
        assertTrue(text.out().contains("; removed by retention: " + (logStartOfA - 100) + " on A before copied, 0 on B"),
                text.out());
        JsonObject row = failoverJson("plan", b, "g").getAsJsonArray("partitions").get(0).getAsJsonObject();
        assertEquals(50, row.get("offset").getAsLong(), row.toString());
        assertEquals(logStartOfA - 100, row.get("removedBySource").getAsLong(), row.toString());
    }

    /**
     * Sends {@code count} records to {@code tp} of a cluster, with values from {@code first} on, in batches of 10
     * (so small segments roll between them), and waits for each batch.
     */
    private static void produce(String bootstrap, TopicPartition tp, int first, int count) {
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap).build())) {
            for (int i = first; i < first + count; i++) {
                producer.send(new ProducerRecord(tp.topic(), tp.partition(), null, ("record-" + i).getBytes(),
                        System.currentTimeMillis()));
                if ((i - first) % 10 == 9) {
                    producer.flush();
                }
            }
            producer.flush();
        }
    }

    /** The log end offset of a partition of a cluster. */
    private static long logEnd(TidemarkAdmin admin, TopicPartition tp) {
        return admin.listOffsets(tp, OffsetSpec.latest()).logEndOffset();
    }

    /** The source offset up to which the last heartbeat says B holds a partition; empty when it was not behind. */
    private static OptionalLong heldAtHeartbeat(MirrorState state, TopicPartition tp) {
        return state.lastHeartbeat().stream().flatMap(h -> h.getPartitionsBehindList().stream())
                .filter(behind -> behind.getTargetTopic().equals(tp.topic()) && behind.getPartition() == tp.partition())
                .mapToLong(behind -> behind.getSourceLogEndOffset() - behind.getRecords()).findFirst();
    }

    /** Per partition, the offset after the last record the producer had acknowledged by {@code byMs}. */
    private static long[] logEndsAckedBy(List<Ack> acked, long byMs) {
        long[] ends = new long[PARTITIONS];
        synchronized (acked) {
            for (Ack ack : acked) {
                if (ack.atMs() <= byMs) {
                    ends[ack.partition()] = Math.max(ends[ack.partition()], ack.offset() + 1);
                }
            }
        }
        return ends;
    }
}
