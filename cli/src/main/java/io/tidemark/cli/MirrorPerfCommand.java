package io.tidemark.cli;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.Retry;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.TopicDescription;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code tidemark perf mirror}: how fast a running {@code tidemark mirror} copies a topic, and with what latency.
 * It takes the source topic's log end offsets when it starts, prints every second how many records the target
 * holds, and once the target holds as many as the source had, prints the time from the first record stamped on the
 * target to the last (records/s, MB/s) and the bytes the target stores against the source's. With
 * {@code --latency} it then reads every copy and prints the percentiles of target ReceiveTime minus origin ReceiveTime
 * (the hop) and minus SendTime, leaving out the records of the first {@code --warm-up} (the mirror's JIT).
 *
 * <p>The target topic is taken to hold nothing else: its records are counted by its log end offsets.
 */
@Command(name = "mirror", mixinStandardHelpOptions = true,
        description = "Measure a running mirror: wait until the target holds what the source topic holds now; "
                + "print the copy rate, the bytes stored and (--latency) the hop's latency percentiles.")
final class MirrorPerfCommand implements Callable<Integer> {
    private static final long PROGRESS_INTERVAL_MS = 1_000;
    private static final int READ_BYTES = 4 << 20;

    @Spec
    CommandSpec spec;
    @Option(names = "--source", required = true, paramLabel = "HOST:PORT[,...]", description = "The source cluster.")
    String source;
    @Option(names = "--target", required = true, paramLabel = "HOST:PORT[,...]", description = "The target cluster.")
    String target;
    @Option(names = "--topic", required = true, description = "The source topic.")
    String topic;
    @Option(names = "--target-topic", description = "The target topic (default: the source topic's name).")
    String targetTopic;
    @Option(names = "--timeout", defaultValue = "10m",
            description = "Give up when the target does not hold every record by then (default: ${DEFAULT-VALUE}).")
    String timeout;
    @Option(names = "--latency", description = "Read every copy and print the latency percentiles.")
    boolean latency;
    @Option(names = "--warm-up", defaultValue = "10s",
            description = "With --latency: leave out the records stamped on the target in this first stretch "
                    + "(default: ${DEFAULT-VALUE}).")
    String warmUp;
    /** Times {@code --timeout}. */
    InstantSource clock = Clock.systemUTC();

    @Override
    public Integer call() {
        Duration limit = TimeArguments.parseDuration("--timeout", timeout);
        Duration skip = TimeArguments.parseDuration("--warm-up", warmUp);
        String copyTopic = targetTopic == null ? topic : targetTopic;
        PrintWriter out = spec.commandLine().getOut();
        try (TidemarkAdmin sourceAdmin = new TidemarkAdmin(AdminConfig.builder(source).build());
             TidemarkAdmin targetAdmin = new TidemarkAdmin(AdminConfig.builder(target).build())) {
            TopicDescription atStart = describe(sourceAdmin, topic);
            long wanted = atStart.getPartitionsList().stream().mapToLong(PartitionDescription::getLogEndOffset).sum();
            out.printf("waiting for %d records of %s on the target%n", wanted, topic);
            out.flush();
            long started = System.nanoTime();
            TopicDescription copied = awaitCopies(targetAdmin, copyTopic, atStart, limit, out);
            MirrorRun run = run(targetAdmin, copyTopic, describe(sourceAdmin, topic), copied);
            out.printf("%s; %.1f s since this command started%n", run.summary(),
                    (System.nanoTime() - started) / 1e9);
            if (latency) {
                printLatencies(targetAdmin, copied, run, skip.toMillis(), out);
            }
            out.flush();
            return 0;
        }
    }

    private static TopicDescription describe(TidemarkAdmin admin, String name) {
        return admin.describeTopics(List.of(name)).get(0);
    }

    /**
     * Polls the target until each partition holds as many records as the source's did at start, printing the progress
     * every {@value #PROGRESS_INTERVAL_MS} ms; a retriable failure of a poll is retried ({@link Retry}) until
     * {@code --timeout}.
     */
    private TopicDescription awaitCopies(TidemarkAdmin admin, String copyTopic, TopicDescription atStart,
                                         Duration limit, PrintWriter out) {
        long wanted = atStart.getPartitionsList().stream().mapToLong(PartitionDescription::getLogEndOffset).sum();
        AtomicLong previous = new AtomicLong();
        return Retry.within(clock, limit.toMillis(), PROGRESS_INTERVAL_MS)
                .onDeadline((last, attempts) -> new TidemarkException(last.code(), "not every record of " + copyTopic
                        + " is on the target after --timeout " + timeout + " (" + last.getMessage()
                        + "); is a mirror running?"))
                .call(() -> {
                    TopicDescription now = describeIfExists(admin, copyTopic);
                    if (now != null && holdsAll(now, atStart)) {
                        return now;
                    }
                    long held = now == null ? 0 : now.getPartitionsList().stream()
                            .mapToLong(PartitionDescription::getLogEndOffset).sum();
                    out.printf("%d of %d records on the target (%d records/s)%n", held, wanted,
                            (held - previous.getAndSet(held)) * 1000 / PROGRESS_INTERVAL_MS);
                    out.flush();
                    throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the target holds " + held + " of " + wanted
                            + " records");
                });
    }

    private static TopicDescription describeIfExists(TidemarkAdmin admin, String name) {
        try {
            return describe(admin, name);
        } catch (TidemarkException e) {
            if (e.code() == ErrorCode.UNKNOWN_TOPIC) {
                return null;
            }
            throw e;
        }
    }

    private static boolean holdsAll(TopicDescription copies, TopicDescription atStart) {
        for (PartitionDescription wanted : atStart.getPartitionsList()) {
            if (copies.getPartitionsCount() <= wanted.getPartition()
                    || copies.getPartitions(wanted.getPartition()).getLogEndOffset() < wanted.getLogEndOffset()) {
                return false;
            }
        }
        return true;
    }

    private static MirrorRun run(TidemarkAdmin targetAdmin, String copyTopic, TopicDescription sourceNow,
                                 TopicDescription copies) {
        List<MirrorRun.Partition> partitions = new ArrayList<>();
        for (PartitionDescription copy : copies.getPartitionsList()) {
            OffsetLookup first = targetAdmin.listOffsets(new TopicPartition(copyTopic, copy.getPartition()),
                    OffsetSpec.earliest());
            long sourceBytes = copy.getPartition() < sourceNow.getPartitionsCount()
                    ? sourceNow.getPartitions(copy.getPartition()).getSizeBytes() : 0;
            partitions.add(new MirrorRun.Partition(copy.getLogEndOffset() - copy.getLogStartOffset(), sourceBytes,
                    copy.getSizeBytes(), first.found() ? first.receiveTimeMs() : -1, copy.getLastReceiveTimeMs()));
        }
        return new MirrorRun(partitions);
    }

    /** Reads every copy; prints the hop's and the producer-to-target latency percentiles after the warm-up. */
    private static void printLatencies(TidemarkAdmin admin, TopicDescription copies, MirrorRun run, long skipMs,
                                       PrintWriter out) {
        long from = run.partitions().stream().filter(p -> p.records() > 0)
                .mapToLong(MirrorRun.Partition::firstReceiveTimeMs).min().orElse(0) + skipMs;
        Histogram hop = new Histogram(3);
        Histogram fromSend = new Histogram(3);
        for (PartitionDescription copy : copies.getPartitionsList()) {
            TopicPartition tp = new TopicPartition(copies.getName(), copy.getPartition());
            long offset = copy.getLogStartOffset();
            while (offset < copy.getLogEndOffset()) {
                List<ConsumerRecord> read = admin.read(tp, offset, READ_BYTES);
                for (ConsumerRecord record : read) {
                    if (record.offset() < copy.getLogEndOffset() && record.receiveTimeMs() >= from) {
                        long originMs = ProvenanceHeaders.read(record.headers()).orElseThrow(() ->
                                new TidemarkException(ErrorCode.INVALID_REQUEST, tp + " offset " + record.offset()
                                        + " is no mirror's copy: it has no provenance")).originReceiveTimeMs();
                        hop.recordValue(Math.max(0, record.receiveTimeMs() - originMs));
                        fromSend.recordValue(Math.max(0, record.receiveTimeMs() - record.sendTimeMs()));
                    }
                }
                offset = read.get(read.size() - 1).offset() + 1;
            }
        }
        out.printf("latency over %d records after the first %d ms (negative values count as 0):%n",
                hop.getTotalCount(), skipMs);
        out.println(percentiles("  target ReceiveTime - origin ReceiveTime (the hop)", hop));
        out.println(percentiles("  target ReceiveTime - SendTime", fromSend));
    }

    private static String percentiles(String what, Histogram ms) {
        return String.format("%s: p50 %d ms, p99 %d ms, p99.9 %d ms, max %d ms", what, ms.getValueAtPercentile(50),
                ms.getValueAtPercentile(99), ms.getValueAtPercentile(99.9), ms.getMaxValue());
    }
}
