package io.tidemark.mirror;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A mirror process's metrics, in its {@link MetricRegistry} (exported as Prometheus text at /metrics):
 * <ul>
 *   <li>{@code mirror.records-copied}, {@code mirror.bytes-copied} (meters: counts and rates; bytes are key, value
 *       and headers as read from the source);</li>
 *   <li>{@code mirror.latency.receive-time-ms}: target ReceiveTime minus origin ReceiveTime of each copied record (the
 *       hop's latency plus the target clock's lead over the source's), and {@code mirror.latency.send-time-ms}:
 *       target ReceiveTime minus SendTime (histograms);</li>
 *   <li>{@code mirror.lag-records.TOPIC.PARTITION}: records the source partition has past the last one the target
 *       holds (gauge; the source's log end as the last fetch or listing saw it);</li>
 *   <li>{@code mirror.partition-stopped.TOPIC.PARTITION}: 1 while the source partition is stopped (a record the
 *       target refused with no dead-letter topic, or no target partition to copy to), else 0, and
 *       {@code mirror.partitions-stopped}: how many are (gauges, to alert on);</li>
 *   <li>{@code mirror.throttled-ms}: time the mirror waited to keep within {@code --max-bytes-per-second}
 *       (counter);</li>
 *   <li>{@code mirror.records-skipped-loop} (records whose path holds the target), {@code mirror.records-skipped-gap}
 *       (records the source's retention removed before they were copied), {@code mirror.records-refused} (records
 *       the target refused alone: each then dead-lettered or stopping its partition), {@code
 *       mirror.records-dead-lettered} (written to the dead-letter topic, or found there), {@code
 *       mirror.batches-refused-held} (batches the target already held: another mirror, or a resend of unknown fate),
 *       {@code mirror.target-topics-recreated} (target topics deleted while the mirror ran, created again),
 *       {@code mirror.checkpoints-written}, {@code mirror.checkpoint-failures} (a group's or a partition's checkpoint
 *       that failed in a round; counters);</li>
 *   <li>{@code mirror.last-heard-from-source-ms} (gauge, the mirror's clock).</li>
 * </ul>
 * It also keeps the latencies of the current heartbeat interval ({@link #takeInterval}).
 *
 * <p>Thread-safe.
 */
public final class MirrorMetrics {
    private static final String LAG = "mirror.lag-records.";
    private static final String STOPPED = "mirror.partition-stopped.";

    private final MetricRegistry registry;
    private final Meter recordsCopied;
    private final Meter bytesCopied;
    private final Histogram receiveLatency;
    private final Histogram sendLatency;
    private final Counter skippedLoop;
    private final Counter skippedGap;
    private final Counter refused;
    private final Counter deadLettered;
    private final Counter topicsRecreated;
    private final Counter heldRefusals;
    private final Counter checkpoints;
    private final Counter checkpointFailures;
    private final Counter throttledMs;
    private final AtomicLong lastHeardFromSourceMs = new AtomicLong();
    private final Map<String, BooleanSupplier> stopped = new ConcurrentHashMap<>();
    private IntervalLatency interval = IntervalLatency.EMPTY;

    public MirrorMetrics(MetricRegistry registry) {
        this.registry = registry;
        this.recordsCopied = registry.meter("mirror.records-copied");
        this.bytesCopied = registry.meter("mirror.bytes-copied");
        this.receiveLatency = registry.histogram("mirror.latency.receive-time-ms");
        this.sendLatency = registry.histogram("mirror.latency.send-time-ms");
        this.skippedLoop = registry.counter("mirror.records-skipped-loop");
        this.skippedGap = registry.counter("mirror.records-skipped-gap");
        this.refused = registry.counter("mirror.records-refused");
        this.deadLettered = registry.counter("mirror.records-dead-lettered");
        this.topicsRecreated = registry.counter("mirror.target-topics-recreated");
        this.heldRefusals = registry.counter("mirror.batches-refused-held");
        this.checkpoints = registry.counter("mirror.checkpoints-written");
        this.checkpointFailures = registry.counter("mirror.checkpoint-failures");
        this.throttledMs = registry.counter("mirror.throttled-ms");
        registry.gauge("mirror.last-heard-from-source-ms", () -> (Gauge<Long>) lastHeardFromSourceMs::get);
        registry.gauge("mirror.partitions-stopped", () -> (Gauge<Long>) () -> stopped.values().stream()
                .filter(BooleanSupplier::getAsBoolean).count());
    }

    /** Latencies of the records copied in one heartbeat interval; all 0 when none was. */
    public record IntervalLatency(long records, long receiveMinMs, long receiveMaxMs, long sendMinMs, long sendMaxMs) {
        static final IntervalLatency EMPTY = new IntervalLatency(0, 0, 0, 0, 0);

        IntervalLatency with(long receiveMs, long sendMs) {
            return records == 0 ? new IntervalLatency(1, receiveMs, receiveMs, sendMs, sendMs)
                    : new IntervalLatency(records + 1, Math.min(receiveMinMs, receiveMs),
                    Math.max(receiveMaxMs, receiveMs), Math.min(sendMinMs, sendMs), Math.max(sendMaxMs, sendMs));
        }
    }

    /** A batch of {@code records} records of {@code bytes} bytes was stored on the target. */
    public void copied(int records, long bytes) {
        recordsCopied.mark(records);
        bytesCopied.mark(bytes);
    }

    /** One copied record's latencies: target ReceiveTime minus origin ReceiveTime, and minus SendTime. */
    public synchronized void latency(long receiveMs, long sendMs) {
        receiveLatency.update(receiveMs);
        sendLatency.update(sendMs);
        interval = interval.with(receiveMs, sendMs);
    }

    /** The latencies since the last call, and starts a new interval. */
    public synchronized IntervalLatency takeInterval() {
        IntervalLatency taken = interval;
        interval = IntervalLatency.EMPTY;
        return taken;
    }

    public void skippedLoop(long records) {
        skippedLoop.inc(records);
    }

    public void skippedGap(long records) {
        skippedGap.inc(records);
    }

    public void refused(long records) {
        refused.inc(records);
    }

    /** A refused record is in the dead-letter topic. */
    public void deadLettered() {
        deadLettered.inc();
    }

    /** A target topic was created again after it was deleted. */
    public void targetTopicRecreated() {
        topicsRecreated.inc();
    }

    public void heldRefusal() {
        heldRefusals.inc();
    }

    public void checkpointWritten() {
        checkpoints.inc();
    }

    public void checkpointFailed() {
        checkpointFailures.inc();
    }

    /** The mirror waited {@code ms} before reading more, to keep within its byte rate. */
    public void throttled(long ms) {
        throttledMs.inc(ms);
    }

    public void heardFromSource(long nowMs) {
        lastHeardFromSourceMs.accumulateAndGet(nowMs, Math::max);
    }

    /** The mirror's clock when a call to the source last succeeded; 0 when none has. */
    public long lastHeardFromSourceMs() {
        return lastHeardFromSourceMs.get();
    }

    public long recordsCopied() {
        return recordsCopied.getCount();
    }

    public long bytesCopied() {
        return bytesCopied.getCount();
    }

    /** Registers the lag and stopped gauges of a source partition, in place of earlier ones. */
    public void partitionGauges(String topic, int partition, LongSupplier lag, BooleanSupplier isStopped) {
        String name = topic + "." + partition;
        registry.remove(LAG + name);
        registry.gauge(LAG + name, () -> (Gauge<Long>) lag::getAsLong);
        registry.remove(STOPPED + name);
        registry.gauge(STOPPED + name, () -> (Gauge<Integer>) () -> isStopped.getAsBoolean() ? 1 : 0);
        stopped.put(name, isStopped);
    }

    /** Drops a source partition's gauges: it is no longer copied. */
    public void removePartition(String topic, int partition) {
        String name = topic + "." + partition;
        registry.remove(LAG + name);
        registry.remove(STOPPED + name);
        stopped.remove(name);
    }
}
