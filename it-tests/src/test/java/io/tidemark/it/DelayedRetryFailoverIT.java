package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRuntime;
import io.tidemark.client.api.Outcome;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RetryHeaders;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A delayed retry pending in its tier when the broker leading that tier is stopped, on three brokers in this JVM: the
 * runtime keeps going through the election and delivers the retry once, not before it is due.
 */
class DelayedRetryFailoverIT {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    private InJvmCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aDelayedRetryPendingWhenTheLeaderOfItsTierStopsIsDeliveredOnceWhenDue() throws Exception {
        cluster = InJvmCluster.start(dir, 3, Map.of("group.consumer.heartbeat.interval.ms", "200",
                "group.consumer.session.timeout.ms", "6000"));
        String bootstrap = cluster.bootstrap();
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap).build())) {
            admin.createTopic("calls", 1, 3, Map.of());
            try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap).build())) {
                for (int i = 0; i < 2; i++) {
                    byte[] value = ("call-" + i).getBytes(StandardCharsets.UTF_8);
                    producer.send(new ProducerRecord("calls", 0, value, value)).get();
                }
            }
            List<String> seen = Collections.synchronizedList(new ArrayList<>());
            List<Long> retrySeenAtMs = Collections.synchronizedList(new ArrayList<>());
            Clock clock = Clock.systemUTC();
            ConsumerConfig consumer = ConsumerConfig.builder(bootstrap).group("calls")
                    .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).autoCommitIntervalMs(200).build();
            try (ConsumerRuntime runtime = ConsumerRuntime.builder(consumer, record -> {
                String value = new String(record.value(), StandardCharsets.UTF_8);
                int attempt = RetryHeaders.attempt(record.headers());
                seen.add(value + "#" + attempt);
                if (attempt > 1) {
                    retrySeenAtMs.add(clock.millis());
                }
                return value.equals("call-1") && attempt == 1 ? Outcome.retryAfter(Duration.ofSeconds(12))
                        : Outcome.ack();
            }).topics(List.of("calls")).mode(ConsumerRuntime.CommitMode.TRACKED)
                    .delayTiers(List.of(Duration.ofSeconds(1), Duration.ofSeconds(10)))
                    .producer(ProducerConfig.builder(bootstrap).build()).start()) {
                await().atMost(WAIT).until(() -> runtime.counts().retryCopies() == 1);
                TopicPartition tier = new TopicPartition("calls.delay-10s", 0);
                long dueMs = RetryHeaders.due(admin.read(tier, 0, 1 << 20).get(0).headers()).orElseThrow();
                int leader = admin.describeTopics(List.of(tier.topic())).get(0).getPartitions(0).getLeaderNodeId();
                cluster.stop(leader);
                assertTrue(clock.millis() < dueMs, "the leader stopped while the retry was pending");

                await().atMost(WAIT).until(() -> seen.contains("call-1#2"));
                await().during(Duration.ofSeconds(3)).atMost(WAIT).until(() -> seen.size() == 3);
                assertEquals(List.of("call-0#1", "call-1#1", "call-1#2"), seen);
                assertTrue(retrySeenAtMs.get(0) >= dueMs, "delivered at " + retrySeenAtMs.get(0) + ", due at "
                        + dueMs);
                cluster.start(leader);
            }
        }
    }
}
