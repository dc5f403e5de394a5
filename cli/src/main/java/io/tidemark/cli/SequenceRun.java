package io.tidemark.cli;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.TidemarkConsumer;
import org.HdrHistogram.Histogram;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One run of a latency benchmark: a {@link SequencedSource} on its own thread, and a reader on the calling thread
 * polling until it saw every record the source sent (failed sends aside), {@code going} turned false or the deadline
 * came; the progress every 5 s. Used by {@code perf pipeline} and {@code perf end-to-end}.
 */
final class SequenceRun {
    /**
     * How long after --duration the reader waits for the last records: a pipeline's window commits every 100 ms by
     * default and an election takes about a second (docs/benchmarks.md), so a minute means the run is stuck.
     */
    static final long FINISH_TIMEOUT_MS = 60_000;
    /** Longest poll of the reader: how late it notices the end or the time for a progress line. */
    private static final Duration POLL = Duration.ofMillis(100);
    private static final long REPORT_INTERVAL_MS = TimeUnit.NANOSECONDS.toMillis(PerfCommand.REPORT_INTERVAL_NANOS);

    private SequenceRun() {
    }

    /**
     * A run's figures and what makes it fail: sends that failed, sequence numbers missing or read twice, a source
     * that stopped early, the deadline.
     */
    record Outcome(SequenceTally.Result result, Histogram ackMicros, List<String> errors) {
        /** The acknowledgements' line: every acknowledged record's, the warm-up's too, ms. */
        String acks() {
            return String.format(Locale.ROOT, "acknowledged %d, ack latency ms p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f "
                            + "max %.1f", ackMicros.getTotalCount(), ackMicros.getValueAtPercentile(50) / 1000.0,
                    ackMicros.getValueAtPercentile(90) / 1000.0, ackMicros.getValueAtPercentile(99) / 1000.0,
                    ackMicros.getValueAtPercentile(99.9) / 1000.0, ackMicros.getMaxValue() / 1000.0);
        }
    }

    /**
     * Sends {@code plan}'s records to {@code sendTopic} with a {@link SequencedSource} built of {@code producer}, and
     * reads {@code readTopic} with {@code reader} (assigned, positioned) into a {@link SequenceTally}, the records sent
     * after the plan's warm-up measured; the clock is read once a poll. The reader gives up
     * {@link #FINISH_TIMEOUT_MS} after the plan's duration.
     */
    static Outcome run(ProducerConfig producer, String sendTopic, FixedRateOptions.Plan plan, TidemarkConsumer reader,
                       String readTopic, BooleanSupplier going, InstantSource clock, PrintWriter out)
            throws InterruptedException {
        long startMs = clock.millis();
        long deadlineMs = startMs + plan.length().toMillis() + FINISH_TIMEOUT_MS;
        long planned = plan.records();
        SequencedSource source = new SequencedSource(producer, sendTopic, plan.rate(), plan.recordSize(), planned,
                System.nanoTime(), deadlineMs, clock);
        SequenceTally tally = new SequenceTally(planned, startMs + plan.warmup().toMillis());
        Thread sender = new Thread(source, "perf-source");
        sender.setDaemon(true);
        sender.start();
        long nowMs = startMs;
        try {
            long lastReportMs = startMs;
            while (nowMs < deadlineMs && going.getAsBoolean() && !source.readAll(tally)) {
                List<ConsumerRecord> records = reader.poll(POLL);
                nowMs = clock.millis();
                for (ConsumerRecord record : records) {
                    tally.add(record, nowMs);
                }
                if (nowMs - lastReportMs >= REPORT_INTERVAL_MS) {
                    out.println(tally.progress(nowMs - startMs, source.sent.get()));
                    out.flush();
                    lastReportMs = nowMs;
                }
            }
        } finally {
            source.stop();
            sender.join();
        }
        SequenceTally.Result result = tally.result(source.sent.get(), source.failed.get());
        List<String> errors = new ArrayList<>(result.errors(readTopic, source.firstFailure.get()));
        if (source.error != null) {
            errors.add("the source stopped after " + source.sent.get() + " records: " + source.error);
        } else if (source.sent.get() < planned) {
            errors.add("the source sent only " + source.sent.get() + " of the " + planned + " records planned");
        }
        if (nowMs >= deadlineMs && result.distinct() < result.sent()) {
            errors.add("gave up " + FINISH_TIMEOUT_MS + " ms after --duration " + plan.length().toMillis() + " ms");
        }
        return new Outcome(result, source.ackMicros.getIntervalHistogram(), errors);
    }
}
