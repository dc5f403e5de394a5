package io.tidemark.cli;

import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.PartitionDescription;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * {@code tidemark perf lookup}: the latency of a lookup by time through the API, {@link TidemarkAdmin#listOffsets}
 * by ReceiveTime or SendTime on one partition, one call at a time with one admin client, as Kafka's reference
 * harness times {@code Admin.listOffsets(OffsetSpec.forTimestamp(t))} ({@code shared/bench/kafka},
 * {@code ListOffsetsBench}). The targets are drawn uniformly (seeded) between the partition's first record's time and
 * its last (the last ReceiveTime; for SendTime, that of the first record with the last ReceiveTime, so a record is at
 * or after every target); the first {@code --warmup} lookups are not counted, and every answer is checked (a record
 * found, its time at or after the target). Latency is from the call to its answer, in an HdrHistogram of
 * microseconds (values below 2,048 µs exact, 3 significant digits above); progress every 5 s.
 *
 * <p>Bounded by {@code --lookups} and {@code --max-seconds}. A retriable failure (a leader change) is counted and the
 * run goes on; its lookup is not in the figures.
 */
@Command(name = "lookup", mixinStandardHelpOptions = true,
        description = "Time lookups by ReceiveTime or SendTime on one partition, one at a time.")
final class LookupPerfCommand implements Callable<Integer> {
    private static final long REPORT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** Which time a lookup searches. */
    enum By {
        RECEIVE_TIME("receive-time", "ReceiveTime"), SEND_TIME("send-time", "SendTime");

        private final String argument;
        private final String timeName;

        By(String argument, String timeName) {
            this.argument = argument;
            this.timeName = timeName;
        }

        static By parse(String argument) {
            return Arrays.stream(values()).filter(b -> b.argument.equals(argument)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("'" + argument + "' is not allowed: give "
                            + Arrays.stream(values()).map(b -> b.argument).collect(Collectors.joining(" or "))));
        }

        OffsetSpec spec(long timeMs) {
            return this == RECEIVE_TIME ? OffsetSpec.receiveTime(timeMs) : OffsetSpec.sendTime(timeMs);
        }

        long timeOf(OffsetLookup answer) {
            return this == RECEIVE_TIME ? answer.receiveTimeMs() : answer.sendTimeMs();
        }

        /**
         * Whether an answer to a lookup of {@code targetMs} is wrong: no record found, although a record's time is at
         * or after every target, or a record whose time is before the target.
         */
        boolean wrong(OffsetLookup answer, long targetMs) {
            return !answer.found() || timeOf(answer) < targetMs;
        }

        @Override
        public String toString() {
            return timeName;
        }
    }

    /** Picocli's converter of {@code --by}: a wrong value is a usage error. */
    static final class ByConverter implements ITypeConverter<By> {
        @Override
        public By convert(String value) {
            try {
                return By.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--topic", required = true)
    String topic;
    @Option(names = "--partition", defaultValue = "0", description = "Partition (default: ${DEFAULT-VALUE}).")
    int partition;
    @Option(names = "--by", defaultValue = "receive-time", converter = ByConverter.class,
            description = "receive-time or send-time (default: ${DEFAULT-VALUE}).")
    By by;
    @Option(names = "--lookups", defaultValue = "1000", description = "Lookups timed (default: ${DEFAULT-VALUE}).")
    int lookups;
    @Option(names = "--warmup", defaultValue = "100", description = "Lookups before the timed ones, not counted "
            + "(default: ${DEFAULT-VALUE}).")
    int warmup;
    @Option(names = "--seed", defaultValue = "42",
            description = "Seed of the random targets (default: ${DEFAULT-VALUE}).")
    long seed;
    @Option(names = "--max-seconds", defaultValue = "300", description = "Stop after this long even if lookups remain "
            + "(default: ${DEFAULT-VALUE}).")
    long maxSeconds;

    /** Times the lookups and the run's bound. */
    LongSupplier nanoTime = System::nanoTime;

    @Override
    public Integer call() {
        checkArguments();
        PrintWriter out = spec.commandLine().getOut();
        TopicPartition tp = new TopicPartition(topic, partition);
        try (TidemarkAdmin admin = client.admin()) {
            OffsetLookup first = admin.listOffsets(tp, OffsetSpec.earliest());
            if (!first.found()) {
                throw new IllegalArgumentException(tp + " holds no record: produce some first");
            }
            long lastReceiveTimeMs = lastReceiveTimeMs(admin, tp);
            long loMs = by.timeOf(first);
            long hiMs = by == By.RECEIVE_TIME ? lastReceiveTimeMs
                    : admin.listOffsets(tp, OffsetSpec.receiveTime(lastReceiveTimeMs)).sendTimeMs();
            out.printf("%s offsets [%d, %d) records=%d %s range [%d, %d] (%.1f s)%n", tp, first.logStartOffset(),
                    first.logEndOffset(), first.logEndOffset() - first.logStartOffset(), by, loMs, hiMs,
                    (hiMs - loMs) / 1000.0);
            out.flush();
            Run run = new Run(by, timeMs -> admin.listOffsets(tp, by.spec(timeMs)), nanoTime, out);
            Run.Result result = run.lookups(new Random(seed), loMs, hiMs, warmup, lookups,
                    nanoTime.getAsLong() + TimeUnit.SECONDS.toNanos(maxSeconds));
            out.println(result.summary(by, warmup, lookups, loadAverage()));
            if (result.firstFailure() != null) {
                out.println("first failure: " + result.firstFailure());
            }
            out.flush();
            return result.wrong() == 0 && result.latencyMicros().getTotalCount() > 0 ? 0 : TidemarkCommand.USER_ERROR;
        }
    }

    void checkArguments() {
        if (lookups < 1 || warmup < 0 || maxSeconds < 1 || partition < 0) {
            throw new IllegalArgumentException("--lookups and --max-seconds must be at least 1, --warmup and "
                    + "--partition at least 0");
        }
    }

    /** The partition's last ReceiveTime, from its description. */
    private static long lastReceiveTimeMs(TidemarkAdmin admin, TopicPartition tp) {
        return admin.describeTopics(List.of(tp.topic())).get(0).getPartitionsList().stream()
                .filter(p -> p.getPartition() == tp.partition()).findFirst()
                .map(PartitionDescription::getLastReceiveTimeMs)
                .orElseThrow(() -> new IllegalArgumentException("no partition " + tp));
    }

    /** The 1-minute load average of the machine, which the client shares with the brokers here. */
    private static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    /**
     * Lookups one at a time: the warm-up, then the timed ones, until their count or the deadline; a progress line
     * every 5 s. Not thread-safe.
     */
    static final class Run {
        private final By by;
        private final LongFunction<OffsetLookup> lookup;
        private final LongSupplier nanoTime;
        private final PrintWriter progress;

        /**
         * The figures of the timed lookups.
         *
         * @param latencyMicros each counted lookup's latency
         * @param elapsedNanos  from the first timed lookup to the end of the last
         * @param wrong         answers that are not at or after their target
         * @param failed        retriable failures, not in the latencies
         * @param firstFailure  the first of them; null when none
         * @param stopped       whether the deadline ended the run before its count
         */
        record Result(Histogram latencyMicros, long elapsedNanos, long wrong, long failed, String firstFailure,
                      boolean stopped) {
            String summary(By by, int warmup, int asked, double loadAverage) {
                Histogram h = latencyMicros;
                double seconds = elapsedNanos / 1e9;
                return String.format("lookup by %s: %d lookups (warmup %d) in %.2f s, %.0f lookups/s: avg %.3f ms, "
                                + "p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms; wrong %d, "
                                + "failed %d; load average %.2f%s", by, h.getTotalCount(), warmup, seconds,
                        h.getTotalCount() / seconds, h.getMean() / 1000, millis(h, 50), millis(h, 90), millis(h, 99),
                        millis(h, 99.9), h.getMaxValue() / 1000.0, wrong, failed, loadAverage,
                        stopped ? " (stopped by --max-seconds after " + (h.getTotalCount() + failed) + " of " + asked
                                + ")" : "");
            }
        }

        Run(By by, LongFunction<OffsetLookup> lookup, LongSupplier nanoTime, PrintWriter progress) {
            this.by = by;
            this.lookup = lookup;
            this.nanoTime = nanoTime;
            this.progress = progress;
        }

        Result lookups(Random random, long loMs, long hiMs, int warmup, int count, long deadlineNanos) {
            Phase warm = new Phase();
            for (int i = 0; i < warmup && nanoTime.getAsLong() < deadlineNanos; i++) {
                warm.lookup(target(random, loMs, hiMs));
            }
            Phase timed = new Phase();
            long start = nanoTime.getAsLong();
            long lastReport = start;
            int done = 0;
            for (; done < count && nanoTime.getAsLong() < deadlineNanos; done++) {
                timed.lookup(target(random, loMs, hiMs));
                long now = nanoTime.getAsLong();
                if (now - lastReport >= REPORT_INTERVAL_NANOS) {
                    Histogram h = timed.latencyMicros;
                    progress.printf("%d lookups, %.0f lookups/s, p50 %.3f ms, p99 %.3f ms, max %.3f ms%n",
                            done + 1, (done + 1) / ((now - start) / 1e9), millis(h, 50), millis(h, 99),
                            h.getMaxValue() / 1000.0);
                    progress.flush();
                    lastReport = now;
                }
            }
            return new Result(timed.latencyMicros, nanoTime.getAsLong() - start, timed.wrong, timed.failed,
                    timed.firstFailure, done < count);
        }

        private static long target(Random random, long loMs, long hiMs) {
            return loMs + (long) (random.nextDouble() * (hiMs - loMs));
        }

        /** The lookups of one phase: their latencies, wrong answers and retriable failures. */
        private final class Phase {
            final Histogram latencyMicros = new Histogram(3);
            long wrong;
            long failed;
            String firstFailure;

            void lookup(long targetMs) {
                long start = nanoTime.getAsLong();
                OffsetLookup answer;
                try {
                    answer = lookup.apply(targetMs);
                } catch (TidemarkException e) {
                    if (!e.retriable()) {
                        throw e;
                    }
                    failed++;
                    firstFailure = firstFailure == null ? e.toString() : firstFailure;
                    return;
                }
                latencyMicros.recordValue(Math.max(1, (nanoTime.getAsLong() - start) / 1000));
                wrong += by.wrong(answer, targetMs) ? 1 : 0;
            }
        }
    }

    private static double millis(Histogram micros, double percentile) {
        return micros.getValueAtPercentile(percentile) / 1000.0;
    }
}
