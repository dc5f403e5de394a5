package io.tidemark.cli;

import io.tidemark.client.api.ConsumerRecord;
import org.HdrHistogram.Histogram;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;

/**
 * What a latency benchmark's reader saw of a {@link SequencedSource}'s sequence numbers: which came (a bit each), how
 * many came again, and the latency of the first copy of each record sent at or after {@code measuredFromMs}: the
 * reader's clock at the poll that returned it minus its SendTime, in an HdrHistogram of ms (3 significant digits).
 * Pure; not thread-safe (the reader's thread).
 */
final class SequenceTally {
    private final long planned;
    private final long measuredFromMs;
    private final BitSet seen = new BitSet();
    private final Histogram latencyMs = new Histogram(3);
    private long distinct;
    private long duplicates;

    /** @param planned the records the source sends at most: the sequence numbers are below it */
    SequenceTally(long planned, long measuredFromMs) {
        this.planned = planned;
        this.measuredFromMs = measuredFromMs;
    }

    /**
     * Counts a record read at {@code nowMs}; a wall clock set back counts as 0 ms.
     *
     * @throws IllegalArgumentException for a record that is not one of this run's: its key is no sequence number
     *                                  below the planned count
     */
    void add(ConsumerRecord record, long nowMs) {
        byte[] key = record.key();
        long sequence = key != null && key.length == Long.BYTES ? ByteBuffer.wrap(key).getLong() : -1;
        if (sequence < 0 || sequence >= planned) {
            throw new IllegalArgumentException(record.topicPartition() + " offset " + record.offset() + " is not "
                    + "a record of this run: its key is no 8-byte sequence number from 0 to " + (planned - 1)
                    + "; does something else write to " + record.topic() + "?");
        }
        if (seen.get((int) sequence)) {
            duplicates++;
            return;
        }
        seen.set((int) sequence);
        distinct++;
        if (record.sendTimeMs() >= measuredFromMs) {
            latencyMs.recordValue(Math.max(0, nowMs - record.sendTimeMs()));
        }
    }

    long distinct() {
        return distinct;
    }

    /** The progress line, {@code elapsedMs} after the source began. */
    String progress(long elapsedMs, long sent) {
        return String.format(Locale.ROOT, "%.1f s: sent %d, read distinct %d, duplicates %d, latency ms p50 %d "
                        + "p99 %d max %d so far", elapsedMs / 1000.0, sent, distinct, duplicates,
                latencyMs.getValueAtPercentile(50), latencyMs.getValueAtPercentile(99), latencyMs.getMaxValue());
    }

    Result result(long sent, long failed) {
        return new Result(sent, failed, distinct, duplicates, latencyMs.copy());
    }

    /**
     * A run's figures.
     *
     * @param sent       records the source handed to its producer
     * @param failed     of them, those whose send failed
     * @param distinct   sequence numbers read
     * @param duplicates records read whose sequence number was read before
     * @param latencyMs  the measured records' latencies
     */
    record Result(long sent, long failed, long distinct, long duplicates, Histogram latencyMs) {
        /** The summary line, in the form scripts parse, after {@code label}: ("pipeline", "end-to-end"). */
        String summary(String label) {
            return String.format(Locale.ROOT, "%s: sent %d, failed %d, read distinct %d, duplicates %d, "
                            + "measured %d, latency ms p50 %d p90 %d p99 %d p99.9 %d max %d", label, sent, failed,
                    distinct, duplicates, latencyMs.getTotalCount(), latencyMs.getValueAtPercentile(50),
                    latencyMs.getValueAtPercentile(90), latencyMs.getValueAtPercentile(99),
                    latencyMs.getValueAtPercentile(99.9), latencyMs.getMaxValue());
        }

        /** What makes the run fail: sends that failed, sequence numbers missing or read twice; empty when none. */
        List<String> errors(String readTopic, String firstFailure) {
            List<String> errors = new ArrayList<>();
            if (failed > 0) {
                errors.add(failed + " sends failed; the first: " + firstFailure);
            }
            if (distinct < sent) {
                errors.add((sent - distinct) + " of the " + sent + " sequence numbers sent never came out of "
                        + readTopic);
            }
            if (duplicates > 0) {
                errors.add(duplicates + " records of " + readTopic + " repeat a sequence number: not exactly once");
            }
            return errors;
        }
    }
}
