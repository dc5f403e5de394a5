package io.tidemark.client.api;

import io.tidemark.proto.record.Header;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Where a delayed retry is kept, and what the reader of a tier does with it, at each moment. */
class DelayTiersTest {
    private final DelayTiers tiers = new DelayTiers("orders", List.of(Duration.ofSeconds(1), Duration.ofSeconds(10),
            Duration.ofMinutes(1), Duration.ofHours(1)));

    @Test
    void aDelayIsKeptInTheTierOfTheLargestDelayAtMostItAndBelowEveryTierInTheSmallest() {
        assertEquals(List.of("orders.delay-1s", "orders.delay-10s", "orders.delay-1m", "orders.delay-1h"),
                tiers.topics());
        assertEquals("orders.delay-1s", tiers.topicFor(0));
        assertEquals("orders.delay-1s", tiers.topicFor(9_999));
        assertEquals("orders.delay-10s", tiers.topicFor(10_000));
        assertEquals("orders.delay-1m", tiers.topicFor(3_599_999));
        assertEquals("orders.delay-1h", tiers.topicFor(86_400_000));
        assertTrue(tiers.isTier("orders.delay-1m"));
        assertFalse(tiers.isTier("orders"));
        assertEquals("250ms", DelayTiers.name(250));
        assertEquals("90s", DelayTiers.name(90_000));
    }

    @Test
    void theHeadWaitsUntilRipeThenIsDeliveredWhenDueOrMovedToTheTierOfItsRemainingTime() {
        long received = 1_000_000;
        // Asked for 25 s at `received`: kept in the 10 s tier, due at received + 25 s.
        long due = received + 25_000;
        assertEquals(new DelayTiers.WaitUntil(received + 10_000),
                tiers.decide("orders.delay-10s", received, due, received + 50));
        assertEquals(new DelayTiers.MoveTo("orders.delay-10s"),
                tiers.decide("orders.delay-10s", received, due, received + 10_000), "15 s left: the 10 s tier again");
        assertEquals(new DelayTiers.MoveTo("orders.delay-1s"),
                tiers.decide("orders.delay-10s", received, due, received + 20_000), "5 s left");
        assertEquals(new DelayTiers.WaitUntil(received + 10_500), tiers.decide("orders.delay-10s", received,
                received + 10_500, received + 10_000), "less than the smallest delay left: it waits at the head");
        assertEquals(new DelayTiers.Deliver(), tiers.decide("orders.delay-1s", received + 24_200, due, due));
        assertEquals(new DelayTiers.Deliver(), tiers.decide("orders.delay-1h", received, due, due + 86_400_000),
                "a runtime that was down delivers what came due meanwhile at once");
    }

    @Test
    void aBrokerClockAheadOfTheRuntimesNeverHoldsARecordPastItsDueTime() {
        long due = 2_000_000;
        long receivedByAFastClock = due + 3_600_000;
        assertEquals(new DelayTiers.WaitUntil(due), tiers.decide("orders.delay-1m", receivedByAFastClock, due,
                due - 5_000));
        assertEquals(new DelayTiers.Deliver(), tiers.decide("orders.delay-1m", receivedByAFastClock, due, due));
    }

    @Test
    void aLadderMustAscendWithinItsBounds() {
        assertEquals("delay tiers [PT10S, PT1S] must ascend", assertThrows(IllegalArgumentException.class,
                () -> new DelayTiers("t", List.of(Duration.ofSeconds(10), Duration.ofSeconds(1)))).getMessage());
        assertEquals("delay tier PT0S is not allowed; each must be from 1 ms to 7 days",
                assertThrows(IllegalArgumentException.class, () -> new DelayTiers("t", List.of(Duration.ZERO)))
                        .getMessage());
        assertEquals("delayTiers is empty; give at least one delay", assertThrows(IllegalArgumentException.class,
                () -> new DelayTiers("t", List.of())).getMessage());
        assertEquals("retryAfter(PT-1S) is not allowed; the delay must be from 0 to 7 days",
                assertThrows(IllegalArgumentException.class, () -> Outcome.retryAfter(Duration.ofSeconds(-1)))
                        .getMessage());
    }

    @Test
    void aDelayedCopyCarriesTheNextAttemptAndItsDueTimeAndAMoveKeepsBoth() {
        RetryCopies copies = new RetryCopies(3, "orders", Optional.of("orders.dlq"));
        ConsumerRecord record = new ConsumerRecord("orders", 0, 7, null, bytes("v"),
                List.of(header(RetryHeaders.ATTEMPT, "1")), 10, 20);
        RetryCopies.Copy copy = copies.delayedCopyOf(record, tiers, 25_000, 1_000_000, "later").orElseThrow();
        assertEquals("orders.delay-10s", copy.record().topic());
        assertEquals(List.of(header(RetryHeaders.ATTEMPT, "2"), header(RetryHeaders.DUE, "1025000")),
                copy.record().headers());
        ConsumerRecord kept = new ConsumerRecord("orders.delay-10s", 0, 0, null, bytes("v"), copy.record().headers(),
                10, 1_000_100);
        ProducerRecord moved = RetryCopies.moved(kept, "orders.delay-1s", 1_025_000);
        assertEquals("orders.delay-1s", moved.topic());
        assertEquals(copy.record().headers(), moved.headers());
        assertEquals(10L, moved.sendTimeMs());
        ConsumerRecord last = new ConsumerRecord("orders.delay-1s", 0, 4, null, bytes("v"),
                List.of(header(RetryHeaders.ATTEMPT, "3"), header(RetryHeaders.DUE, "5")), 10, 20);
        RetryCopies.Copy dead = copies.delayedCopyOf(last, tiers, 1_000, 2_000, "later").orElseThrow();
        assertTrue(dead.deadLetter());
        assertEquals(List.of(header(RetryHeaders.ATTEMPT, "3"), header(RetryHeaders.DEAD_LETTER_MESSAGE, "later"),
                header(RetryHeaders.DEAD_LETTER_TOPIC, "orders.delay-1s"),
                header(RetryHeaders.DEAD_LETTER_PARTITION, "0"), header(RetryHeaders.DEAD_LETTER_OFFSET, "4")),
                dead.record().headers(), "the due time is dropped");
    }

    private static Header header(String name, String value) {
        return new Header(name, bytes(value));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
