package io.tidemark.cli;

import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRuntime;
import io.tidemark.client.api.Outcome;
import io.tidemark.client.api.Retry;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicDescription;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;

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
 * sends aside, or fails {@value SequenceRun#FINISH_TIMEOUT_MS} ms after {@code --duration}, saying how many are
 * missing. Both topics must be empty at the start: every run numbers its records from 0, so an earlier run's would
 * read as duplicates. Progress every 5 s; the last line is {@link SequenceTally.Result#summary}'s, for scripts. Exits
 * with 1 when a send failed, a sequence number is missing or was read twice.
 *
 * <p>Bounded: at most {@value FixedRateOptions#MAX_RECORDS} records ({@code --rate} × {@code --duration}), and
 * every loop ends by {@code --duration} + {@value SequenceRun#FINISH_TIMEOUT_MS} ms.
 */
@Command(name = "pipeline", mixinStandardHelpOptions = true,
        description = "Measure the end-to-end latency of an exactly-once pipeline: a source at a fixed rate, a "
                + "Transactional-mode consumer runtime copying the input to the output, a read_committed reader.")
final class PipelinePerfCommand implements Callable<Integer> {
    /** Longest wait for the group to give the runtime the input's partitions: a join takes a second or two. */
    private static final long ASSIGN_TIMEOUT_MS = 60_000;
    private static final long ASSIGN_CHECK_MS = 100;
    /** Records one poll of the reader returns at most: a poll keeps up with a high rate, as perf consume's does. */
    private static final int READER_MAX_POLL_RECORDS = 10_000;

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
    @Mixin
    FixedRateOptions load;
    @Option(names = "--commit-interval", defaultValue = "100ms", description = "How often the pipeline commits its "
            + "transaction (default: ${DEFAULT-VALUE}).")
    String commitInterval;
    @Option(names = "--workers", defaultValue = "8", description = "The pipeline's handler threads (default: "
            + "${DEFAULT-VALUE}).")
    int workers;

    /** SendTime, the latencies and the deadlines. */
    InstantSource clock = Clock.systemUTC();

    @Override
    public Integer call() throws InterruptedException {
        FixedRateOptions.Plan plan = load.plan();
        Duration interval = TimeArguments.parseDuration("--commit-interval", commitInterval);
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
                        inputPartitions, input, plan.records(), plan.rate());
                out.flush();
                return measure(pipeline, reader, plan, out, err);
            }
            err.println("error: the pipeline stopped before it read: " + pipeline.failure().orElse(null));
            return TidemarkCommand.USER_ERROR;
        }
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
    private int measure(ConsumerRuntime pipeline, TidemarkConsumer reader, FixedRateOptions.Plan plan, PrintWriter out,
                        PrintWriter err) throws InterruptedException {
        SequenceRun.Outcome run = SequenceRun.run(client.producerConfig().clock(clock.withZone(ZoneOffset.UTC))
                .build(), input, plan, reader, output, pipeline::running, clock, out);
        out.println("runtime: " + pipeline.counts());
        out.println(run.result().summary("pipeline"));
        out.flush();
        List<String> errors = new ArrayList<>(run.errors());
        pipeline.failure().ifPresent(f -> errors.add("the pipeline stopped: " + f));
        errors.forEach(e -> err.println("error: " + e));
        return errors.isEmpty() ? 0 : TidemarkCommand.USER_ERROR;
    }
}
