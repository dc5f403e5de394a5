package io.tidemark.client.api;

import io.tidemark.proto.record.Header;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where a record goes when its handler asks for a retry through a topic (seed 002): below {@code maxAttempts} a copy
 * to the retry topic (or a delay tier, {@link DelayTiers}) carrying the next attempt, at the limit a copy to the
 * dead-letter topic carrying the attempt that failed, why, and where the record was ({@link RetryHeaders}), and at
 * the limit without a dead-letter topic no copy. A copy keeps the record's key (so it lands in the key's partition,
 * after what was written meanwhile), value, other headers and SendTime; it is a new record at the end of its
 * partition, read by every group that reads the topic.
 *
 * <p>Stateless but for its settings; thread-safe.
 */
final class RetryCopies {
    private static final Logger LOG = LoggerFactory.getLogger(RetryCopies.class);
    private static final Set<String> OWN_HEADERS = Set.of(RetryHeaders.ATTEMPT, RetryHeaders.DUE,
            RetryHeaders.DEAD_LETTER_MESSAGE,
            RetryHeaders.DEAD_LETTER_TOPIC, RetryHeaders.DEAD_LETTER_PARTITION, RetryHeaders.DEAD_LETTER_OFFSET);

    private final int maxAttempts;
    private final String retryTopic;
    private final Optional<String> deadLetterTopic;

    /**
     * @param maxAttempts     the attempts a record gets, from 1 ({@link Integer#MAX_VALUE}: no limit)
     * @param retryTopic      where copies for another attempt go
     * @param deadLetterTopic where a copy goes at the limit; empty for none
     */
    RetryCopies(int maxAttempts, String retryTopic, Optional<String> deadLetterTopic) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts " + maxAttempts + " is below 1");
        }
        this.maxAttempts = maxAttempts;
        this.retryTopic = retryTopic;
        this.deadLetterTopic = deadLetterTopic;
    }

    /** A copy to write, and whether it is a dead letter. */
    record Copy(ProducerRecord record, boolean deadLetter) {
    }

    /**
     * The copy of {@code record} whose attempt failed for {@code failure}; empty at the limit without a dead-letter
     * topic. A record whose attempt header this runtime cannot read counts as attempt 1 (logged).
     */
    Optional<Copy> copyOf(ConsumerRecord record, String failure) {
        int attempt = attemptOf(record);
        if (attempt < maxAttempts) {
            return Optional.of(new Copy(copy(record, retryTopic, attempt + 1, List.of()), false));
        }
        return deadLetter(record, attempt, failure);
    }

    /**
     * The delayed copy of {@code record}, due {@code delayMs} after {@code nowMs}, to the delay tier {@code tiers}
     * choose; at the limit the dead-letter copy (or none) as {@link #copyOf}.
     */
    Optional<Copy> delayedCopyOf(ConsumerRecord record, DelayTiers tiers, long delayMs, long nowMs, String failure) {
        int attempt = attemptOf(record);
        if (attempt < maxAttempts) {
            return Optional.of(new Copy(copy(record, tiers.topicFor(delayMs), attempt + 1,
                    List.of(header(RetryHeaders.DUE, Long.toString(nowMs + delayMs)))), false));
        }
        return deadLetter(record, attempt, failure);
    }

    /** {@code record}, a delayed copy due at {@code dueMs}, moved to {@code tier}: the same attempt and due time. */
    static ProducerRecord moved(ConsumerRecord record, String tier, long dueMs) {
        return copy(record, tier, attemptOf(record), List.of(header(RetryHeaders.DUE, Long.toString(dueMs))));
    }

    private Optional<Copy> deadLetter(ConsumerRecord record, int attempt, String failure) {
        return deadLetterTopic.map(topic -> new Copy(copy(record, topic, attempt, List.of(
                header(RetryHeaders.DEAD_LETTER_MESSAGE, failure),
                header(RetryHeaders.DEAD_LETTER_TOPIC, record.topic()),
                header(RetryHeaders.DEAD_LETTER_PARTITION, Integer.toString(record.partition())),
                header(RetryHeaders.DEAD_LETTER_OFFSET, Long.toString(record.offset())))), true));
    }

    private static int attemptOf(ConsumerRecord record) {
        try {
            return RetryHeaders.attempt(record.headers());
        } catch (IllegalArgumentException e) {
            LOG.warn("{} at offset {}: {}; taken as attempt 1", record.topicPartition(), record.offset(),
                    e.getMessage());
            return 1;
        }
    }

    private static ProducerRecord copy(ConsumerRecord record, String topic, int attempt, List<Header> added) {
        List<Header> headers = new ArrayList<>(record.headers().size() + 3);
        for (Header header : record.headers()) {
            if (!OWN_HEADERS.contains(header.name())) {
                headers.add(header);
            }
        }
        headers.add(header(RetryHeaders.ATTEMPT, Integer.toString(attempt)));
        headers.addAll(added);
        return new ProducerRecord(topic, null, record.key(), record.value(), record.sendTimeMs(), headers);
    }

    private static Header header(String name, String value) {
        return new Header(name, value.getBytes(StandardCharsets.UTF_8));
    }
}
