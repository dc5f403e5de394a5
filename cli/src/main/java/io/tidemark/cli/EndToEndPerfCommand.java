package io.tidemark.cli;

import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TopicPartition;
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
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code tidemark perf end-to-end}: how long a record takes from the producer's {@code send} to a consumer's poll, at a
 * fixed rate. A {@link SequencedSource} sends {@code --rate} records/s to the topic for {@code --duration} (record
 * {@code i} due {@code i / rate} s after the start, key its sequence number, SendTime from {@link #clock},
 * {@code linger.ms} {@code --linger-ms}); a consumer in the same process, without a group, assigned every partition at
 * its end before the first send, long-polls them (its fetch.max.wait.ms {@code --fetch-max-wait}). A record's latency
 * is the clock at the poll that returned it minus its SendTime, for the records sent {@code --warmup} or more after the
 * start ({@link SequenceTally}); the line before the summary gives the latency of the producer's acknowledgements,
 * so a run tells the fetch path's share apart. Kafka's twin, for side-by-side runs, is
 * {@code bench/kafka/KafkaEndToEnd.java}, which measures the same way.
 *
 * <p>The topic may hold records: the reader starts at its end. The run ends when the reader has seen every sequence
 * number sent (failed sends aside), or fails {@value SequenceRun#FINISH_TIMEOUT_MS} ms after
 * {@code --duration}, saying how many are missing. Progress every 5 s; the last line is the summary, for scripts.
 * Exits with 1 when a send failed, a sequence number is missing or was read twice. Bounded as {@code perf pipeline}
 * is, by {@code --rate} × {@code --duration} records and {@code --duration} plus the finish timeout.
 */
@Command(name = "end-to-end", mixinStandardHelpOptions = true,
        description = "Measure the latency from send to a consumer's poll at a fixed rate: a producer and a "
                + "long-polling consumer of one topic in this process.")
final class EndToEndPerfCommand implements Callable<Integer> {
    /** Records one poll returns at most: a poll keeps up with a high rate, as perf consume's does. */
    private static final int MAX_POLL_RECORDS = 10_000;

    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--topic", required = true, description = "The topic to write and read.")
    String topic;
    @Mixin
    FixedRateOptions load;
    @Option(names = "--linger-ms", defaultValue = "0", description = "The producer's linger.ms (default: "
            + "${DEFAULT-VALUE}, as a side-by-side fixed-rate run).")
    long lingerMs;
    @Option(names = "--fetch-max-wait", defaultValue = "500ms", description = "The consumer's fetch.max.wait.ms: how "
            + "long a broker holds a fetch that finds nothing (default: ${DEFAULT-VALUE}, as Kafka's).")
    String fetchMaxWait;

    /** SendTime, the latencies and the deadlines. */
    InstantSource clock = Clock.systemUTC();

    @Override
    public Integer call() throws InterruptedException {
        FixedRateOptions.Plan plan = load.plan();
        Duration wait = TimeArguments.parseDuration("--fetch-max-wait", fetchMaxWait);
        ProducerConfig producer = client.producerConfig().lingerMs(lingerMs).clock(clock.withZone(ZoneOffset.UTC))
                .build();
        ConsumerConfig consumer = client.consumerConfig().maxPollRecords(MAX_POLL_RECORDS)
                .fetchMaxWaitMs(wait.toMillis()).build();
        PrintWriter out = spec.commandLine().getOut();
        List<TopicPartition> partitions = client.partitions(topic, null);
        try (TidemarkConsumer reader = new TidemarkConsumer(consumer)) {
            reader.assign(partitions);
            reader.seekToEnd(partitions);
            partitions.forEach(reader::position);
            out.printf("reading %s from its end (partitions: %d); sending %d records at %d/s%n", topic,
                    partitions.size(), plan.records(), plan.rate());
            out.flush();
            SequenceRun.Outcome run = SequenceRun.run(producer, topic, plan, reader, topic, () -> true, clock, out);
            out.println(run.acks());
            out.println(run.result().summary("end-to-end"));
            out.flush();
            run.errors().forEach(e -> spec.commandLine().getErr().println("error: " + e));
            return run.errors().isEmpty() ? 0 : TidemarkCommand.USER_ERROR;
        }
    }
}
