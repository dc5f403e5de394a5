package io.tidemark.cli;

import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.v1.PartitionDescription;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code tidemark perf transfer}: the pause a planned leadership transfer causes under load. One thread produces
 * records of a one-partition topic at a fixed rate ({@code linger.ms=0}) while the command moves the partition's
 * leadership away from its preferred replica and back, {@code --transfers} times in all. A transfer's pause is the
 * longest time a record waited for its acknowledgement among the records in flight at some moment between the
 * transfer call and {@link #SETTLE_MS} after it returned (a record sent just before the call and acknowledged after
 * the new leader took over counts whole). Prints every transfer, the percentiles of the pauses, and those of the
 * acknowledgement times outside the transfers' windows for comparison; the {@code --warmup} moves made first count
 * in neither (the first moves of fresh processes run cold code paths: a few hundred ms where later ones take 150).
 *
 * <p>Each move back follows its move away within a few seconds, before the brokers' preferred-leader balancing
 * (which waits {@code leader.balance.interval.ms}, 5 s by default, after a leader change) would move it itself.
 */
@Command(name = "transfer", mixinStandardHelpOptions = true,
        description = "Move a partition's leadership back and forth N times under a fixed produce load; measure the "
                + "longest wait for an acknowledgement around each move.")
final class TransferPerfCommand implements Callable<Integer> {
    /** How long after a transfer returned its window lasts: the new leader's first answers. */
    private static final long SETTLE_MS = 1_000;
    /** Steady load before the first transfer and between a move back and the next move away. */
    private static final long STEADY_MS = 2_000;
    /** Longest a transfer may take before the run ends with its error. */
    private static final long TRANSFER_TIMEOUT_MS = 10_000;
    /** Most records one run sends: bounds the load loop and the arrays of send and acknowledgement times. */
    private static final int MAX_RECORDS = 2_000_000;

    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--topic", defaultValue = "transfer-perf",
            description = "One-partition topic, created (RF up to 3) when absent (default: ${DEFAULT-VALUE}).")
    String topic;
    @Option(names = "--transfers", defaultValue = "20", description = "How many moves, away and back counted apart "
            + "(default: ${DEFAULT-VALUE}).")
    int transfers;
    @Option(names = "--warmup", defaultValue = "4", description = "Moves made first and not counted: the brokers' "
            + "and the producer's code paths of a move are compiled by then (default: ${DEFAULT-VALUE}).")
    int warmup;
    @Option(names = "--rate", defaultValue = "1000", description = "Records per second (default: ${DEFAULT-VALUE}).")
    int rate;
    @Option(names = "--record-size", defaultValue = "1024", description = "Value size in bytes (default: "
            + "${DEFAULT-VALUE}).")
    int recordSize;

    @Override
    public Integer call() throws Exception {
        if (transfers < 1 || warmup < 0 || rate < 1 || rate > 100_000 || recordSize < 0) {
            throw new IllegalArgumentException("--transfers must be at least 1, --warmup at least 0, --rate in "
                    + "1..100000 records/s and --record-size at least 0");
        }
        PrintWriter out = spec.commandLine().getOut();
        TopicPartition tp = new TopicPartition(topic, 0);
        Histogram pauses = new Histogram(3);
        try (TidemarkAdmin admin = client.admin()) {
            if (admin.listTopics(false).stream().noneMatch(t -> t.getName().equals(topic))) {
                int brokers = admin.clusterStatus().getBrokersCount();
                admin.createTopic(topic, 1, Math.min(3, brokers), Map.of());
            }
            PartitionDescription partition = describe(admin);
            if (partition.getReplicaNodeIdsCount() < 2) {
                throw new IllegalArgumentException(tp + " has one replica: there is nowhere to move its leadership");
            }
            int preferred = partition.getReplicaNodeIds(0);
            int other = partition.getReplicaNodeIds(1);
            Load load = new Load(recordSize, rate);
            try (TidemarkProducer producer = new TidemarkProducer(client.producerConfig()
                    .lingerMs(0).build())) {
                Thread sender = new Thread(() -> load.run(producer, topic), "transfer-perf-load");
                sender.start();
                try {
                    pause(STEADY_MS);
                    if (describe(admin).getLeaderNodeId() != preferred) {
                        admin.transferLeadership(tp, preferred, TRANSFER_TIMEOUT_MS);
                        pause(STEADY_MS);
                    }
                    for (int i = 1 - warmup; i <= transfers; i++) {
                        int to = Math.floorMod(i, 2) == 1 ? other : preferred;
                        long calledAt = System.nanoTime();
                        admin.transferLeadership(tp, to, TRANSFER_TIMEOUT_MS);
                        long returnedAt = System.nanoTime();
                        pause(SETTLE_MS);
                        long windowEnd = returnedAt + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
                        long pauseMs = load.longestWaitMs(calledAt, windowEnd);
                        load.window(calledAt, windowEnd);
                        if (i > 0) {
                            pauses.recordValue(pauseMs);
                        } else {
                            load.countFrom(windowEnd);
                        }
                        out.printf("transfer %s: to node %d in %d ms; longest wait for an acknowledgement %d ms%n",
                                i > 0 ? Integer.toString(i) : "(warm-up)", to,
                                TimeUnit.NANOSECONDS.toMillis(returnedAt - calledAt), pauseMs);
                        out.flush();
                        if (to == preferred) {
                            pause(STEADY_MS);
                        }
                    }
                } finally {
                    load.stop();
                    sender.join();
                    producer.flush();
                }
            }
            Histogram steady = load.steady();
            out.printf("%d transfers at %d records/s: pause p50 %d ms, p99 %d ms, max %d ms; acknowledgements outside "
                            + "the transfers: p50 %d ms, p99 %d ms (%d records, %d failed)%n", pauses.getTotalCount(),
                    rate, pauses.getValueAtPercentile(50), pauses.getValueAtPercentile(99), pauses.getMaxValue(),
                    steady.getValueAtPercentile(50), steady.getValueAtPercentile(99), steady.getTotalCount(),
                    load.failed.get());
            return load.failed.get() == 0 ? 0 : TidemarkCommand.USER_ERROR;
        }
    }

    private PartitionDescription describe(TidemarkAdmin admin) {
        return admin.describeTopics(List.of(topic)).get(0).getPartitions(0);
    }

    private static void pause(long ms) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        for (long wait = until - System.nanoTime(); wait > 0; wait = until - System.nanoTime()) {
            LockSupport.parkNanos(wait);
        }
    }

    /** The fixed-rate load: each record's send and acknowledgement times, by its number. */
    private static final class Load {
        private final byte[] value;
        private final int rate;
        private final AtomicLongArray sentAt = new AtomicLongArray(MAX_RECORDS);
        private final AtomicLongArray ackedAt = new AtomicLongArray(MAX_RECORDS);
        private final AtomicBoolean stopped = new AtomicBoolean();
        private final AtomicLong sent = new AtomicLong();
        private final AtomicLong failed = new AtomicLong();
        /** Records sent before this (the warm-up) are left out of {@link #steady}. */
        private volatile long countFrom = Long.MIN_VALUE;
        /** The transfers' windows, as (start, end) nanos pairs. */
        private final List<long[]> windows = new CopyOnWriteArrayList<>();

        Load(int recordSize, int rate) {
            this.value = new byte[recordSize];
            this.rate = rate;
        }

        /** Sends at the rate until stopped or {@link #MAX_RECORDS} were sent. */
        void run(TidemarkProducer producer, String topic) {
            long start = System.nanoTime();
            for (int i = 0; i < MAX_RECORDS && !stopped.get(); i++) {
                PerfCommand.awaitDue(start, i, rate);
                int n = i;
                sentAt.set(n, System.nanoTime());
                sent.set(n + 1L);
                producer.send(new ProducerRecord(topic, 0, null, value)).whenComplete((metadata, error) -> {
                    if (error != null) {
                        failed.incrementAndGet();
                    } else {
                        ackedAt.set(n, System.nanoTime());
                    }
                });
            }
        }

        void stop() {
            stopped.set(true);
        }

        void countFrom(long nanos) {
            countFrom = nanos;
        }

        void window(long start, long end) {
            windows.add(new long[] {start, end});
        }

        /**
         * The longest acknowledgement time, in ms, of the records in flight at some moment of [start, end]; a record
         * not acknowledged yet counts until now.
         */
        long longestWaitMs(long start, long end) {
            long now = System.nanoTime();
            long longest = 0;
            for (int i = 0; i < sent.get(); i++) {
                long s = sentAt.get(i);
                long a = ackedAt.get(i) == 0 ? now : ackedAt.get(i);
                if (s <= end && a >= start) {
                    longest = Math.max(longest, a - s);
                }
            }
            return TimeUnit.NANOSECONDS.toMillis(longest);
        }

        /** Acknowledgement times (ms) of the records sent after the warm-up and in flight outside every window. */
        Histogram steady() {
            Histogram steady = new Histogram(3);
            for (int i = 0; i < sent.get(); i++) {
                long s = sentAt.get(i);
                long a = ackedAt.get(i);
                if (a != 0 && s >= countFrom && windows.stream().noneMatch(w -> s <= w[1] && a >= w[0])) {
                    steady.recordValue(TimeUnit.NANOSECONDS.toMillis(a - s));
                }
            }
            return steady;
        }
    }
}
