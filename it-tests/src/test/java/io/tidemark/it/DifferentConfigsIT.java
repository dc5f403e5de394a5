package io.tidemark.it;

import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.PartitionDescription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replicas on brokers configured differently agree byte for byte (issue 23). Node 2 holds SendTimes to a tight
 * window, batches to 64 KiB, and its topics' defaults to 40 KB of retention in 8 KiB segments; node 3 compacts every
 * topic that does not say otherwise, with small segments and frequent snapshots, so it compacts on its own while its
 * peers do not.
 * A producer with retries writes two topics through a SIGKILL and restart of every broker in turn: {@code kv}, which
 * takes each broker's defaults (keys repeat, so node 3 compacts them away), and {@code events}, whose overrides keep
 * everything everywhere, with some SendTimes outside node 2's window (refused while node 2 leads, taken otherwise:
 * the leader decides, followers follow). Then {@code tidemark replicas verify} finds every partition's replicas in
 * agreement, every acknowledged event is read once, and every send that failed was refused for its SendTime.
 */
class DifferentConfigsIT {
    private static final String KV = "kv";
    private static final String EVENTS = "events";
    private static final int PARTITIONS = 3;
    private static final int KEYS = 40;
    /** Every this many events, one whose SendTime is 10 s ahead: outside node 2's 1 s window, inside the default. */
    private static final int FUTURE_EVERY = 50;
    private static final long FUTURE_MS = 10_000;
    private static final long TICK_MS = 10;
    private static final int RECORDS_PER_TICK = 10;
    private static final int RECORDS_MAX = 200_000;
    private static final Duration LOAD_TIME_MAX = Duration.ofMinutes(3);
    private static final Duration PROGRESS_BOUND = Duration.ofSeconds(60);
    /** The producer's delivery timeout and a minute: a send still open then was lost by the producer. */
    private static final Duration FLUSH_BOUND = Duration.ofMinutes(3);
    private static final Map<Integer, String> CONFIGS = Map.of(
            1, "",
            2, """
                    send.time.after.max.ms=1000
                    max.batch.bytes=65536
                    retention.bytes=40000
                    segment.bytes=8192
                    retention.check.interval.ms=200
                    """,
            3, """
                    cleanup.policy=compact
                    delete.retention.ms=0
                    segment.bytes=16384
                    retention.check.interval.ms=200
                    raft.snapshot.interval.entries=200
                    producer.id.expiration.ms=3600000
                    """);

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    @Test
    void replicasOfBrokersConfiguredDifferentlyAgreeUnderALoadWithRetriesAndRestarts() throws Exception {
        try (ClusterProcesses cluster = new ClusterProcesses(dir, CONFIGS)) {
            try (TidemarkAdmin admin = cluster.admin()) {
                admin.createTopic(KV, PARTITIONS, 3, Map.of());
                admin.createTopic(EVENTS, PARTITIONS, 3, Map.of("cleanup.policy", "delete", "retention.ms", "-1",
                        "retention.bytes", "-1"));
            }
            ProducerConfig config = ProducerConfig.builder(cluster.bootstrap()).lingerMs(5).batchSizeBytes(16_384)
                    .requestTimeoutMs(5_000).deliveryTimeoutMs(120_000).build();
            Load load;
            try (TidemarkProducer producer = new TidemarkProducer(config)) {
                load = new Load(producer);
                for (int node = 1; node <= 3; node++) {
                    load.awaitProgress();
                    cluster.kill(node);
                    load.awaitProgress();
                    cluster.start(node);
                    cluster.awaitReady();
                }
                load.awaitProgress();
                // With the load still on: how much kv holds when the Raft steps are done depends on how fast they
                // went, and node 2's retention deletes only past its 40,000 bytes.
                await("node 2's retention.bytes deleted kv's oldest segments there").atMost(PROGRESS_BOUND)
                        .ignoreException(TidemarkException.class)
                        .until(() -> logStarts(cluster, 2).stream().allMatch(start -> start > 0));
                load.stop();
                assertTimeoutPreemptively(FLUSH_BOUND, producer::flush, "every send ended (acknowledged or failed) "
                        + "within its delivery timeout");
            }
            List<String> events = load.events;
            List<CompletableFuture<RecordMetadata>> eventSends = load.eventSends;

            Set<String> acknowledged = new HashSet<>();
            for (int i = 0; i < events.size(); i++) {
                try {
                    eventSends.get(i).join();
                    acknowledged.add(events.get(i));
                } catch (CompletionException e) {
                    assertTrue(e.getCause() instanceof TidemarkException t && t.code() == ErrorCode.INVALID_TIMESTAMP,
                            "a send fails only for its SendTime (in a batch node 2 refused): " + e.getCause());
                }
            }
            assertTrue(acknowledged.size() > events.size() / 2, acknowledged.size() + " of " + events.size());
            load.kvSends.forEach(CompletableFuture::join);
            for (int p = 0; p < PARTITIONS; p++) {
                String prefix = p + ":";
                PartitionChecker.check(cluster.bootstrap(), new TopicPartition(EVENTS, p),
                        acknowledged.stream().filter(v -> v.startsWith(prefix)).collect(java.util.stream.Collectors
                                .toSet()));
            }
            assertEquals(List.of(0L, 0L, 0L), logStarts(cluster, 1), "node 1 keeps kv whole");
            ReplicaCheck.assertReplicasAgree(dir, cluster.bootstrap());
        }
    }

    /** The log start offsets of kv's partitions in {@code node}'s replicas. */
    private static List<Long> logStarts(ClusterProcesses cluster, int node) {
        try (TidemarkAdmin admin = cluster.admin(node)) {
            return admin.describeTopics(List.of(KV)).get(0).getPartitionsList().stream()
                    .map(PartitionDescription::getLogStartOffset).toList();
        }
    }

    /**
     * Every {@value #TICK_MS} ms, {@value #RECORDS_PER_TICK} records to each topic, until stopped or bounded: kv with
     * one of {@value #KEYS} keys, events with a value naming its partition and number. The lists are the scheduler
     * thread's until {@link #stop}; {@link #awaitProgress} reads them under their lock.
     */
    private static final class Load {
        private final TidemarkProducer producer;
        private final List<String> events = new ArrayList<>();
        private final List<CompletableFuture<RecordMetadata>> eventSends = new ArrayList<>();
        private final List<CompletableFuture<RecordMetadata>> kvSends = new ArrayList<>();
        private final long deadlineNanos = System.nanoTime() + LOAD_TIME_MAX.toNanos();
        private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

        private Load(TidemarkProducer producer) {
            this.producer = producer;
            scheduler.scheduleAtFixedRate(this::tick, 0, TICK_MS, TimeUnit.MILLISECONDS);
        }

        private synchronized void tick() {
            for (int n = 0; n < RECORDS_PER_TICK; n++) {
                int i = kvSends.size();
                if (i >= RECORDS_MAX || System.nanoTime() - deadlineNanos > 0) {
                    scheduler.shutdown();
                    return;
                }
                int partition = i % PARTITIONS;
                kvSends.add(producer.send(new ProducerRecord(KV, partition, utf8("k" + i % KEYS), utf8("kv-" + i))));
                String event = partition + ":" + i;
                long sendTime = System.currentTimeMillis() + (i % FUTURE_EVERY == 0 ? FUTURE_MS : 0);
                events.add(event);
                eventSends.add(producer.send(new ProducerRecord(EVENTS, partition, null, utf8(event), sendTime)));
            }
        }

        /** Waits until kv acknowledged 100 records sent after now, in a row; fails at once if the load ended. */
        private void awaitProgress() {
            int from;
            synchronized (this) {
                from = kvSends.size();
            }
            await().atMost(PROGRESS_BOUND).until(() -> {
                synchronized (this) {
                    if (kvSends.size() <= from + 100) {
                        assertFalse(scheduler.isShutdown(), "the load reached its bound (" + RECORDS_MAX
                                + " records or " + LOAD_TIME_MAX + ") before the test's steps ended");
                        return false;
                    }
                    return kvSends.subList(from, from + 100).stream()
                            .allMatch(f -> f.isDone() && !f.isCompletedExceptionally());
                }
            });
        }

        private void stop() throws InterruptedException {
            scheduler.shutdown();
            assertTrue(scheduler.awaitTermination(10, TimeUnit.SECONDS), "the load stopped");
        }
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
