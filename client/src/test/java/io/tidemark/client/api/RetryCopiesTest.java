package io.tidemark.client.api;

import io.tidemark.proto.record.Header;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Where a retried record's copy goes, and what it carries (seed 002's attempt rules). */
class RetryCopiesTest {
    private static final Header TRACE = new Header("trace", new byte[]{7});

    private static ConsumerRecord record(Header... headers) {
        return new ConsumerRecord("orders", 2, 41, bytes("k"), bytes("v"), List.of(headers), 1_000, 2_000);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static Header attempt(String value) {
        return new Header(RetryHeaders.ATTEMPT, bytes(value));
    }

    @Test
    void belowTheLimitACopyToTheRetryTopicCarriesTheNextAttemptAndEverythingElseOfTheRecord() {
        RetryCopies copies = new RetryCopies(3, "orders.retry", Optional.of("orders.dlq"));
        RetryCopies.Copy first = copies.copyOf(record(TRACE), "the handler asked for a retry").orElseThrow();
        assertFalse(first.deadLetter());
        ProducerRecord copy = first.record();
        assertEquals("orders.retry", copy.topic());
        assertEquals(null, copy.partition(), "the key's partition, chosen by the producer");
        assertArrayEquals(bytes("k"), copy.key());
        assertArrayEquals(bytes("v"), copy.value());
        assertEquals(1_000L, copy.sendTimeMs(), "SendTime is kept");
        assertEquals(List.of(TRACE, attempt("2")), copy.headers());

        RetryCopies.Copy second = copies.copyOf(record(attempt("2"), TRACE), "again").orElseThrow();
        assertEquals(List.of(TRACE, attempt("3")), second.record().headers(), "the old attempt header is replaced");
    }

    @Test
    void atTheLimitTheCopyGoesToTheDeadLetterTopicWithTheLastAttemptWhyAndWhereFrom() {
        RetryCopies copies = new RetryCopies(3, "orders", Optional.of("orders.dlq"));
        RetryCopies.Copy dead = copies.copyOf(record(TRACE, attempt("3")), "java.io.IOException: disk")
                .orElseThrow();
        assertTrue(dead.deadLetter());
        assertEquals("orders.dlq", dead.record().topic());
        assertEquals(List.of(TRACE, attempt("3"),
                new Header(RetryHeaders.DEAD_LETTER_MESSAGE, bytes("java.io.IOException: disk")),
                new Header(RetryHeaders.DEAD_LETTER_TOPIC, bytes("orders")),
                new Header(RetryHeaders.DEAD_LETTER_PARTITION, bytes("2")),
                new Header(RetryHeaders.DEAD_LETTER_OFFSET, bytes("41"))), dead.record().headers());
    }

    @Test
    void atTheLimitWithoutADeadLetterTopicThereIsNoCopy() {
        RetryCopies copies = new RetryCopies(2, "orders", Optional.empty());
        assertTrue(copies.copyOf(record(), "x").isPresent(), "attempt 1 of 2 is retried");
        assertEquals(Optional.empty(), copies.copyOf(record(attempt("2")), "x"));
        assertEquals(Optional.empty(), new RetryCopies(1, "orders", Optional.empty()).copyOf(record(), "x"));
    }

    @Test
    void anAttemptHeaderThatIsNotANumberFromOneCountsAsTheFirstAttempt() {
        RetryCopies copies = new RetryCopies(5, "orders", Optional.empty());
        for (String bad : List.of("", "0", "-3", "two", "99999999999")) {
            assertEquals(List.of(attempt("2")), copies.copyOf(record(attempt(bad)), "x").orElseThrow().record()
                    .headers(), bad);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RetryHeaders.attempt(List.of(attempt("two"))));
        assertEquals("header tidemark.attempt is \"two\"; a decimal number from 1 is allowed", e.getMessage());
        assertEquals(1, RetryHeaders.attempt(List.of()));
        assertEquals(7, RetryHeaders.attempt(List.of(attempt("7"))));
    }
}
