package io.tidemark.cli;

import io.tidemark.cli.LookupPerfCommand.By;
import io.tidemark.cli.LookupPerfCommand.Run;
import io.tidemark.client.api.OffsetLookup;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LookupPerfCommandTest {
    private static final long NO_DEADLINE = Long.MAX_VALUE;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    /** The fake clock the lookups move. */
    private long nowNanos;

    private int run(String... args) {
        return TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true))
                .execute(args);
    }

    @Test
    void byTakesReceiveTimeOrSendTime() {
        assertEquals(By.RECEIVE_TIME, By.parse("receive-time"));
        assertEquals(By.SEND_TIME, By.parse("send-time"));
        assertEquals("'RECEIVE' is not allowed: give receive-time or send-time",
                assertThrows(IllegalArgumentException.class, () -> By.parse("RECEIVE")).getMessage());
    }

    @Test
    void argumentsAreCheckedBeforeAnyCall() {
        assertEquals(1, run("perf", "lookup", "--bootstrap", "127.0.0.1:1", "--topic", "t", "--lookups", "0"));
        assertEquals("error: --lookups and --max-seconds must be at least 1, --warmup and --partition at least 0\n",
                err.toString());
        err.getBuffer().setLength(0);
        assertEquals(1, run("perf", "lookup", "--topic", "t", "--warmup", "-1"));
        assertEquals(1, run("perf", "lookup", "--topic", "t", "--max-seconds", "0"));
        assertEquals(1, run("perf", "lookup", "--topic", "t", "--partition", "-1"));
        err.getBuffer().setLength(0);
        assertEquals(2, run("perf", "lookup", "--topic", "t", "--by", "create-time"));
        assertEquals("Invalid value for option '--by': 'create-time' is not allowed: give receive-time or send-time",
                err.toString().lines().findFirst().orElseThrow());
    }

    @Test
    void answersAreRightWhenAtOrAfterTheTarget() {
        assertFalse(By.RECEIVE_TIME.wrong(found(7, 100, 90), 100));
        assertTrue(By.RECEIVE_TIME.wrong(found(7, 99, 200), 100));
        assertFalse(By.SEND_TIME.wrong(found(7, 50, 100), 100));
        assertTrue(By.SEND_TIME.wrong(found(7, 200, 99), 100));
        assertTrue(By.RECEIVE_TIME.wrong(new OffsetLookup(false, 10, 0, 0, 0, 10), 100));
    }

    @Test
    void percentilesOfOneThousandLookupsOfOneToOneThousandMicroseconds() {
        int[] call = {0};
        Run timing = new Run(By.RECEIVE_TIME, targetMs -> {
            call[0]++;
            nowNanos += TimeUnit.MICROSECONDS.toNanos(call[0] <= 10 ? 50_000 : call[0] - 10);
            return found(targetMs, targetMs, targetMs);
        }, () -> nowNanos, new PrintWriter(out, true));

        Run.Result result = timing.lookups(new Random(1), 1_000, 2_000, 10, 1_000, NO_DEADLINE);

        assertEquals("lookup by ReceiveTime: 1000 lookups (warmup 10) in 0.50 s, 1998 lookups/s: avg 0.501 ms, "
                        + "p50 0.500 ms, p90 0.900 ms, p99 0.990 ms, p99.9 0.999 ms, max 1.000 ms; wrong 0, failed 0; "
                        + "load average 1.50", result.summary(By.RECEIVE_TIME, 10, 1_000, 1.5));
        assertEquals("", out.toString(), "no progress line within 5 s");
    }

    @Test
    void progressEveryFiveSecondsAndTheDeadlineEndsTheRun() {
        Run timing = new Run(By.SEND_TIME, targetMs -> {
            nowNanos += TimeUnit.MILLISECONDS.toNanos(2);
            return found(1, 0, targetMs);
        }, () -> nowNanos, new PrintWriter(out, true));

        Run.Result result = timing.lookups(new Random(1), 1_000, 2_000, 0, 10_000, TimeUnit.SECONDS.toNanos(6));

        assertEquals("2500 lookups, 500 lookups/s, p50 2.000 ms, p99 2.000 ms, max 2.000 ms\n", out.toString());
        assertEquals(3_000, result.latencyMicros().getTotalCount());
        assertTrue(result.stopped());
        assertTrue(result.summary(By.SEND_TIME, 0, 10_000, 0.5).endsWith(
                "; wrong 0, failed 0; load average 0.50 (stopped by --max-seconds after 3000 of 10000)"));
    }

    @Test
    void retriableFailuresAreCountedWrongAnswersTooOtherFailuresEndTheRun() {
        int[] call = {0};
        Run timing = new Run(By.RECEIVE_TIME, targetMs -> {
            nowNanos += 1_000;
            call[0]++;
            if (call[0] % 4 == 0) {
                throw new TidemarkException(ErrorCode.NOT_LEADER, "moved");
            }
            return call[0] % 4 == 1 ? found(1, targetMs - 1, targetMs) : found(1, targetMs, targetMs);
        }, () -> nowNanos, new PrintWriter(out, true));

        Run.Result result = timing.lookups(new Random(1), 1_000, 2_000, 0, 8, NO_DEADLINE);

        assertEquals(6, result.latencyMicros().getTotalCount());
        assertEquals(2, result.wrong());
        assertEquals(2, result.failed());
        assertEquals(new TidemarkException(ErrorCode.NOT_LEADER, "moved").toString(), result.firstFailure());
        assertFalse(result.stopped());

        Run broken = new Run(By.RECEIVE_TIME, targetMs -> {
            throw new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "no topic t");
        }, () -> nowNanos, new PrintWriter(out, true));
        assertEquals("no topic t", assertThrows(TidemarkException.class,
                () -> broken.lookups(new Random(1), 1_000, 2_000, 0, 8, NO_DEADLINE)).getMessage());
    }

    @Test
    void targetsAreDrawnWithinTheRange() {
        long[] lowest = {Long.MAX_VALUE};
        long[] highest = {Long.MIN_VALUE};
        Run timing = new Run(By.RECEIVE_TIME, targetMs -> {
            lowest[0] = Math.min(lowest[0], targetMs);
            highest[0] = Math.max(highest[0], targetMs);
            return found(1, targetMs, targetMs);
        }, () -> nowNanos, new PrintWriter(out, true));

        timing.lookups(new Random(7), 1_000, 1_010, 100, 1_000, NO_DEADLINE);

        assertEquals(1_000, lowest[0]);
        assertEquals(1_009, highest[0]);
    }

    private static OffsetLookup found(long offset, long receiveTimeMs, long sendTimeMs) {
        return new OffsetLookup(true, offset, receiveTimeMs, sendTimeMs, 0, 1_000_000);
    }
}
