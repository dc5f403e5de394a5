package io.tidemark.client.api;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A runtime whose settings cannot work refuses to start, saying which setting and what is allowed. */
class ConsumerRuntimeSettingsTest {
    private static final String BOOTSTRAP = "127.0.0.1:1";
    private static final ConsumerConfig GROUP = ConsumerConfig.builder(BOOTSTRAP).group("g").build();
    private static final ProducerConfig PRODUCER = ProducerConfig.builder(BOOTSTRAP).build();
    private static final RecordHandler ACK = record -> Outcome.ack();

    private static String refusal(ConsumerRuntime.Builder builder) {
        return assertThrows(IllegalArgumentException.class, builder::start).getMessage();
    }

    @Test
    void aRuntimeNeedsAGroupAndASubscription() {
        assertEquals("the consumer config has no group; the runtime commits positions for a group",
                refusal(ConsumerRuntime.builder(ConsumerConfig.builder(BOOTSTRAP).build(), ACK)
                        .topics(List.of("orders"))));
        assertEquals("no subscription: set topics(...), pattern(...) or partitions(...)",
                refusal(ConsumerRuntime.builder(GROUP, ACK)));
        assertEquals("no subscription: set topics(...), pattern(...) or partitions(...)",
                refusal(ConsumerRuntime.builder(GROUP, ACK).partitions(List.of())));
    }

    @Test
    void boundsAreChecked() {
        assertEquals("workers = 0 is not allowed; it must be from 1 to 1024",
                refusal(ConsumerRuntime.builder(GROUP, ACK).topics(List.of("orders")).workers(0)));
        assertEquals("maxInFlightPerPartition = 100001 is not allowed; it must be from 1 to 100000",
                refusal(ConsumerRuntime.builder(GROUP, ACK).topics(List.of("orders"))
                        .maxInFlightPerPartition(100_001)));
        assertEquals("maxAttempts = 0 is not allowed; it must be from 1 to 2147483647",
                refusal(ConsumerRuntime.builder(GROUP, ACK).topics(List.of("orders")).maxAttempts(0)
                        .producer(PRODUCER)));
    }

    @Test
    void aRetryPathNeedsAProducerAndATopicToRetryThrough() {
        assertEquals("a retry path is declared (maxAttempts, retryTopic, deadLetterTopic or delayTiers) but no "
                        + "producer config to write the copies with; set producer(...)",
                refusal(ConsumerRuntime.builder(GROUP, ACK).topics(List.of("orders")).deadLetterTopic("dlq")));
        assertEquals("a subscription to topics [orders, payments] must name its retry topic (retryTopic): only a "
                        + "subscription to one topic retries through that topic",
                refusal(ConsumerRuntime.builder(GROUP, ACK).topics(List.of("orders", "payments")).maxAttempts(3)
                        .producer(PRODUCER)));
        assertEquals("a subscription to partitions [orders-1] must name its retry topic (retryTopic): only a "
                        + "subscription to one topic retries through that topic",
                refusal(ConsumerRuntime.builder(GROUP, ACK).partitions(List.of(new TopicPartition("orders", 1)))
                        .maxAttempts(3).producer(PRODUCER)));
        assertEquals("a subscription to pattern orders-.* must name its retry topic (retryTopic): only a "
                        + "subscription to one topic retries through that topic",
                refusal(ConsumerRuntime.builder(GROUP, ACK).pattern(Pattern.compile("orders-.*")).maxAttempts(3)
                        .producer(PRODUCER)));
        assertEquals("retry topic retries does not match the subscribed pattern orders-.*; the runtime reads its "
                        + "retry topic through the subscription",
                refusal(ConsumerRuntime.builder(GROUP, ACK).pattern(Pattern.compile("orders-.*"))
                        .retryTopic("retries").producer(PRODUCER)));
        assertEquals("delay tier orders-retry.delay-1s does not match the subscribed pattern orders-[a-z]+; the "
                        + "runtime reads its tiers through the subscription",
                refusal(ConsumerRuntime.builder(GROUP, ACK).pattern(Pattern.compile("orders-[a-z]+"))
                        .retryTopic("orders-retry").delayTiers(List.of(java.time.Duration.ofSeconds(1)))
                        .producer(PRODUCER)));
    }
}
