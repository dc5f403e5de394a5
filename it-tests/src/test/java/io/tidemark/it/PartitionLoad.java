package io.tidemark.it;

import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkProducer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Collectors;

/**
 * An idempotent producer writing to every partition of a topic in turn at a fixed rate, from one scheduler thread,
 * until {@link #stop()}, or until it sent {@code recordsMax} records or ran {@code timeMax}, whichever comes first.
 * Record {@code i} goes to partition {@code i % partitions} with the value {@code "P:i"} and the SendTime
 * {@code sendTimeBase + i}. It remembers every send and, per partition, the latest send time (System.nanoTime) of an
 * acknowledged record, which is how a test sees that the cluster makes progress again after a fault.
 *
 * <p>Thread-safe: sends happen on the scheduler thread; the records and results are read after {@link #stop()}.
 */
final class PartitionLoad implements AutoCloseable {
    /** The scheduler sends a tick's worth of records every this many ms. */
    private static final long TICK_MS = 20;
    private static final long STOP_WAIT_MS = 10_000;

    private final String topic;
    private final int partitions;
    private final int recordsPerTick;
    private final int recordsMax;
    private final long deadlineNanos;
    private final long sendTimeBase;
    private final TidemarkProducer producer;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "partition-load");
        thread.setDaemon(true);
        return thread;
    });
    /** Scheduler thread only until stop(). */
    private final List<String> values = new ArrayList<>();
    private final List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
    /** Per partition: the System.nanoTime at which the latest acknowledged record was sent; 0 before any. */
    private final AtomicLongArray latestAckedSendNanos;
    /** Per partition: records acknowledged so far. */
    private final AtomicLongArray acknowledgedCounts;
    /** Per partition: the System.nanoTime of the latest acknowledgement; the start before any. */
    private final AtomicLongArray latestAckNanos;
    /** Per partition: records sent, and records that failed so far. */
    private final AtomicLongArray sentCounts;
    private final AtomicLongArray failedCounts;
    /** Per partition: the latest failure of a record, for messages. */
    private final AtomicReferenceArray<Throwable> latestFailures;

    private PartitionLoad(ProducerConfig config, String topic, int partitions, int recordsPerSecond, int recordsMax,
                          Duration timeMax) {
        this.topic = topic;
        this.partitions = partitions;
        this.recordsPerTick = (int) Math.max(1, recordsPerSecond * TICK_MS / 1000);
        this.recordsMax = recordsMax;
        this.deadlineNanos = System.nanoTime() + timeMax.toNanos();
        this.sendTimeBase = System.currentTimeMillis() - recordsMax;
        this.producer = new TidemarkProducer(config);
        this.latestAckedSendNanos = new AtomicLongArray(partitions);
        this.acknowledgedCounts = new AtomicLongArray(partitions);
        this.latestAckNanos = new AtomicLongArray(partitions);
        this.sentCounts = new AtomicLongArray(partitions);
        this.failedCounts = new AtomicLongArray(partitions);
        this.latestFailures = new AtomicReferenceArray<>(partitions);
        long now = System.nanoTime();
        for (int p = 0; p < partitions; p++) {
            latestAckNanos.set(p, now);
        }
    }

    static PartitionLoad start(ProducerConfig config, String topic, int partitions, int recordsPerSecond,
                               int recordsMax, Duration timeMax) {
        PartitionLoad load = new PartitionLoad(config, topic, partitions, recordsPerSecond, recordsMax, timeMax);
        load.scheduler.scheduleAtFixedRate(load::tick, 0, TICK_MS, TimeUnit.MILLISECONDS);
        return load;
    }

    private void tick() {
        for (int n = 0; n < recordsPerTick; n++) {
            if (values.size() >= recordsMax || System.nanoTime() - deadlineNanos > 0) {
                scheduler.shutdown();
                return;
            }
            int i = values.size();
            int partition = i % partitions;
            String value = partition + ":" + i;
            long sentNanos = System.nanoTime();
            CompletableFuture<RecordMetadata> send = producer.send(new ProducerRecord(topic, partition, null,
                    value.getBytes(StandardCharsets.UTF_8), sendTimeBase + i));
            sentCounts.incrementAndGet(partition);
            send.whenComplete((metadata, failure) -> {
                if (failure != null) {
                    failedCounts.incrementAndGet(partition);
                    latestFailures.set(partition, failure);
                    return;
                }
                latestAckedSendNanos.accumulateAndGet(partition, sentNanos, Math::max);
                acknowledgedCounts.incrementAndGet(partition);
                latestAckNanos.accumulateAndGet(partition, System.nanoTime(), Math::max);
            });
            values.add(value);
            sends.add(send);
        }
    }

    /** Whether every partition acknowledged a record sent at or after {@code sinceNanos} (System.nanoTime). */
    boolean progressedSince(long sinceNanos) {
        for (int p = 0; p < partitions; p++) {
            if (latestAckedSendNanos.get(p) - sinceNanos < 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * For messages: per partition, how long before now the latest acknowledged record was sent, and whether that was
     * after {@code sinceNanos}.
     */
    String progressReport(long sinceNanos) {
        long now = System.nanoTime();
        StringBuilder report = new StringBuilder("latest acknowledged records:");
        for (int p = 0; p < partitions; p++) {
            long sent = latestAckedSendNanos.get(p);
            report.append(" p").append(p).append(sent == 0 ? " none" : " sent " + (now - sent) / 1_000_000 + " ms ago ("
                    + (sent - sinceNanos >= 0 ? "after" : "before") + ")");
        }
        return report.append(", ").append(acknowledgedCountsText()).toString();
    }

    /**
     * For messages about many partitions: how many acknowledged no record sent at or after {@code sinceNanos}, and for
     * the first {@code listed} of them the records sent, acknowledged and failed, and the latest failure.
     */
    String stalledReport(long sinceNanos, int listed) {
        List<Integer> stalled = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            if (latestAckedSendNanos.get(p) - sinceNanos < 0) {
                stalled.add(p);
            }
        }
        StringBuilder report = new StringBuilder(stalled.size() + " of " + partitions + " partitions acknowledged "
                + "no record sent since:");
        for (int p : stalled.subList(0, Math.min(listed, stalled.size()))) {
            Throwable failure = latestFailures.get(p);
            report.append(" p").append(p).append(" (sent ").append(sentCounts.get(p)).append(", acknowledged ")
                    .append(acknowledgedCounts.get(p)).append(", failed ").append(failedCounts.get(p))
                    .append(failure == null ? "" : ", latest failure: " + failure.getMessage()).append(')');
        }
        return report.toString();
    }

    private String acknowledgedCountsText() {
        StringBuilder text = new StringBuilder("acknowledged so far:");
        for (int p = 0; p < partitions; p++) {
            text.append(" p").append(p).append("=").append(acknowledgedCounts.get(p));
        }
        return text.toString();
    }

    /** The longest time any partition has gone without an acknowledgement, until now, in ms. */
    long longestSilenceMs() {
        long now = System.nanoTime();
        long longest = 0;
        for (int p = 0; p < partitions; p++) {
            longest = Math.max(longest, (now - latestAckNanos.get(p)) / 1_000_000);
        }
        return longest;
    }

    /** Records acknowledged so far, per partition. */
    long[] acknowledgedCounts() {
        long[] counts = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            counts[p] = acknowledgedCounts.get(p);
        }
        return counts;
    }

    /** Whether every partition acknowledged at least {@code records} more records than the {@code before} counts. */
    boolean acknowledgedSince(long[] before, long records) {
        for (int p = 0; p < partitions; p++) {
            if (acknowledgedCounts.get(p) - before[p] < records) {
                return false;
            }
        }
        return true;
    }

    /** Whether the load still sends (it stops by itself at its count or time bound). */
    boolean running() {
        return !scheduler.isShutdown();
    }

    /** Stops sending and waits until every record sent is acknowledged or failed (the producer's delivery timeout). */
    void stop() throws InterruptedException {
        scheduler.shutdown();
        if (!scheduler.awaitTermination(STOP_WAIT_MS, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the load's scheduler did not stop within " + STOP_WAIT_MS + " ms");
        }
        producer.flush();
    }

    /** Values of the acknowledged records of {@code partition}; call after {@link #stop()}. */
    Set<String> acknowledged(int partition) {
        return acknowledgedByPartition().getOrDefault(partition, Set.of());
    }

    /** Values of the acknowledged records, by partition (one that has none is absent); call after {@link #stop()}. */
    Map<Integer, Set<String>> acknowledgedByPartition() {
        return PartitionChecker.acknowledged(values, sends).stream().collect(Collectors.groupingBy(
                value -> Integer.parseInt(value.substring(0, value.indexOf(':'))), Collectors.toSet()));
    }

    /** Records sent to {@code partition}; call after {@link #stop()}. */
    long sent(int partition) {
        return values.stream().filter(v -> v.startsWith(partition + ":")).count();
    }

    int sent() {
        return values.size();
    }

    long failed() {
        return sends.stream().filter(CompletableFuture::isCompletedExceptionally).count();
    }

    String firstFailure() {
        return PartitionChecker.firstFailure(sends);
    }

    /** The SendTime each record was given, by value; call after {@link #stop()}. */
    Map<String, Long> sendTimes() {
        Map<String, Long> sendTimes = new HashMap<>();
        for (int i = 0; i < values.size(); i++) {
            sendTimes.put(values.get(i), sendTimeBase + i);
        }
        return sendTimes;
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        producer.close();
    }
}
