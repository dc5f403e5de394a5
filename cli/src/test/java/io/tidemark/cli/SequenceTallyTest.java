package io.tidemark.cli;

import io.tidemark.client.api.ConsumerRecord;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SequenceTallyTest {
    @Test
    void keysAreTheSequenceNumberBigEndian() {
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, SequencedSource.key(0x0102030405060708L));
        assertArrayEquals(new byte[8], SequencedSource.key(0));
    }

    @Test
    void theTallyCountsEachNumberOnceAndMeasuresTheFirstCopiesSentAfterTheWarmup() {
        SequenceTally tally = new SequenceTally(10, 1_000);
        tally.add(copy(0, 990), 1_500);
        tally.add(copy(1, 1_000), 1_012);
        tally.add(copy(2, 1_001), 1_031);
        tally.add(copy(1, 1_000), 1_040);
        tally.add(copy(3, 1_002), 1_001);
        tally.add(copy(9, 1_003), 995);

        assertEquals(5, tally.distinct());
        assertEquals("pipeline: sent 6, failed 1, read distinct 5, duplicates 1, measured 4, latency ms p50 0 "
                + "p90 30 p99 30 p99.9 30 max 30", tally.result(6, 1).summary("pipeline"),
                "record 0 was sent in the warm-up, the second copy of 1 is not measured, and the clock set back "
                        + "under record 9 counts as 0 ms");
        assertEquals("2.5 s: sent 6, read distinct 5, duplicates 1, latency ms p50 0 p99 30 max 30 so far",
                tally.progress(2_500, 6));
    }

    @Test
    void aRecordOfAnotherRunOrProducerIsRefused() {
        SequenceTally tally = new SequenceTally(10, 0);
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
        SequenceTally.Result result = new SequenceTally.Result(60_000, 0, 60_000, 0, latencyMs);
        assertEquals("end-to-end: sent 60000, failed 0, read distinct 60000, duplicates 0, measured 1000, latency ms "
                + "p50 500 p90 900 p99 990 p99.9 999 max 1000", result.summary("end-to-end"));
        assertEquals(List.of(), result.errors("out", null));
    }

    @Test
    void failedSendsMissingNumbersAndDuplicatesFailTheRun() {
        SequenceTally.Result result = new SequenceTally.Result(1_000, 2, 990, 3, new Histogram(3));
        assertEquals(List.of("2 sends failed; the first: NOT_LEADER: moved",
                        "10 of the 1000 sequence numbers sent never came out of out",
                        "3 records of out repeat a sequence number: not exactly once"),
                result.errors("out", "NOT_LEADER: moved"));
    }

    /** The copy read of record {@code sequence}, sent at {@code sendTimeMs}. */
    private static ConsumerRecord copy(long sequence, long sendTimeMs) {
        return new ConsumerRecord("out", 3, 7, SequencedSource.key(sequence), new byte[100], List.of(),
                sendTimeMs, sendTimeMs + 1);
    }
}
