package io.tidemark.it;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
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
import io.tidemark.mirror.failover.MirrorState;
import io.tidemark.mirror.failover.MirrorStateReader;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.v1.GroupPartitionLag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The disaster drill: cluster A and cluster B (one broker process each), a mirror A -> B, a producer writing to A
 * with SendTime and two consumer groups committing on A, one moved exactly and one by time. A's broker is killed
 * mid-stream, right after both groups committed; then {@code tidemark failover plan} and {@code apply} move the groups
 * to B, where they continue. Checked for each: every record the group had not committed on A that the mirror had
 * copied is consumed on B (no loss); re-reads are counted and bounded (exact: by what the group committed after the
 * last checkpoint; time: no record older than T - X is read). Also apply's idempotence and refusal, and the errors of
 * bad input.
 */
class FailoverIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 2;
    private static final String EXACT_GROUP = "billing";
    private static final String TIME_GROUP = "audit";
    /** Records a consumer of A takes per poll: fewer than the producer writes meanwhile, so the groups lag. */
    private static final int POLL_RECORDS_ON_A = 40;
    private static final int POLL_RECORDS_ON_B = 10_000;
    /** How the failover tool prints times. */
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);

    @TempDir
    Path dir;
    private final List<AutoCloseable> running = new ArrayList<>();

    @AfterEach
    void stopAll() throws Exception {
        for (int i = running.size() - 1; i >= 0; i--) {
            running.get(i).close();
        }
    }

    private BrokerProcess broker(String name) throws IOException {
        Path home = Files.createDirectories(dir.resolve(name));
        BrokerProcess broker = BrokerProcess.start(home.resolve("data"), home);
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

    /** Writes rounds of 20 records per partition with SendTime set, each round acknowledged, until stopped or failed. */
    private static CompletableFuture<Long> produceUntil(TidemarkProducer producer, AtomicBoolean stop) {
        return CompletableFuture.supplyAsync(() -> {
            long sent = 0;
            try {
                while (!stop.get()) {
                    List<CompletableFuture<RecordMetadata>> round = new ArrayList<>();
                    for (int i = 0; i < 20; i++) {
                        for (int p = 0; p < PARTITIONS; p++) {
                            byte[] value = ("v-" + p + "-" + sent).getBytes(StandardCharsets.UTF_8);
                            round.add(producer.send(new ProducerRecord(TOPIC, p, null, value,
                                    System.currentTimeMillis() - 1_000)));
                        }
                        sent++;
                    }
                    CompletableFuture.allOf(round.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                // A was killed: the round in flight fails; the producer stops there.
            }
            return sent;
        });
    }

    /** One poll of a group on A and a synchronous commit; the committed offsets afterwards. */
    private static Map<TopicPartition, Long> pollAndCommit(TidemarkConsumer consumer) {
        consumer.poll(Duration.ofMillis(50));
        consumer.commitSync();
        Map<TopicPartition, Long> committed = new HashMap<>();
        partitions().forEach(tp -> committed.put(tp, consumer.position(tp)));
        return committed;
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

    @Test
    void aGroupMovedToTheMirrorAfterItsClusterDiedLosesNothingAndRereadsLittle() throws Exception {
        BrokerProcess brokerA = broker("A");
        String a = brokerA.bootstrap();
        String b = broker("B").bootstrap();
        TidemarkAdmin adminA = closing(new TidemarkAdmin(AdminConfig.builder(a).requestTimeoutMs(3_000).build()));
        TidemarkAdmin adminB = closing(new TidemarkAdmin(AdminConfig.builder(b).requestTimeoutMs(5_000).build()));
        adminA.createTopic(TOPIC, PARTITIONS, 0, Map.of());
        closing(MirrorProcess.start(dir, "mirror", a, "A", b, "B"));
        await().atMost(TIMEOUT).ignoreException(TidemarkException.class)
                .until(() -> adminB.describeTopics(List.of(TOPIC)).size() == 1);

        TidemarkProducer producer = closing(new TidemarkProducer(ProducerConfig.builder(a).requestTimeoutMs(1_000)
                .deliveryTimeoutMs(3_000).build()));
        AtomicBoolean stop = new AtomicBoolean();
        CompletableFuture<Long> produced = produceUntil(producer, stop);
        TidemarkConsumer exactOnA = consumer(a, EXACT_GROUP, POLL_RECORDS_ON_A);
        TidemarkConsumer timeOnA = consumer(a, TIME_GROUP, POLL_RECORDS_ON_A);
        Map<TopicPartition, Long> exactCommitted = Map.of();
        Map<TopicPartition, Long> timeCommitted = Map.of();
        long readyAtMs = System.currentTimeMillis() + 5_000;
        long deadlineMs = readyAtMs + TIMEOUT.toMillis();
        for (int i = 0; ; i++) {
            exactCommitted = pollAndCommit(exactOnA);
            timeCommitted = pollAndCommit(timeOnA);
            assertTrue(System.currentTimeMillis() < deadlineMs, "the mirror checkpointed both groups in time");
            if (i % 20 == 19 && System.currentTimeMillis() > readyAtMs
                    && mirrorState(adminB, EXACT_GROUP).checkpoints().size() == PARTITIONS
                    && mirrorState(adminB, TIME_GROUP).checkpoints().values().stream()
                    .filter(c -> c.getLastConsumedKnown()).count() == PARTITIONS) {
                break;
            }
        }
        brokerA.kill();
        long killedMs = System.currentTimeMillis();
        stop.set(true);
        long sent = produced.get(30, TimeUnit.SECONDS);
        producer.close(Duration.ZERO);
        exactOnA.close();
        timeOnA.close();
        await().atMost(TIMEOUT).until(() -> mirrorState(adminB, EXACT_GROUP).lastHeartbeat()
                .filter(h -> h.getMirrorTimeMs() > killedMs + 1_000).isPresent());
        MirrorState exactState = mirrorState(adminB, EXACT_GROUP);
        assertTrue(exactState.sourceLastHeardMs().orElseThrow() <= killedMs, "heartbeats show the silence");

        // Exact mode: plan, apply twice, continue on B.
        Tidemark.Result text = failover("plan", b, EXACT_GROUP);
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().startsWith("Failover of group billing from cluster A to cluster B, planned at "),
                text.out());
        System.out.print(text.out());
        JsonObject plan = failoverJson("plan", b, EXACT_GROUP);
        long copiedTotal = 0;
        for (TopicPartition tp : partitions()) {
            JsonObject row = plan.getAsJsonArray("partitions").get(tp.partition()).getAsJsonObject();
            JsonObject checkpoint = row.getAsJsonObject("checkpoint");
            assertEquals("exact", row.get("mode").getAsString(), row.toString());
            assertEquals(exactState.checkpoints().get(tp).getTargetOffset(), row.get("offset").getAsLong(), row.toString());
            assertEquals(exactState.checkpoints().get(tp).getSourceOffset(), checkpoint.get("sourceOffset").getAsLong());
            assertEquals(exactState.notCopied(tp), row.get("notCopied").getAsLong());
            copiedTotal += adminB.listOffsets(tp, OffsetSpec.latest()).logEndOffset();
        }
        assertTrue(plan.get("notCopied").getAsLong() <= PARTITIONS * sent - copiedTotal, "not copied: at most what "
                + "was sent and is not on B: " + plan);
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
            assertTrue(exactRereads.get(tp) <= row.get("rereads").getAsLong(), "the plan's bound: " + row);
            if (!row.get("receiveTime").isJsonNull()) {
                ConsumerRecord first = exactConsumed.stream().filter(r -> r.topicPartition().equals(tp)).findFirst()
                        .orElseThrow();
                assertEquals(row.get("sendTime").getAsLong(), first.sendTimeMs(), "the plan shows the record there");
            }
        }
        System.out.println("Exact failover: re-read " + exactRereads + "; " + plan.get("notCopied")
                + " records not copied");

        // Apply is refused once the group's consumers commit on B.
        Tidemark.Result refused = failover("apply", b, EXACT_GROUP);
        List<GroupPartitionLag> onB = adminB.describeGroup(EXACT_GROUP).getPartitionsList();
        assertEquals(1, refused.exitCode());
        assertEquals("error: group 'billing' has active consumers on the target: it committed "
                + onB.stream().map(p -> p.getTopic() + "-" + p.getPartition()).collect(Collectors.joining(", "))
                + " in the last 60.000 s (--active-window), the latest at " + TIME.format(Instant.ofEpochMilli(onB
                .stream().mapToLong(GroupPartitionLag::getCommitTimeMs).max().orElseThrow()))
                + "; stop them first: apply would move the positions they read from\n", refused.err());

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
    }
}
