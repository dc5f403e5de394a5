package io.tidemark.client.api;

import org.junit.jupiter.api.Test;

import java.time.Clock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigTest {
    private static String rejected(Runnable build) {
        return assertThrows(IllegalArgumentException.class, build::run).getMessage();
    }

    @Test
    void producerDefaults() {
        ProducerConfig config = ProducerConfig.builder("a:1").build();
        assertEquals(262_144, config.batchSizeBytes());
        assertEquals(5, config.lingerMs());
        assertEquals(32L * 1024 * 1024, config.bufferMemoryBytes());
        assertEquals(60_000, config.maxBlockMs());
        assertEquals(1024 * 1024, config.maxRequestBytes());
        assertEquals(100, config.retryBackoffMs());
        assertEquals(120_000, config.deliveryTimeoutMs());
        assertEquals(30_000, config.requestTimeoutMs());
        assertTrue(config.idempotence());
        assertEquals(Clock.systemUTC(), config.clock());
        assertEquals(java.util.List.of("a:1"), config.connection().bootstrap());
    }

    @Test
    void consumerDefaults() {
        ConsumerConfig config = ConsumerConfig.builder("a:1, b:2").build();
        assertEquals(java.util.Optional.empty(), config.group());
        assertEquals(ConsumerConfig.OffsetReset.LATEST, config.autoOffsetReset());
        assertEquals(500, config.maxPollRecords());
        assertEquals(1024 * 1024, config.fetchMaxBytes());
        assertEquals(16 * 1024 * 1024, config.fetchRequestMaxBytes());
        assertEquals(500, config.fetchMaxWaitMs());
        assertEquals(java.util.List.of("a:1", "b:2"), config.connection().bootstrap());
    }

    @Test
    void aBadValueIsRejectedNamingTheSettingTheValueAndWhatIsAllowed() {
        assertEquals("linger.ms = -1 is not allowed; it must be in 0..2147483647 ms",
                rejected(() -> ProducerConfig.builder("a:1").lingerMs(-1).build()));
        assertEquals("batch.size = 2000000 is not allowed; it must be in 1..1048576 bytes (at most"
                + " max.request.bytes)", rejected(() -> ProducerConfig.builder("a:1").batchSizeBytes(2_000_000).build()));
        assertEquals("buffer.memory = 1000 is not allowed; it must be at least 1048576 bytes (max.request.bytes, so"
                + " the largest record fits)", rejected(() -> ProducerConfig.builder("a:1").bufferMemoryBytes(1000)
                .build()));
        assertEquals("linger.ms = 5000 is not allowed; it must not exceed delivery.timeout.ms = 1000",
                rejected(() -> ProducerConfig.builder("a:1").lingerMs(5000).deliveryTimeoutMs(1000).build()));
        assertEquals("request.timeout.ms = 0 is not allowed; it must be in 1..86400000 ms",
                rejected(() -> ConsumerConfig.builder("a:1").requestTimeoutMs(0).build()));
        assertEquals("max.poll.records = 0 is not allowed; it must be in 1..1000000 records",
                rejected(() -> ConsumerConfig.builder("a:1").maxPollRecords(0).build()));
        assertEquals("group = \" \" is not allowed; it must be a non-blank name, or not set for a consumer without a"
                + " group", rejected(() -> ConsumerConfig.builder("a:1").group(" ").build()));
    }

    @Test
    void bootstrapMustBeAHostPortList() {
        assertEquals("bootstrap = \"a:1,broker\" is not allowed: \"broker\" is not host:port with a port in"
                + " 1..65535", rejected(() -> AdminConfig.builder("a:1,broker").build()));
        assertEquals("bootstrap = \"a:70000\" is not allowed: \"a:70000\" is not host:port with a port in 1..65535",
                rejected(() -> AdminConfig.builder("a:70000").build()));
        assertEquals("bootstrap is not set; it must be a comma-separated list of host:port, e.g."
                + " \"broker1:9092,broker2:9092\"", rejected(() -> ProducerConfig.builder(" ").build()));
    }
}
