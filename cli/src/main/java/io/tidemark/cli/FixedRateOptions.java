package io.tidemark.cli;

import picocli.CommandLine.Option;

import java.time.Duration;

/**
 * The options of a fixed-rate latency run ({@code perf pipeline}, {@code perf end-to-end}): {@code --rate} records/s
 * of {@code --record-size} bytes for {@code --duration}, the first {@code --warmup} left out of the latencies; checked
 * into a {@link Plan} before any call. A picocli mixin.
 */
final class FixedRateOptions {
    /** Most records of one run: bounds the source's loop and the reader's set of sequence numbers (12.5 MB). */
    static final long MAX_RECORDS = 100_000_000;
    /** Longest --duration: with --rate, bounds the source's loop in time. */
    private static final Duration MAX_DURATION = Duration.ofHours(24);
    /** Highest --rate: far above what one process sends here, low enough that rate × duration cannot overflow. */
    private static final long MAX_RATE = 1_000_000;

    @Option(names = "--rate", required = true, description = "Records per second the source sends.")
    long rate;
    @Option(names = "--duration", required = true, description = "How long the source sends (500ms, 10s, 5m).")
    String duration;
    @Option(names = "--record-size", required = true, description = "Value size in bytes (random bytes).")
    int recordSize;
    @Option(names = "--warmup", defaultValue = "5s", description = "Leave the records sent in this first stretch "
            + "out of the latencies (default: ${DEFAULT-VALUE}).")
    String warmup;

    /**
     * A checked run.
     *
     * @param records the records it sends: rate × duration
     */
    record Plan(long rate, int recordSize, Duration length, Duration warmup, long records) {
    }

    /** @throws IllegalArgumentException naming the option out of range or not a duration */
    Plan plan() {
        Duration length = TimeArguments.parseDuration("--duration", duration);
        Duration skip = TimeArguments.parseDuration("--warmup", warmup);
        return new Plan(rate, recordSize, length, skip, plannedRecords(rate, length, skip, recordSize));
    }

    /**
     * The records --rate × --duration sends.
     *
     * @throws IllegalArgumentException naming the argument out of range
     */
    static long plannedRecords(long rate, Duration duration, Duration warmup, int recordSize) {
        if (rate < 1 || rate > MAX_RATE || duration.compareTo(Duration.ofMillis(1)) < 0
                || duration.compareTo(MAX_DURATION) > 0 || warmup.isNegative() || warmup.compareTo(duration) >= 0
                || recordSize < 0) {
            throw new IllegalArgumentException("--rate must be from 1 to " + MAX_RATE + " records/s, --duration from "
                    + "1ms to 24h, --warmup at least 0 and shorter than --duration, --record-size at least 0");
        }
        long records = rate * duration.toMillis() / 1000;
        if (records < 1 || records > MAX_RECORDS) {
            throw new IllegalArgumentException("--rate " + rate + " for --duration " + duration.toMillis()
                    + " ms is " + records + " records; a run sends 1 to " + MAX_RECORDS);
        }
        return records;
    }
}
