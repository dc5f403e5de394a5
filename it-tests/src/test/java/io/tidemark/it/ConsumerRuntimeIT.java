package io.tidemark.it;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ConsumerRuntime;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.Outcome;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordHandler;
import io.tidemark.client.api.RetryHeaders;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Header;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The consumer runtime's commit modes and retries on a broker alone (in this JVM): Tracked mode commits below
 * unfinished work while handlers complete out of order, keeps its partitions while a handler is slower than the
 * session timeout, and a restart redelivers only the unfinished records; retries go through the topic with the attempt
 * header and end in the dead-letter topic; Auto mode refuses a retry without a retry path and Tracked mode delivers it
 * again in place; a handler that throws stops the runtime below its record.
 */
class ConsumerRuntimeIT {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private InJvmCluster cluster;
    private TidemarkAdmin admin;

    @BeforeEach
    void start() throws Exception {
        cluster = InJvmCluster.start(dir, 1, Map.of("group.consumer.heartbeat.interval.ms", "200",
                "group.consumer.session.timeout.ms", "3000"));
        admin = new TidemarkAdmin(AdminConfig.builder(cluster.bootstrap()).build());
    }

    @AfterEach
    void stop() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void trackedModeCommitsBelowUnfinishedWorkAndARestartRedeliversOnlyThatWork() throws Exception {
        admin.createTopic("orders", 3, 1, Map.of());
        produce("orders", 3, 20, 0);
        TopicPartition p0 = new TopicPartition("orders", 0);
        Set<String> held = Set.of("orders-0-5", "orders-0-12");
        CountDownLatch never = new CountDownLatch(1);
        Set<String> handled = ConcurrentHashMap.newKeySet();
        RecordHandler holding = record -> {
            String value = text(record.value());
            if (held.contains(value)) {
                never.await();
            }
            handled.add(value);
            return Outcome.ack();
        };
        ConsumerRuntime first = ConsumerRuntime.builder(consumer("tracked"), holding)
                .topics(List.of("orders")).mode(ConsumerRuntime.CommitMode.TRACKED)
                .ordering(ConsumerRuntime.Ordering.KEY).workers(4).closeTimeout(Duration.ofSeconds(1)).start();
        try {
            await().atMost(WAIT).until(() -> handled.size() == 58
                    && committed("tracked", p0).equals(new OffsetAndMetadata(5, "tracked1 15 7")));
            assertEquals(new OffsetAndMetadata(20), committed("tracked", new TopicPartition("orders", 1)));
            assertEquals(new OffsetAndMetadata(20), committed("tracked", new TopicPartition("orders", 2)));
            // Two handlers stay blocked for longer than the session timeout: the member keeps its partitions and
            // nothing is delivered twice.
            await().during(Duration.ofSeconds(5)).atMost(WAIT).until(() -> first.assignment().size() == 3
                    && first.counts().delivered() == 60);
        } finally {
            first.close();
        }
        assertEquals(new OffsetAndMetadata(5, "tracked1 15 7"), committed("tracked", p0),
                "closing with two deliveries unfinished commits below the earliest of them");

        List<String> redelivered = Collections.synchronizedList(new ArrayList<>());
        try (ConsumerRuntime second = ConsumerRuntime.builder(consumer("tracked"), record -> {
            redelivered.add(text(record.value()));
            return Outcome.ack();
        }).topics(List.of("orders")).mode(ConsumerRuntime.CommitMode.TRACKED).start()) {
            await().atMost(WAIT).until(() -> committed("tracked", p0).equals(new OffsetAndMetadata(20)));
            assertEquals(List.of("orders-0-5", "orders-0-12"), redelivered);
            assertEquals(13, second.counts().skipped(), "6..11 and 13..19 were completed before the restart");
            assertEquals(2, second.counts().delivered());
        }
    }

    @Test
    void aPartitionMovedWhileItsHandlerIsBlockedGoesOnAtTheNewOwnerAndTheOldDeliveryChangesNothing() throws Exception {
        admin.createTopic("shipments", 4, 1, Map.of());
        produce("shipments", 4, 40, 0);
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger blocked = new AtomicInteger();
        Map<String, List<String>> handledBy = new ConcurrentHashMap<>();
        ConsumerRuntime first = ConsumerRuntime.builder(consumer("moving"), record -> {
            blocked.incrementAndGet();
            gate.await();
            handledBy.computeIfAbsent(text(record.value()), v -> Collections.synchronizedList(new ArrayList<>()))
                    .add("first");
            return Outcome.ack();
        }).topics(List.of("shipments")).mode(ConsumerRuntime.CommitMode.TRACKED).workers(4).start();
        try {
            // Every partition's first record is with a blocked handler.
            await().atMost(WAIT).until(() -> first.assignment().size() == 4 && blocked.get() == 4);
            try (ConsumerRuntime second = ConsumerRuntime.builder(consumer("moving"), record -> {
                handledBy.computeIfAbsent(text(record.value()), v -> Collections.synchronizedList(new ArrayList<>()))
                        .add("second");
                return Outcome.ack();
            }).topics(List.of("shipments")).mode(ConsumerRuntime.CommitMode.TRACKED).start()) {
                // The first gives two partitions up although all its handlers are blocked.
                await().atMost(WAIT).until(() -> first.assignment().size() == 2 && second.assignment().size() == 2);
                Set<TopicPartition> moved = second.assignment();
                for (TopicPartition tp : moved) {
                    await().atMost(WAIT).until(() -> committed("moving", tp).offset() == 40);
                }
                gate.countDown();
                for (TopicPartition tp : first.assignment()) {
                    await().atMost(WAIT).until(() -> committed("moving", tp).offset() == 40);
                }
                await().during(Duration.ofSeconds(1)).atMost(WAIT).until(() -> moved.stream()
                        .allMatch(tp -> committed("moving", tp).equals(new OffsetAndMetadata(40))));
                for (int p = 0; p < 4; p++) {
                    boolean wasMoved = moved.contains(new TopicPartition("shipments", p));
                    for (int i = 0; i < 40; i++) {
                        List<String> by = handledBy.get("shipments-" + p + "-" + i);
                        List<String> expected = !wasMoved ? List.of("first")
                                : i == 0 ? List.of("second", "first") : List.of("second");
                        assertEquals(expected, by, "shipments-" + p + "-" + i);
                    }
                }
            }
        } finally {
            first.close();
        }
    }

    /**
     * In each mode: payments-0-3 answers retry(), payments-0-7's handler throws (which counts as retry()); in
     * Transactional mode the copies go into the windows' transactions.
     */
    @ParameterizedTest
    @EnumSource(ConsumerRuntime.CommitMode.class)
    void retriesGoThroughTheTopicWithTheAttemptHeaderAndEndInTheDeadLetterTopic(ConsumerRuntime.CommitMode mode)
            throws Exception {
        admin.createTopic("payments", 1, 1, Map.of());
        admin.createTopic("payments.dlq", 1, 1, Map.of());
        produce("payments", 1, 10, 1_000);
        Map<String, List<Integer>> attempts = new ConcurrentHashMap<>();
        RecordHandler failing = record -> {
            String value = text(record.value());
            attempts.computeIfAbsent(value, v -> Collections.synchronizedList(new ArrayList<>()))
                    .add(RetryHeaders.attempt(record.headers()));
            if (value.equals("payments-0-7")) {
                throw new IllegalStateException("card declined");
            }
            return value.equals("payments-0-3") ? Outcome.retry() : Outcome.ack();
        };
        TopicPartition payments = new TopicPartition("payments", 0);
        MetricRegistry metrics = new MetricRegistry();
        ProducerConfig.Builder producer = ProducerConfig.builder(cluster.bootstrap());
        if (mode == ConsumerRuntime.CommitMode.TRANSACTIONAL) {
            producer.transactionalId("retrying-1");
        }
        try (ConsumerRuntime runtime = ConsumerRuntime.builder(consumer("retrying"), failing)
                .topics(List.of("payments")).mode(mode).maxAttempts(3)
                .deadLetterTopic("payments.dlq").producer(producer.build())
                .metrics(metrics).start()) {
            // past the last of the 14 records (in Transactional mode markers take offsets between them), and both
            // dead letters written: in Auto mode the position passes a record when it is handed out, before its
            // handler ran
            await().atMost(WAIT).until(() -> {
                List<ConsumerRecord> stored = admin.read(payments, 0, 1 << 20);
                return stored.size() == 14
                        && committed("retrying", payments).offset() == stored.get(13).offset() + 1
                        && runtime.counts().deadLettered() == 2;
            });
            assertEquals(List.of(1, 2, 3), attempts.get("payments-0-3"));
            assertEquals(List.of(1, 2, 3), attempts.get("payments-0-7"));
            assertEquals(List.of(1), attempts.get("payments-0-4"));
            assertEquals(10, attempts.size());
            assertEquals(4, runtime.counts().retryCopies());
            assertEquals(2, runtime.counts().deadLettered());
            assertEquals(3, runtime.counts().handlerErrors());
            assertEquals(4L, metrics.getGauges().get("tidemark.runtime.retrying.retry.copies").getValue());
            assertEquals(2L, metrics.getGauges().get("tidemark.runtime.retrying.dead.lettered").getValue());
            assertEquals(14L, metrics.getGauges().get("tidemark.runtime.retrying.delivered").getValue());
            assertEquals(1, metrics.getGauges().get("tidemark.runtime.retrying.partitions.assigned").getValue());
        }
        assertEquals(Set.of(), metrics.getNames(), "the runtime's metrics go with it");
        List<ConsumerRecord> log = admin.read(payments, 0, 1 << 20);
        assertEquals(14, log.size(), "10 records and 2 copies of each retried one");
        List<ConsumerRecord> copies = log.subList(10, 14);
        for (ConsumerRecord copy : copies) {
            int index = Integer.parseInt(text(copy.value()).substring("payments-0-".length()));
            assertEquals(1_000 + index, copy.sendTimeMs(), "a copy keeps the SendTime");
            assertEquals(text(copy.value()), text(copy.key()), "and the key");
        }
        List<ConsumerRecord> dead = admin.read(new TopicPartition("payments.dlq", 0), 0, 1 << 20);
        assertEquals(2, dead.size());
        for (ConsumerRecord letter : dead) {
            String value = text(letter.value());
            assertTrue(value.equals("payments-0-3") || value.equals("payments-0-7"), value);
            long lastAttemptOffset = copies.stream().filter(c -> text(c.value()).equals(value)
                    && RetryHeaders.attempt(c.headers()) == 3).findFirst().orElseThrow().offset();
            assertEquals(List.of(header(RetryHeaders.ATTEMPT, "3"),
                    header(RetryHeaders.DEAD_LETTER_MESSAGE, value.equals("payments-0-3")
                            ? "the handler asked for a retry" : "java.lang.IllegalStateException: card declined"),
                    header(RetryHeaders.DEAD_LETTER_TOPIC, "payments"),
                    header(RetryHeaders.DEAD_LETTER_PARTITION, "0"),
                    header(RetryHeaders.DEAD_LETTER_OFFSET, Long.toString(lastAttemptOffset))), letter.headers());
            assertEquals(1_000 + Integer.parseInt(value.substring("payments-0-".length())), letter.sendTimeMs());
        }
    }

    @Test
    void aSeekRedeliversFromTheNewPositionAndDropsWhatWasQueued() throws Exception {
        admin.createTopic("rewind", 1, 1, Map.of());
        produce("rewind", 1, 5, 0);
        TopicPartition rewind = new TopicPartition("rewind", 0);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger blocked = new AtomicInteger();
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        try (ConsumerRuntime runtime = ConsumerRuntime.builder(consumer("rewinding"), record -> {
            String value = text(record.value());
            if (value.equals("rewind-0-2") && blocked.getAndIncrement() == 0) {
                release.await();
            }
            seen.add(value);
            return Outcome.ack();
        }).topics(List.of("rewind")).mode(ConsumerRuntime.CommitMode.TRACKED).start()) {
            await().atMost(WAIT).until(() -> blocked.get() == 1 && runtime.counts().delivered() == 5);
            runtime.seek(rewind, 0);
            await().atMost(WAIT).until(() -> runtime.counts().delivered() == 10);
            release.countDown();
            await().atMost(WAIT).until(() -> committed("rewinding", rewind).offset() == 5 && seen.size() == 8);
        }
        assertEquals(List.of("rewind-0-0", "rewind-0-1", "rewind-0-2", "rewind-0-0", "rewind-0-1", "rewind-0-2",
                "rewind-0-3", "rewind-0-4"), seen, "3 and 4, queued behind the blocked 2, were dropped by the seek");
    }

    @Test
    void explicitPartitionsAreReadWithEveryPartitionOfTheirRetryTopic() throws Exception {
        admin.createTopic("ledger", 2, 1, Map.of());
        admin.createTopic("ledger.retry", 2, 1, Map.of());
        produce("ledger", 2, 3, 0);
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        try (ConsumerRuntime runtime = ConsumerRuntime.builder(consumer("ledger"), record -> {
            int attempt = RetryHeaders.attempt(record.headers());
            seen.add(text(record.value()) + "#" + attempt);
            return text(record.value()).equals("ledger-0-1") && attempt == 1 ? Outcome.retry() : Outcome.ack();
        }).partitions(List.of(new TopicPartition("ledger", 0))).retryTopic("ledger.retry").maxAttempts(2)
                .mode(ConsumerRuntime.CommitMode.TRACKED).producer(ProducerConfig.builder(cluster.bootstrap()).build())
                .start()) {
            await().atMost(WAIT).until(() -> seen.contains("ledger-0-1#2")
                    && committed("ledger", new TopicPartition("ledger", 0)).offset() == 3);
            assertEquals(Set.of(new TopicPartition("ledger", 0), new TopicPartition("ledger.retry", 0),
                    new TopicPartition("ledger.retry", 1)), runtime.assignment());
        }
        assertEquals(List.of("ledger-0-0#1", "ledger-0-1#1", "ledger-0-1#2", "ledger-0-2#1"),
                seen.stream().sorted().toList(), "ledger-1 is not read");
    }

    @Test
    void autoModeRefusesARetryWithoutARetryPathAndTrackedModeDeliversItAgainBeforeLaterRecords() throws Exception {
        admin.createTopic("events", 1, 1, Map.of());
        produce("events", 1, 5, 0);
        TopicPartition events = new TopicPartition("events", 0);
        List<String> autoHandled = Collections.synchronizedList(new ArrayList<>());
        try (ConsumerRuntime auto = ConsumerRuntime.builder(consumer("auto"), record -> {
            autoHandled.add(text(record.value()));
            return text(record.value()).equals("events-0-2") ? Outcome.retry() : Outcome.ack();
        }).topics(List.of("events")).start()) {
            await().atMost(WAIT).until(() -> committed("auto", events).offset() == 5);
            assertEquals(1, auto.counts().retriesRefused());
        }
        assertEquals(List.of("events-0-0", "events-0-1", "events-0-2", "events-0-3", "events-0-4"), autoHandled);

        List<String> trackedHandled = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger retries = new AtomicInteger();
        try (ConsumerRuntime tracked = ConsumerRuntime.builder(consumer("in-place"), record -> {
            trackedHandled.add(text(record.value()));
            return text(record.value()).equals("events-0-2") && retries.incrementAndGet() <= 2 ? Outcome.retry()
                    : Outcome.ack();
        }).topics(List.of("events")).mode(ConsumerRuntime.CommitMode.TRACKED).workers(2).start()) {
            await().atMost(WAIT).until(() -> committed("in-place", events).offset() == 5);
            assertEquals(2, tracked.counts().retriedInPlace());
        }
        assertEquals(List.of("events-0-0", "events-0-1", "events-0-2", "events-0-2", "events-0-2", "events-0-3",
                "events-0-4"), trackedHandled);
    }

    @Test
    void aDelayedRetryIsKeptInATierAndDeliveredOnceNotBeforeItIsDueAlsoAfterTheRuntimeRestarts() throws Exception {
        admin.createTopic("reminders", 1, 1, Map.of());
        produce("reminders", 1, 2, 0);
        List<Duration> tiers = List.of(Duration.ofSeconds(1), Duration.ofSeconds(3));
        IllegalArgumentException noRetryTopic = assertThrows(IllegalArgumentException.class,
                () -> ConsumerRuntime.builder(consumer("delays"), record -> null).topics(List.of("reminders"))
                        .retryTopic("reminders.retry").delayTiers(tiers)
                        .producer(ProducerConfig.builder(cluster.bootstrap()).build()).start());
        assertEquals("retry topic reminders.retry does not exist; its delay tiers are made like it, so create it "
                + "first", noRetryTopic.getMessage());
        List<String> firstSaw = Collections.synchronizedList(new ArrayList<>());
        ConsumerRuntime first = ConsumerRuntime.builder(consumer("delays"), record -> {
            firstSaw.add(text(record.value()) + "#" + RetryHeaders.attempt(record.headers()));
            return text(record.value()).equals("reminders-0-1") ? Outcome.retryAfter(Duration.ofSeconds(5))
                    : Outcome.ack();
        }).topics(List.of("reminders")).mode(ConsumerRuntime.CommitMode.TRACKED).delayTiers(tiers)
                .producer(ProducerConfig.builder(cluster.bootstrap()).build()).start();
        try {
            await().atMost(WAIT).until(() -> first.counts().retryCopies() == 1
                    && committed("delays", new TopicPartition("reminders", 0)).offset() == 2);
        } finally {
            first.close();
        }
        assertEquals(List.of("reminders-0-0#1", "reminders-0-1#1"), firstSaw, "the copy was not due while it ran");
        List<ConsumerRecord> kept = admin.read(new TopicPartition("reminders.delay-3s", 0), 0, 1 << 20);
        assertEquals(1, kept.size(), "a 5 s delay is kept in the 3 s tier");
        long dueMs = RetryHeaders.due(kept.get(0).headers()).orElseThrow();

        Map<String, Long> secondSawAt = new ConcurrentHashMap<>();
        List<String> secondSaw = Collections.synchronizedList(new ArrayList<>());
        java.time.Clock clock = java.time.Clock.systemUTC();
        try (ConsumerRuntime second = ConsumerRuntime.builder(consumer("delays"), record -> {
            String seen = text(record.value()) + "#" + RetryHeaders.attempt(record.headers());
            secondSaw.add(seen);
            secondSawAt.put(seen, clock.millis());
            return Outcome.ack();
        }).topics(List.of("reminders")).mode(ConsumerRuntime.CommitMode.TRACKED).delayTiers(tiers)
                .producer(ProducerConfig.builder(cluster.bootstrap()).build()).start()) {
            await().atMost(WAIT).until(() -> secondSaw.contains("reminders-0-1#2"));
            await().during(Duration.ofSeconds(2)).atMost(WAIT).until(() -> secondSaw.size() == 1);
            assertTrue(secondSawAt.get("reminders-0-1#2") >= dueMs, "delivered at "
                    + secondSawAt.get("reminders-0-1#2") + ", due at " + dueMs);
            assertTrue(second.counts().delayMoves() <= 1, "at most one move, to the 1 s tier");
        }
        assertEquals(List.of("reminders-0-1#2"), secondSaw);
    }

    @Test
    void aDelayedRetryPendingWhenItsConsumerIsKilledArrivesOnceAfterTheRestart() throws Exception {
        admin.createTopic("alarms", 1, 1, Map.of());
        produce("alarms", 1, 2, 0);
        // The built-in handler answers retryAfter(12s) for alarms-0-1 (kept in the 10 s tier, then moved to the 1 s
        // one); at its second attempt (the limit) it completes.
        String[] consume = {"consume", "--bootstrap", cluster.bootstrap(), "--topic", "alarms", "--group", "killed",
                "--mode", "tracked", "--fail-matching", "alarms-0-1", "--retry-after", "12s", "--delay-tiers",
                "1s,10s", "--max-attempts", "2", "--output", "json"};
        Path firstOut = dir.resolve("first.out");
        Process first = new ProcessBuilder(Tidemark.command(consume)).redirectOutput(firstOut.toFile())
                .redirectError(dir.resolve("first.err").toFile()).start();
        TopicPartition tier = new TopicPartition("alarms.delay-10s", 0);
        long dueMs;
        try {
            // The tier's partition exists a moment before its group has a leader: NOT_AVAILABLE until then.
            await().atMost(WAIT).ignoreExceptionsMatching(e -> e instanceof TidemarkException t && t.retriable())
                    .until(() -> admin.listTopics(false).stream()
                    .anyMatch(t -> t.getName().equals(tier.topic())) && !admin.read(tier, 0, 1 << 20).isEmpty()
                    && committed("killed", new TopicPartition("alarms", 0)).offset() == 2);
            dueMs = RetryHeaders.due(admin.read(tier, 0, 1 << 20).get(0).headers()).orElseThrow();
        } finally {
            first.destroyForcibly().waitFor();
        }
        assertTrue(java.time.Clock.systemUTC().millis() < dueMs, "killed while the retry was pending");
        assertEquals(2, Files.readAllLines(firstOut).size(), "the first process handled the two records once each");

        Path secondOut = dir.resolve("second.out");
        Process second = new ProcessBuilder(Tidemark.command(consume)).redirectOutput(secondOut.toFile())
                .redirectError(dir.resolve("second.err").toFile()).start();
        try {
            await().atMost(WAIT).until(() -> Files.readAllLines(secondOut).size() == 1);
            await().during(Duration.ofSeconds(2)).atMost(WAIT).until(() -> Files.readAllLines(secondOut).size() == 1);
            String line = Files.readAllLines(secondOut).get(0);
            assertTrue(line.contains("\"value\":\"alarms-0-1\"") && line.contains("\"tidemark.attempt\":\"2\"")
                    && line.contains("\"tidemark.due\":\"" + dueMs + "\""), line);
        } finally {
            second.destroyForcibly().waitFor();
        }
    }

    @Test
    void aHandlerThatThrowsStopsTheRuntimeWithItsPositionBelowTheRecord() throws Exception {
        admin.createTopic("jobs", 1, 1, Map.of());
        produce("jobs", 1, 6, 0);
        ConsumerRuntime runtime = ConsumerRuntime.builder(consumer("stopping"), record -> {
            if (text(record.value()).equals("jobs-0-3")) {
                throw new IllegalStateException("no such job");
            }
            return Outcome.ack();
        }).topics(List.of("jobs")).mode(ConsumerRuntime.CommitMode.TRACKED).start();
        await().atMost(WAIT).until(() -> !runtime.running());
        runtime.close();
        assertEquals("the handler failed on jobs-0 at offset 3 (handler errors: STOP)",
                runtime.failure().orElseThrow().getMessage());
        assertEquals("no such job", runtime.failure().orElseThrow().getCause().getMessage());
        assertEquals(new OffsetAndMetadata(3), committed("stopping", new TopicPartition("jobs", 0)));
    }

    @Test
    void transactionalModeCommitsOutputsAndPositionsTogetherAndARetryReadsTheWindowAgain() throws Exception {
        admin.createTopic("in", 2, 1, Map.of());
        admin.createTopic("out", 2, 1, Map.of());
        produce("in", 2, 15, 0);
        Set<String> retriedOnce = ConcurrentHashMap.newKeySet();
        ConsumerRuntime runtime = ConsumerRuntime.pipeline(consumer("pipeline"), (record, output) -> {
            String value = text(record.value());
            if (value.equals("in-1-7") && retriedOnce.add(value)) {
                output.send(new ProducerRecord("out", record.partition(), null,
                        ("aborted-" + value).getBytes(StandardCharsets.UTF_8)));
                return Outcome.retry();
            }
            output.send(new ProducerRecord("out", record.partition(), null,
                    ("out-" + value).getBytes(StandardCharsets.UTF_8)));
            return Outcome.ack();
        }).topics(List.of("in")).mode(ConsumerRuntime.CommitMode.TRANSACTIONAL).workers(4)
                .producer(ProducerConfig.builder(cluster.bootstrap()).transactionalId("pipeline-1").build())
                .commitInterval(Duration.ofMillis(100)).start();
        try {
            TopicPartition in0 = new TopicPartition("in", 0);
            TopicPartition in1 = new TopicPartition("in", 1);
            await().atMost(WAIT).until(() -> committed("pipeline", in0).offset() == 15
                    && committed("pipeline", in1).offset() == 15);
            assertEquals(1, runtime.counts().windowsAborted(), "the retry aborted its window once");
        } finally {
            runtime.close();
        }
        List<String> outputs = new ArrayList<>();
        try (TidemarkConsumer reader = new TidemarkConsumer(ConsumerConfig.builder(cluster.bootstrap())
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)
                .isolationLevel(ConsumerConfig.IsolationLevel.READ_COMMITTED).build())) {
            List<TopicPartition> out = List.of(new TopicPartition("out", 0), new TopicPartition("out", 1));
            reader.assign(out);
            long end0 = admin.listOffsets(out.get(0), OffsetSpec.latest()).logEndOffset();
            long end1 = admin.listOffsets(out.get(1), OffsetSpec.latest()).logEndOffset();
            await().atMost(WAIT).until(() -> {
                reader.poll(Duration.ofMillis(100)).forEach(r -> outputs.add(text(r.value())));
                return reader.position(out.get(0)) >= end0 && reader.position(out.get(1)) >= end1;
            });
        }
        List<String> expected = new ArrayList<>();
        for (int p = 0; p < 2; p++) {
            for (int i = 0; i < 15; i++) {
                expected.add("out-in-" + p + "-" + i);
            }
        }
        assertEquals(expected.stream().sorted().toList(), outputs.stream().sorted().toList(),
                "every input's output once, the aborted window's never");
    }

    private ConsumerConfig consumer(String group) {
        return ConsumerConfig.builder(cluster.bootstrap()).group(group).autoCommitIntervalMs(200)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).retryBackoffMs(20).build();
    }

    /** {@code count} records to each partition, valued (and keyed) {@code topic-partition-i}, SendTime base + i. */
    private void produce(String topic, int partitions, int count, long sendTimeBaseMs) throws Exception {
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(cluster.bootstrap()).build())) {
            for (int p = 0; p < partitions; p++) {
                for (int i = 0; i < count; i++) {
                    byte[] value = (topic + "-" + p + "-" + i).getBytes(StandardCharsets.UTF_8);
                    producer.send(new ProducerRecord(topic, p, value, value, sendTimeBaseMs + i)).get();
                }
            }
        }
    }

    private OffsetAndMetadata committed(String group, TopicPartition tp) {
        return admin.fetchOffsets(group, List.of(tp)).getOrDefault(tp, new OffsetAndMetadata(0));
    }

    private static Header header(String name, String value) {
        return new Header(name, value.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
