package io.tidemark.cli;

import io.tidemark.mirror.failover.FailoverRequest.TimeChoice;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ArgumentsTest {
    @Test
    void timesAreEpochMillisOrIsoInstants() {
        assertEquals(1_700_000_000_000L, TimeArguments.parseTime("--send-time", "1700000000000"));
        assertEquals(1_700_000_000_500L, TimeArguments.parseTime("--send-time", "2023-11-14T22:13:20.500Z"));
        assertEquals("--send-time 'yesterday' is not a time: give epoch milliseconds (1700000000000) or an ISO-8601 "
                + "instant (2023-11-14T22:13:20Z)", assertThrows(IllegalArgumentException.class,
                () -> TimeArguments.parseTime("--send-time", "yesterday")).getMessage());
    }

    @Test
    void durationsTakeUnitsOrIso() {
        assertEquals(Duration.ofMillis(500), TimeArguments.parseDuration("--timeout", "500ms"));
        assertEquals(Duration.ofSeconds(10), TimeArguments.parseDuration("--timeout", "10s"));
        assertEquals(Duration.ofMinutes(5), TimeArguments.parseDuration("--timeout", "5m"));
        assertEquals(Duration.ofHours(2), TimeArguments.parseDuration("--timeout", "2h"));
        assertEquals(Duration.ofDays(30), TimeArguments.parseDuration("--expires-in", "30d"));
        assertEquals(Duration.ofSeconds(3), TimeArguments.parseDuration("--timeout", "PT3S"));
        assertThrows(IllegalArgumentException.class, () -> TimeArguments.parseDuration("--timeout", "10 seconds"));
    }

    @Test
    void startPositions() {
        assertEquals(new StartPosition("earliest", 0), StartPosition.parse("earliest"));
        assertEquals(new StartPosition("offset", 42), StartPosition.parse("offset:42"));
        assertEquals(new StartPosition("receive-time", 1_700_000_000_000L),
                StartPosition.parse("receive-time:2023-11-14T22:13:20Z"));
        assertEquals(new StartPosition("send-time", 5), StartPosition.parse("send-time:5"));
        assertEquals("--from 'middle' is not allowed: give earliest, latest, offset:N, receive-time:TIME or "
                + "send-time:TIME", assertThrows(IllegalArgumentException.class, () -> StartPosition.parse("middle"))
                .getMessage());
        assertEquals("--from offset:N needs an offset of 0 or more, not '-1'",
                assertThrows(IllegalArgumentException.class, () -> StartPosition.parse("offset:-1")).getMessage());
    }

    @Test
    void failoverTimesAreTimesOrWhereTComesFrom() {
        assertEquals(TimeChoice.none(), FailoverCommand.Options.timeChoice(null));
        assertEquals(TimeChoice.given(1_700_000_000_000L), FailoverCommand.Options.timeChoice("2023-11-14T22:13:20Z"));
        assertEquals(TimeChoice.given(5), FailoverCommand.Options.timeChoice("5"));
        assertEquals(TimeChoice.lastConsumed(), FailoverCommand.Options.timeChoice("last-consumed"));
        assertEquals(TimeChoice.sourceSilent(), FailoverCommand.Options.timeChoice("source-silent"));
        assertEquals("--time 'yesterday' is not a time: give epoch milliseconds (1700000000000), an ISO-8601 instant "
                + "(2023-11-14T22:13:20Z), last-consumed or source-silent", assertThrows(IllegalArgumentException.class,
                () -> FailoverCommand.Options.timeChoice("yesterday")).getMessage());
        assertEquals("--time -5 is negative; it is ms since the epoch", assertThrows(IllegalArgumentException.class,
                () -> FailoverCommand.Options.timeChoice("-5")).getMessage());
    }
}
