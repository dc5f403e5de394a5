package io.tidemark.cli;

import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ConsumerRuntime;
import io.tidemark.client.api.Outcome;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.Retry;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicDescription;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code tidemark perf pipeline}: the end-to-end latency of an exactly-once read-process-write pipeline. Three parts
 * run at once in this process:
 * <ol>
 *   <li>the source, a plain (idempotent, not transactional) producer, sends {@code --rate} records/s to the input
 *       topic for {@code --duration}, record {@code i} due {@code i / rate} s after the start: key the 8-byte
 *       big-endian sequence number {@code i}, value {@code --record-size} random bytes, SendTime stamped by the
 *       producer from {@link #clock};</li>
 *   <li>the pipeline, a {@link ConsumerRuntime} in Transactional mode (group {@code perf-pipeline-<random>},
 *       {@code --workers} handler threads, its window committed every {@code --commit-interval}), copies each record
 *       to the output topic with its key, value and SendTime, as {@code consume --mode transactional --copy-to}
 *       does ({@link HandlerRun#copyingTo});</li>
 *   <li>the reader, a consumer without a group, reads every partition of the output topic from the beginning,
 *       read_committed, so it sees a copy once its window committed. A record's latency is the clock's now at the
 *       poll that returned it minus its SendTime, in an HdrHistogram of ms (3 significant digits), for the records
 *       sent {@code --warmup} or more after the source began.</li>
 * </ol>
 * The source starts once the group gave the runtime every partition of the input (a join would otherwise count in
 * the first records' latency). The run ends when the reader has seen every sequence number the source sent, failed
 * sends aside, or fails {@value #FINISH_TIMEOUT_MS} ms after {@code --duration}, saying how many are missing. Both
 * topics must be empty at the start: every run numbers its records from 0, so an earlier run's would read as
 * duplicates. Progress every 5 s; the last line is {@link Result#summary}'s, for scripts. Exits with 1 when a send
 * failed, a sequence number is missing or was read twice.
 *
 * <p>Bounded: at most {@value #MAX_RECORDS} records ({@code --rate} × {@code --duration}), and every loop ends by
 * {@code --duration} + {@value #FINISH_TIMEOUT_MS} ms.
 */
@Command(name = "pipeline", mixinStandardHelpOptions = true,
        description = "Measure the end-to-end latency of an exactly-once pipeline: a source at a fixed rate, a "
                + "Transactional-mode consumer runtime copying the input to the output, a read_committed reader.")
final class PipelinePerfCommand implements Callable<Integer> {
    /** Most records of one run: bounds the source's loop and the reader's set of sequence numbers (12.5 MB). */
    static final long MAX_RECORDS = 100_000_000;
    /** Longest --duration: with --rate, bounds the source's loop in time. */
    private static final Duration MAX_DURATION = Duration.ofHours(24);
    /** Highest --rate: far above what one process sends here, low enough that rate × duration cannot overflow. */
    private static final long MAX_RATE = 1_000_000;
    /**
     * How long after --duration the reader waits for the last copies: a window commits every 100 ms by default and an
     * election takes about a second (docs/benchmarks.md), so a minute means the pipeline is stuck.
     */
    static final long FINISH_TIMEOUT_MS = 60_000;
    /** Longest wait for the group to give the runtime the input's partitions: a join takes a second or two. */
    private static final long ASSIGN_TIMEOUT_MS = 60_000;
    private static final long ASSIGN_CHECK_MS = 100;
    /** Longest poll of the reader: how late it notices the end or the time for a progress line. */
    private static final Duration POLL = Duration.ofMillis(100);
    /** Records one poll of the reader returns at most: a poll keeps up with a high rate, as perf consume's does. */
    private static final int READER_MAX_POLL_RECORDS = 10_000;
    private static final long REPORT_INTERVAL_MS = TimeUnit.NANOSECONDS.toMillis(PerfCommand.REPORT_INTERVAL_NANOS);

    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--input", required = true, description = "The topic the source writes and the pipeline reads; "
            + "empty.")
    String input;
    @Option(names = "--output", required = true, description = "The topic the pipeline writes and the reader reads; "
            + "empty.")
    String output;
    @Option(names = "--rate", required = true, description = "Records per second the source sends.")
    long rate;
    @Option(names = "--duration", required = true, description = "How long the source sends (500ms, 10s, 5m).")
    String duration;
    @Option(names = "--record-size", required = true, description = "Value size in bytes (random bytes).")
    int recordSize;
    @Option(names = "--commit-interval", defaultValue = "100ms", description = "How often the pipeline commits its "
            + "transaction (default: ${DEFAULT-VALUE}).")
    String commitInterval;
    @Option(names = "--workers", defaultValue = "8", description = "The pipeline's handler threads (default: "
            + "${DEFAULT-VALUE}).")
    int workers;
    @Option(names = "--warmup", defaultValue = "5s", description = "Leave the records sent in this first stretch "
            + "out of the latencies (default: ${DEFAULT-VALUE}).")
    String warmup;

    /** SendTime, the latencies and the deadlines. */
    InstantSource clock = Clock.systemUTC();

    @Override
    public Integer call() throws InterruptedException {
        Duration length = TimeArguments.parseDuration("--duration", duration);
        Duration skip = TimeArguments.parseDuration("--warmup", warmup);
        Duration interval = TimeArguments.parseDuration("--commit-interval", commitInterval);
        long planned = plannedRecords(rate, length, skip, recordSize);
        if (input.equals(output)) {
            throw new IllegalArgumentException("--input and --output are both " + input + ": the pipeline would read "
                    + "its own copies");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int inputPartitions;
        List<TopicPartition> outputPartitions;
        try (TidemarkAdmin admin = client.admin()) {
            inputPartitions = emptyPartitions(admin, input).size();
            outputPartitions = emptyPartitions(admin, output);
        }
        String group = "perf-pipeline-" + UUID.randomUUID();
        ConsumerConfig consumer = client.consumerConfig().group(group)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).build();
        try (ConsumerRuntime pipeline = ConsumerRuntime.pipeline(consumer,
                        HandlerRun.copyingTo(output, record -> Outcome.ack()))
                .topics(List.of(input)).mode(ConsumerRuntime.CommitMode.TRANSACTIONAL).workers(workers)
                .commitInterval(interval)
                .producer(HandlerRun.producer(client, ConsumerRuntime.CommitMode.TRANSACTIONAL, group))
                .start();
             TidemarkConsumer reader = new TidemarkConsumer(client.consumerConfig()
                     .isolationLevel(ConsumerConfig.IsolationLevel.READ_COMMITTED)
                     .maxPollRecords(READER_MAX_POLL_RECORDS).build())) {
            awaitAssignment(pipeline, inputPartitions);
            if (pipeline.running()) {
                reader.assign(outputPartitions);
                reader.seekToBeginning(outputPartitions);
                out.printf("group %s holds the %d partitions of %s; sending %d records at %d/s%n", group,
                        inputPartitions, input, planned, rate);
                out.flush();
                return measure(pipeline, reader, planned, length, skip, out, err);
            }
            err.println("error: the pipeline stopped before it read: " + pipeline.failure().orElse(null));
            return TidemarkCommand.USER_ERROR;
        }
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

    /** The topic's partitions; refuses a topic that holds records already (or markers: offsets count). */
    private static List<TopicPartition> emptyPartitions(TidemarkAdmin admin, String topic) {
        TopicDescription description = admin.describeTopics(List.of(topic)).get(0);
        long held = description.getPartitionsList().stream()
                .mapToLong(p -> p.getLogEndOffset() - p.getLogStartOffset()).sum();
        if (held > 0) {
            throw new IllegalArgumentException("topic " + topic + " holds " + held + " offsets already; give empty "
                    + "topics: every run numbers its records from 0, so an earlier run's would read as duplicates");
        }
        return description.getPartitionsList().stream().map(p -> new TopicPartition(topic, p.getPartition()))
                .toList();
    }

    /** Waits until the group gave the runtime every partition of the input, or the runtime stopped. */
    private void awaitAssignment(ConsumerRuntime pipeline, int partitions) {
        Retry.within(clock, ASSIGN_TIMEOUT_MS, ASSIGN_CHECK_MS)
                .onDeadline((last, attempts) -> new TidemarkException(last.code(), "the pipeline did not get every "
                        + "partition of " + input + " within " + ASSIGN_TIMEOUT_MS + " ms: " + last.getMessage()))
                .run(() -> {
                    int assigned = pipeline.assignment().size();
                    if (pipeline.running() && assigned < partitions) {
                        throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the group gave the pipeline "
                                + assigned + " of the " + partitions + " partitions of " + input);
                    }
                });
    }

    /** Runs the source and the reader until the reader saw what was sent, prints the figures; the exit code. */
    private int measure(ConsumerRuntime pipeline, TidemarkConsumer reader, long planned, Duration length,
                        Duration skip, PrintWriter out, PrintWriter err) throws InterruptedException {
        long startMs = clock.millis();
        long deadlineMs = startMs + length.toMillis() + FINISH_TIMEOUT_MS;
        Tally tally = new Tally(planned, startMs + skip.toMillis());
        Source source = new Source(planned, System.nanoTime(), deadlineMs);
        Thread sender = new Thread(source, "perf-pipeline-source");
        sender.setDaemon(true);
        sender.start();
        try {
            read(pipeline, reader, source, tally, startMs, deadlineMs, out);
        } finally {
            source.stop();
            sender.join();
        }
        Result result = tally.result(source.sent.get(), source.failed.get());
        out.println("runtime: " + pipeline.counts());
        out.println(result.summary());
        out.flush();
        List<String> errors = new ArrayList<>(result.errors(output, source.firstFailure.get()));
        if (source.error != null) {
            errors.add("the source stopped after " + source.sent.get() + " records: " + source.error);
        } else if (source.sent.get() < planned) {
            errors.add("the source sent only " + source.sent.get() + " of the " + planned + " records planned");
        }
        pipeline.failure().ifPresent(f -> errors.add("the pipeline stopped: " + f));
        if (clock.millis() >= deadlineMs && result.distinct() < result.sent()) {
            errors.add("gave up " + FINISH_TIMEOUT_MS + " ms after --duration " + duration);
        }
        errors.forEach(e -> err.println("error: " + e));
        return errors.isEmpty() ? 0 : TidemarkCommand.USER_ERROR;
    }

    /**
     * Reads the output until every record sent (failed sends aside) was read, the pipeline stopped or the deadline
     * came; prints the progress every 5 s. The clock is read once a poll.
     */
    private void read(ConsumerRuntime pipeline, TidemarkConsumer reader, Source source, Tally tally, long startMs,
                      long deadlineMs, PrintWriter out) {
        long nowMs = startMs;
        long lastReportMs = startMs;
        while (nowMs < deadlineMs && pipeline.running() && !source.readAll(tally)) {
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
    }

    /** The key of record {@code sequence}: the number, 8 bytes big-endian. */
    static byte[] key(long sequence) {
        return ByteBuffer.allocate(Long.BYTES).putLong(sequence).array();
    }

    /**
     * The source: sends record {@code i} when due, until the planned count, the deadline or {@link #stop}, then
     * closes its producer (waiting for the acknowledgements, up to delivery.timeout.ms). Runs on its own thread; the
     * counts are read by the reader's.
     */
    private final class Source implements Runnable {
        final AtomicLong sent = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<String> firstFailure = new AtomicReference<>();
        /** What ended the loop early: a send that threw (no metadata, no buffer memory within max.block.ms). */
        volatile RuntimeException error;
        private final long planned;
        private final long startNanos;
        private final long deadlineMs;
        private final CountDownLatch finished = new CountDownLatch(1);
        private volatile boolean stopped;

        Source(long planned, long startNanos, long deadlineMs) {
            this.planned = planned;
            this.startNanos = startNanos;
            this.deadlineMs = deadlineMs;
        }

        @Override
        public void run() {
            byte[] value = new byte[recordSize];
            new Random(1).nextBytes(value);
            try (TidemarkProducer producer = new TidemarkProducer(client.producerConfig()
                    .clock(clock.withZone(ZoneOffset.UTC)).build())) {
                for (long i = 0; i < planned && !stopped && clock.millis() < deadlineMs; i++) {
                    PerfCommand.awaitDue(startNanos, i, rate);
                    producer.send(new ProducerRecord(input, key(i), value)).whenComplete((stored, e) -> {
                        if (e != null) {
                            failed.incrementAndGet();
                            firstFailure.compareAndSet(null, PerfCommand.sendFailure(e));
                        }
                    });
                    sent.incrementAndGet();
                }
            } catch (RuntimeException e) {
                error = e;
            } finally {
                finished.countDown();
            }
        }

        /** Whether the source finished and the reader saw every record it sent but those that failed. */
        boolean readAll(Tally tally) {
            return finished.getCount() == 0 && tally.distinct() + failed.get() >= sent.get();
        }

        void stop() {
            stopped = true;
        }
    }

    /**
     * What the reader saw of the source's sequence numbers: which came (a bit each), how many came again, and the
     * latency of the first copy of each record sent at or after {@code measuredFromMs}. Pure; not thread-safe (the
     * reader's thread).
     */
    static final class Tally {
        private final long planned;
        private final long measuredFromMs;
        private final BitSet seen = new BitSet();
        private final Histogram latencyMs = new Histogram(3);
        private long distinct;
        private long duplicates;

        Tally(long planned, long measuredFromMs) {
            this.planned = planned;
            this.measuredFromMs = measuredFromMs;
        }

        /**
         * Counts a record of the output read at {@code nowMs}; a wall clock set back counts as 0 ms.
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
            return String.format(Locale.ROOT, "%.1f s: sent %d, output distinct %d, duplicates %d, latency ms p50 %d "
                            + "p99 %d max %d so far", elapsedMs / 1000.0, sent, distinct, duplicates,
                    latencyMs.getValueAtPercentile(50), latencyMs.getValueAtPercentile(99), latencyMs.getMaxValue());
        }

        Result result(long sent, long failed) {
            return new Result(sent, failed, distinct, duplicates, latencyMs.copy());
        }
    }

    /**
     * A run's figures.
     *
     * @param sent       records the source handed to its producer
     * @param failed     of them, those whose send failed
     * @param distinct   sequence numbers read from the output
     * @param duplicates records of the output whose sequence number was read before
     * @param latencyMs  the measured records' latencies
     */
    record Result(long sent, long failed, long distinct, long duplicates, Histogram latencyMs) {
        /** The summary line, in the form scripts parse. */
        String summary() {
            return String.format(Locale.ROOT, "pipeline: sent %d, failed %d, output distinct %d, duplicates %d, "
                            + "measured %d, latency ms p50 %d p90 %d p99 %d p99.9 %d max %d", sent, failed, distinct,
                    duplicates, latencyMs.getTotalCount(), latencyMs.getValueAtPercentile(50),
                    latencyMs.getValueAtPercentile(90), latencyMs.getValueAtPercentile(99),
                    latencyMs.getValueAtPercentile(99.9), latencyMs.getMaxValue());
        }

        /** What makes the run fail: sends that failed, sequence numbers missing or read twice; empty when none. */
        List<String> errors(String outputTopic, String firstFailure) {
            List<String> errors = new ArrayList<>();
            if (failed > 0) {
                errors.add(failed + " sends failed; the first: " + firstFailure);
            }
            if (distinct < sent) {
                errors.add((sent - distinct) + " of the " + sent + " sequence numbers sent never came out of "
                        + outputTopic);
            }
            if (duplicates > 0) {
                errors.add(duplicates + " records of " + outputTopic + " repeat a sequence number: not exactly once");
            }
            return errors;
        }
    }
}
