package io.tidemark.cli;

import io.tidemark.cli.PipelinePerfCommand.Result;
import io.tidemark.cli.PipelinePerfCommand.Tally;
import io.tidemark.client.api.ConsumerRecord;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PipelinePerfCommandTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
    }

    /** {@code perf pipeline} against a port nothing listens on, so only a refusal before any call passes. */
    private String refusal(String... args) {
        err.getBuffer().setLength(0);
        String[] all = new String[args.length + 4];
        System.arraycopy(new String[] {"perf", "pipeline", "--bootstrap", "127.0.0.1:1"}, 0, all, 0, 4);
        System.arraycopy(args, 0, all, 4, args.length);
        assertEquals(1, run(all), err.toString());
        return err.toString().strip();
    }

    @Test
    void argumentsAreCheckedBeforeAnyCall() {
        String ranges = "error: --rate must be from 1 to 1000000 records/s, --duration from 1ms to 24h, --warmup at "
                + "least 0 and shorter than --duration, --record-size at least 0";
        assertEquals(ranges, refusal("--input", "in", "--output", "out", "--rate", "0", "--duration", "10s",
                "--record-size", "100"));
        assertEquals(ranges, refusal("--input", "in", "--output", "out", "--rate", "100", "--duration", "5s",
                "--record-size", "100"), "the default --warmup 5s leaves nothing to measure");
        assertEquals(ranges, refusal("--input", "in", "--output", "out", "--rate", "100", "--duration", "25h",
                "--record-size", "100", "--warmup", "0s"));
        assertEquals(ranges, refusal("--input", "in", "--output", "out", "--rate", "100", "--duration", "10s",
                "--record-size", "-1"));
        assertEquals("error: --rate 1000000 for --duration 120000 ms is 120000000 records; a run sends 1 to "
                + "100000000", refusal("--input", "in", "--output", "out", "--rate", "1000000", "--duration", "2m",
                "--record-size", "100"));
        assertEquals("error: --input and --output are both t: the pipeline would read its own copies",
                refusal("--input", "t", "--output", "t", "--rate", "100", "--duration", "10s", "--record-size", "1"));
        assertEquals("error: --commit-interval 'often' is not a duration: give a number with ms, s, m, h or d "
                + "(500ms, 10s, 5m, 30d) or ISO-8601 (PT10S)", refusal("--input", "in", "--output", "out", "--rate",
                "100", "--duration", "10s", "--record-size", "1", "--commit-interval", "often"));
        assertEquals(2, run("perf", "pipeline", "--input", "in", "--rate", "100", "--duration", "10s",
                "--record-size", "1"), "--output is required");
    }

    @Test
    void theSourceSendsRateTimesDurationRecords() {
        assertEquals(15_000, PipelinePerfCommand.plannedRecords(1_000, Duration.ofSeconds(15), Duration.ofSeconds(5),
                100));
        assertEquals(4, PipelinePerfCommand.plannedRecords(3, Duration.ofMillis(1_500), Duration.ZERO, 0),
                "record i is due at i / rate s: 0, 0.33, 0.67 and 1 s fall within 1.5 s");
        assertEquals("--rate 1 for --duration 999 ms is 0 records; a run sends 1 to 100000000",
                assertThrows(IllegalArgumentException.class, () -> PipelinePerfCommand.plannedRecords(1,
                        Duration.ofMillis(999), Duration.ZERO, 0)).getMessage());
    }

    @Test
    void keysAreTheSequenceNumberBigEndian() {
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, PipelinePerfCommand.key(0x0102030405060708L));
        assertArrayEquals(new byte[8], PipelinePerfCommand.key(0));
    }

    @Test
    void theTallyCountsEachNumberOnceAndMeasuresTheFirstCopiesSentAfterTheWarmup() {
        Tally tally = new Tally(10, 1_000);
        tally.add(copy(0, 990), 1_500);
        tally.add(copy(1, 1_000), 1_012);
        tally.add(copy(2, 1_001), 1_031);
        tally.add(copy(1, 1_000), 1_040);
        tally.add(copy(3, 1_002), 1_001);
        tally.add(copy(9, 1_003), 995);

        assertEquals(5, tally.distinct());
        assertEquals("pipeline: sent 6, failed 1, output distinct 5, duplicates 1, measured 4, latency ms p50 0 "
                + "p90 30 p99 30 p99.9 30 max 30", tally.result(6, 1).summary(),
                "record 0 was sent in the warm-up, the second copy of 1 is not measured, and the clock set back "
                        + "under record 9 counts as 0 ms");
        assertEquals("2.5 s: sent 6, output distinct 5, duplicates 1, latency ms p50 0 p99 30 max 30 so far",
                tally.progress(2_500, 6));
    }

    @Test
    void aRecordOfAnotherRunOrProducerIsRefused() {
        Tally tally = new Tally(10, 0);
        assertEquals("out-3 offset 7 is not a record of this run: its key is no 8-byte sequence number from 0 to 9; "
                + "does something else write to out?", assertThrows(IllegalArgumentException.class,
                () -> tally.add(copy(10, 0), 0)).getMessage());
        ConsumerRecord noKey = new ConsumerRecord("out", 3, 7, null, new byte[1], List.of(), 0, 0);
        assertThrows(IllegalArgumentException.class, () -> tally.add(noKey, 0));
        ConsumerRecord shortKey = new ConsumerRecord("out", 3, 7, new byte[4], new byte[1], List.of(), 0, 0);
        assertThrows(IllegalArgumentException.class, () -> tally.add(shortKey, 0));
        assertEquals(0, tally.distinct());
    }

    @Test
    void theSummaryGivesThePercentilesInMilliseconds() {
        Histogram latencyMs = new Histogram(3);
        for (int ms = 1; ms <= 1_000; ms++) {
            latencyMs.recordValue(ms);
        }
        Result result = new Result(60_000, 0, 60_000, 0, latencyMs);
        assertEquals("pipeline: sent 60000, failed 0, output distinct 60000, duplicates 0, measured 1000, latency ms "
                + "p50 500 p90 900 p99 990 p99.9 999 max 1000", result.summary());
        assertEquals(List.of(), result.errors("out", null));
    }

    @Test
    void failedSendsMissingNumbersAndDuplicatesFailTheRun() {
        Result result = new Result(1_000, 2, 990, 3, new Histogram(3));
        assertEquals(List.of("2 sends failed; the first: NOT_LEADER: moved",
                        "10 of the 1000 sequence numbers sent never came out of out",
                        "3 records of out repeat a sequence number: not exactly once"),
                result.errors("out", "NOT_LEADER: moved"));
    }

    /** The output's copy of record {@code sequence}, sent at {@code sendTimeMs}. */
    private static ConsumerRecord copy(long sequence, long sendTimeMs) {
        return new ConsumerRecord("out", 3, 7, PipelinePerfCommand.key(sequence), new byte[100], List.of(),
                sendTimeMs, sendTimeMs + 1);
    }
}
