package io.tidemark.it;

import io.grpc.ManagedChannel;
import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The checker of the chaos tests: reads a whole partition and asserts that every acknowledged record is there
 * exactly once, offsets are contiguous from 0 and ReceiveTime never decreases.
 */
final class PartitionChecker {
    private PartitionChecker() {
    }

    /** Values of the records whose send was acknowledged. */
    static Set<String> acknowledged(List<String> values, List<CompletableFuture<RecordMetadata>> sends) {
        Set<String> acknowledged = new HashSet<>();
        for (int i = 0; i < sends.size(); i++) {
            if (!sends.get(i).isCompletedExceptionally()) {
                sends.get(i).join();
                acknowledged.add(values.get(i));
            }
        }
        return acknowledged;
    }

    /** The first failed send's error, for assertion messages; "none" when every send succeeded. */
    static String firstFailure(List<CompletableFuture<RecordMetadata>> sends) {
        return sends.stream().filter(CompletableFuture::isCompletedExceptionally).findFirst()
                .map(f -> f.handle((ok, error) -> String.valueOf(error)).join()).orElse("none");
    }

    /** Reads the partition to its end and checks it; returns its records. */
    static List<ConsumerRecord> check(String bootstrap, TopicPartition partition, Set<String> acknowledged) {
        return check(bootstrap, partition, acknowledged, Map.of());
    }

    /**
     * Reads the partition to its end and checks it, and that every record whose value {@code sendTimes} names
     * carries that SendTime; returns its records.
     */
    static List<ConsumerRecord> check(String bootstrap, TopicPartition partition, Set<String> acknowledged,
                                      Map<String, Long> sendTimes) {
        return check(bootstrap, Optional.empty(), partition, acknowledged, sendTimes);
    }

    /** {@link #check(String, TopicPartition, Set, Map)} with clients that make their channels with {@code channels}. */
    static List<ConsumerRecord> check(String bootstrap, Function<String, ManagedChannel> channels,
                                      TopicPartition partition, Set<String> acknowledged, Map<String, Long> sendTimes) {
        return check(bootstrap, Optional.of(channels), partition, acknowledged, sendTimes);
    }

    private static List<ConsumerRecord> check(String bootstrap, Optional<Function<String, ManagedChannel>> channels,
                                              TopicPartition partition, Set<String> acknowledged,
                                              Map<String, Long> sendTimes) {
        long end;
        AdminConfig.Builder adminConfig = AdminConfig.builder(bootstrap).requestTimeoutMs(3000);
        channels.ifPresent(adminConfig::channelFactory);
        ConsumerConfig.Builder consumerConfig = ConsumerConfig.builder(bootstrap)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST);
        channels.ifPresent(consumerConfig::channelFactory);
        try (TidemarkAdmin admin = new TidemarkAdmin(adminConfig.build())) {
            long[] latest = new long[1];
            await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class).until(() -> {
                latest[0] = admin.listOffsets(partition, OffsetSpec.latest()).offset();
                return true;
            });
            end = latest[0];
        }
        List<ConsumerRecord> records = new ArrayList<>();
        try (TidemarkConsumer consumer = new TidemarkConsumer(consumerConfig.build())) {
            consumer.assign(List.of(partition));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                records.addAll(consumer.poll(Duration.ofMillis(200)));
                return records.size() >= end;
            });
        }
        Set<String> stored = new HashSet<>();
        for (int i = 0; i < records.size(); i++) {
            ConsumerRecord r = records.get(i);
            assertEquals(i, r.offset(), "offsets are contiguous");
            if (i > 0) {
                assertTrue(r.receiveTimeMs() >= records.get(i - 1).receiveTimeMs(), "ReceiveTime never decreases at "
                        + i);
            }
            String value = new String(r.value(), StandardCharsets.UTF_8);
            if (sendTimes.containsKey(value)) {
                assertEquals(sendTimes.get(value), r.sendTimeMs(), "SendTime of " + value + " is what the producer set");
            }
            stored.add(value);
        }
        assertEquals(records.size(), stored.size(), "no record stored twice (the producer is idempotent)");
        Set<String> missing = new HashSet<>(acknowledged);
        missing.removeAll(stored);
        assertEquals(Set.of(), missing, "every acknowledged record is stored");
        return records;
    }
}
