package io.tidemark.cli;

import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ConsumerRuntime;
import io.tidemark.client.api.Outcome;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RebalanceListener;
import io.tidemark.client.api.Retry;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code tidemark perf produce|consume}: load generators that print what Kafka's producer-perf-test and
 * consumer-perf-test print, so the two can be compared on one machine ({@code failover}, {@code mirror},
 * {@code lookup}, {@code pipeline} and {@code end-to-end} are {@link FailoverPerfCommand}, {@link MirrorPerfCommand},
 * {@link LookupPerfCommand}, {@link PipelinePerfCommand} and {@link EndToEndPerfCommand}).
 * Latency is from {@code send} to the acknowledgement, in an HdrHistogram (microsecond resolution, 3 significant
 * digits). Bounded by a record count; progress every 5 s.
 */
@Command(name = "perf", mixinStandardHelpOptions = true,
        description = "Measure produce and consume throughput, lookups by time, unavailability after a leader crash, "
                + "a mirror, leadership transfers, consumer-group rebalances, the latency from send to a consumer's "
                + "poll and the end-to-end latency of an exactly-once pipeline.",
        subcommands = {PerfCommand.Produce.class, PerfCommand.Consume.class, FailoverPerfCommand.class,
                MirrorPerfCommand.class, LookupPerfCommand.class, TransferPerfCommand.class, GroupPerfCommand.class,
                PipelinePerfCommand.class, EndToEndPerfCommand.class})
final class PerfCommand {
    /** How often a long run prints its progress. */
    static final long REPORT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final double MB = 1024 * 1024;
    /** How far ahead of its time a fixed-rate sender may send a record ({@link #awaitDue}): Kafka's 2 ms. */
    static final long PACING_STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** Longest poll of {@code perf consume}. */
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(500);

    private PerfCommand() {
    }

    /**
     * Holds the calling thread until record {@code i} of a fixed rate may go: {@code i / perSecond} seconds after
     * {@code startNanos} ({@link System#nanoTime}), less up to {@link #PACING_STEP_NANOS}. A record due sooner than
     * that step goes at once, so a sender goes in bursts of one step's records and waits once per step, as Kafka's
     * ProducerPerformance does (its ThroughputThrottler sleeps only once it is 2 ms ahead): the same load for a side by
     * side run, and one wakeup per step instead of one per record. A sender that fell behind goes on at once, so it
     * catches up; over the run the rate is exact.
     */
    static void awaitDue(long startNanos, long i, long perSecond) {
        long due = startNanos + i * 1_000_000_000L / perSecond;
        if (due - System.nanoTime() < PACING_STEP_NANOS) {
            return;
        }
        for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
            LockSupport.parkNanos(wait);
        }
    }

    /** What a failed send's future failed with, as the perf commands print it: the broker's code and message. */
    static String sendFailure(Throwable e) {
        return e.getCause() instanceof TidemarkException t ? t.toString()
                : String.valueOf(e.getCause() == null ? e : e.getCause());
    }

    @Command(name = "produce", mixinStandardHelpOptions = true, description = "Send N records as fast as allowed.")
    static final class Produce implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", required = true)
        String topic;
        @Option(names = "--records", required = true, description = "How many records to send.")
        long records;
        @Option(names = "--record-size", required = true, description = "Value size in bytes (random bytes).")
        int recordSize;
        @Option(names = "--throughput", defaultValue = "-1", description = "Records per second at most; -1: no limit.")
        long throughput;
        @Option(names = "--batch-size", defaultValue = "262144", description = "Producer batch.size in bytes.")
        long batchSize;
        @Option(names = "--linger-ms", defaultValue = "5", description = "Producer linger.ms.")
        long lingerMs;
        @Option(names = "--buffer-memory", defaultValue = "33554432", description = "Producer buffer.memory in bytes.")
        long bufferMemory;
        @Option(names = "--max-in-flight", defaultValue = "5",
                description = "Producer max.in.flight.requests.per.partition, 1..5.")
        long maxInFlight;
        @Option(names = "--transaction-records", description = "Send in transactions of this many records (a "
                + "transactional producer: begin, send, commit), as Kafka's ProducerPerformance does by duration.")
        Long transactionRecords;

        @Override
        public Integer call() {
            if (records < 1 || recordSize < 0 || (transactionRecords != null && transactionRecords < 1)) {
                throw new IllegalArgumentException("--records and --transaction-records must be at least 1 and "
                        + "--record-size at least 0");
            }
            PrintWriter out = spec.commandLine().getOut();
            byte[] value = new byte[recordSize];
            new Random(1).nextBytes(value);
            Recorder window = new Recorder(3);
            Histogram total = new Histogram(3);
            AtomicLong failed = new AtomicLong();
            AtomicReference<String> firstError = new AtomicReference<>();
            ProducerConfig.Builder config = client.producerConfig().batchSizeBytes(batchSize)
                    .lingerMs(lingerMs).bufferMemoryBytes(bufferMemory).maxInFlightPerPartition(maxInFlight);
            if (transactionRecords != null) {
                config.transactionalId("tidemark-perf-" + UUID.randomUUID());
            }
            long start;
            long windowSent = 0;
            try (TidemarkProducer producer = new TidemarkProducer(config.build())) {
                if (transactionRecords != null) {
                    producer.initTransactions();
                }
                // The schedule starts once the producer is built, as Kafka's ProducerPerformance starts its
                // throttler's: records due while a cold JVM built it would otherwise all go in one burst.
                start = System.nanoTime();
                long lastReport = start;
                for (long i = 0; i < records; i++) {
                    if (throughput > 0) {
                        awaitDue(start, i, throughput);
                    }
                    if (transactionRecords != null && i % transactionRecords == 0) {
                        if (i > 0) {
                            producer.commitTransaction();
                        }
                        producer.beginTransaction();
                    }
                    long sentAt = System.nanoTime();
                    producer.send(new ProducerRecord(topic, null, value)).whenComplete((m, e) -> {
                        if (e != null) {
                            failed.incrementAndGet();
                            firstError.compareAndSet(null, sendFailure(e));
                        } else {
                            window.recordValue(Math.max(1, (System.nanoTime() - sentAt) / 1000));
                        }
                    });
                    windowSent++;
                    long now = System.nanoTime();
                    if (now - lastReport >= REPORT_INTERVAL_NANOS) {
                        Histogram interval = window.getIntervalHistogram();
                        total.add(interval);
                        report(out, windowSent, now - lastReport, interval, false);
                        lastReport = now;
                        windowSent = 0;
                    }
                }
                if (transactionRecords != null) {
                    producer.commitTransaction();
                } else {
                    producer.flush();
                }
            }
            long elapsed = System.nanoTime() - start;
            total.add(window.getIntervalHistogram());
            report(out, records - failed.get(), elapsed, total, true);
            if (failed.get() > 0) {
                spec.commandLine().getErr().println("error: " + failed.get() + " records failed; the first: "
                        + firstError.get());
                return TidemarkCommand.USER_ERROR;
            }
            return 0;
        }

        private void report(PrintWriter out, long count, long nanos, Histogram latencyMicros, boolean last) {
            double seconds = nanos / 1e9;
            double perSecond = count / seconds;
            String line = String.format("%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, "
                            + "%.1f ms max latency", count, perSecond, perSecond * recordSize / MB,
                    latencyMicros.getMean() / 1000, latencyMicros.getMaxValue() / 1000.0);
            if (last) {
                line += String.format(", %.1f ms 50th, %.1f ms 95th, %.1f ms 99th, %.1f ms 99.9th.",
                        latencyMicros.getValueAtPercentile(50) / 1000.0, latencyMicros.getValueAtPercentile(95) / 1000.0,
                        latencyMicros.getValueAtPercentile(99) / 1000.0, latencyMicros.getValueAtPercentile(99.9) / 1000.0);
            } else {
                line += ".";
            }
            out.println(line);
            out.flush();
        }
    }

    @Command(name = "consume", mixinStandardHelpOptions = true,
            description = "Read N records of a topic from the earliest offsets, as fast as possible, assigning every "
                    + "partition or (--group) as the one member of a consumer group.")
    static final class Consume implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", required = true)
        String topic;
        @Option(names = "--records", required = true, description = "How many records to read.")
        long records;
        @Option(names = "--timeout", defaultValue = "30s", description = "Give up when no record came for this long.")
        String timeout;
        @Option(names = "--group", description = "Join this consumer group (subscribe; a new group starts at the "
                + "earliest offsets, auto commit on) instead of assigning every partition to the consumer.")
        String group;
        @Option(names = "--mode", description = "With --group: read through a consumer runtime in this commit mode "
                + "(auto or tracked), its handler counting each record and answering ack(), instead of a poll loop.")
        ConsumerRuntime.CommitMode mode;
        @Option(names = "--workers", defaultValue = "8", description = "With --mode: handler threads (default: "
                + "${DEFAULT-VALUE}).")
        int workers;

        /** Times {@code --timeout}. */
        InstantSource clock = Clock.systemUTC();

        /**
         * Reads until {@code --records} came; waiting for the next records, a retriable failure of a poll (a lookup
         * cut by a leader change) is retried like an empty poll ({@link Retry}), and the run ends early only when
         * nothing came for {@code --timeout}, printing the last failure.
         */
        @Override
        public Integer call() throws InterruptedException {
            Duration idle = TimeArguments.parseDuration("--timeout", timeout);
            PrintWriter out = spec.commandLine().getOut();
            if (mode != null) {
                return throughRuntime(idle, out);
            }
            List<TopicPartition> partitions = client.partitions(topic, null);
            long count = 0;
            long bytes = 0;
            TidemarkException idleFor = null;
            long start = System.nanoTime();
            ConsumerConfig.Builder config = client.consumerConfig()
                    .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).maxPollRecords(10_000);
            try (TidemarkConsumer consumer = new TidemarkConsumer(group == null ? config.build()
                    : config.group(group).build())) {
                if (group == null) {
                    consumer.assign(partitions);
                    consumer.seekToBeginning(partitions);
                } else {
                    consumer.subscribe(List.of(topic), RebalanceListener.NONE);
                }
                Retry nextRecords = Retry.within(clock, idle.toMillis(), ConsumerConfig.DEFAULT_RETRY_BACKOFF_MS);
                while (count < records && idleFor == null) {
                    try {
                        List<ConsumerRecord> batch = nextRecords.call(() -> someRecords(consumer));
                        for (ConsumerRecord record : batch) {
                            bytes += record.value() == null ? 0 : record.value().length;
                        }
                        count += batch.size();
                    } catch (TidemarkException e) {
                        if (!e.retriable()) {
                            throw e;
                        }
                        idleFor = e;
                    }
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            out.printf("%d records (%.2f MB) in %.2f s: %.1f records/sec, %.2f MB/sec%n", count, bytes / MB, seconds,
                    count / seconds, bytes / MB / seconds);
            if (count < records) {
                spec.commandLine().getErr().println("error: only " + count + " of " + records
                        + " records came before --timeout " + timeout + " (the last: " + idleFor.getMessage() + ")");
                return TidemarkCommand.USER_ERROR;
            }
            return 0;
        }

        /**
         * Reads through a {@link ConsumerRuntime} until {@code --records} were handled or none was for
         * {@code --timeout}; the time ends when the last record is handled, before the runtime's final commit.
         */
        private int throughRuntime(Duration idle, PrintWriter out) throws InterruptedException {
            if (group == null) {
                throw new IllegalArgumentException("--mode needs --group: the runtime commits the group's positions");
            }
            AtomicLong count = new AtomicLong();
            LongAdder bytes = new LongAdder();
            CountDownLatch done = new CountDownLatch(1);
            AtomicLong lastHandledNanos = new AtomicLong(System.nanoTime());
            ConsumerConfig consumer = client.consumerConfig().group(group)
                    .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).maxPollRecords(10_000).build();
            long start = System.nanoTime();
            long end;
            try (ConsumerRuntime runtime = ConsumerRuntime.builder(consumer, record -> {
                bytes.add(record.value() == null ? 0 : record.value().length);
                long handled = count.incrementAndGet();
                lastHandledNanos.set(System.nanoTime());
                if (handled >= records) {
                    done.countDown();
                }
                return Outcome.ack();
            }).topics(List.of(topic)).mode(mode).workers(workers).maxInFlightPerPartition(10_000).start()) {
                while (!done.await(POLL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) && runtime.running()
                        && System.nanoTime() - lastHandledNanos.get() < idle.toNanos()) {
                    out.flush();
                }
                end = System.nanoTime();
            }
            double seconds = (end - start) / 1e9;
            out.printf("%d records (%.2f MB) in %.2f s: %.1f records/sec, %.2f MB/sec (%s, %d workers)%n", count.get(),
                    bytes.sum() / MB, seconds, count.get() / seconds, bytes.sum() / MB / seconds, mode, workers);
            if (count.get() < records) {
                spec.commandLine().getErr().println("error: only " + count.get() + " of " + records
                        + " records were handled before --timeout " + timeout);
                return TidemarkCommand.USER_ERROR;
            }
            return 0;
        }

        /** The next poll's records; NOT_AVAILABLE when none came within it. */
        private static List<ConsumerRecord> someRecords(TidemarkConsumer consumer) {
            List<ConsumerRecord> batch = consumer.poll(POLL_TIMEOUT);
            if (batch.isEmpty()) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "no record came");
            }
            return batch;
        }
    }
}
