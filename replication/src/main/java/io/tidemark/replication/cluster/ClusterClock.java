package io.tidemark.replication.cluster;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The clock a broker's partition groups stamp ReceiveTime with: the broker's own, but never further ahead of the
 * cluster's than {@code receive.time.max.ahead.ms}. A leader whose clock jumps years ahead would otherwise stamp
 * its batches in the future, and since ReceiveTime never decreases in a partition, every later batch with them (and
 * retention would keep the partition's data for years). The cluster's time is the median of the brokers' clocks: this
 * broker's own and each other broker's as its last probe answer gave it ({@link ClusterLiveness} records them, the
 * answer's {@code clock_ms} placed at the middle of the probe's round trip on the monotonic clock, and carried
 * forward on it), the answers of the last {@value #READING_MAX_AGE_MS} ms only. A broker whose clock runs further
 * ahead than the bound stamps the median plus the bound instead, logs it (an error, at most once a minute) and shows
 * how far ahead it is in the gauge {@code clock.ahead-of-cluster.ms}. A clock behind the cluster is left as it is:
 * ReceiveTime's monotonicity already carries a partition over it. A broker without a recent answer from any other
 * (a cluster of one, or cut off) has no one to compare with and stamps by its own clock.
 *
 * <p>Thread-safe: readings are replaced whole; a stamp reads them without a lock.
 */
public final class ClusterClock implements InstantSource {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterClock.class);
    /** Probe answers older than this are not counted: the broker is down, or this one cut off. */
    static final long READING_MAX_AGE_MS = 10_000;
    private static final long WARN_INTERVAL_MS = 60_000;

    /** A broker's wall clock {@code clockMs} at {@code atNanos} of this broker's monotonic clock. */
    private record Reading(long clockMs, long atNanos) {
    }

    private final InstantSource own;
    private final LongSupplier nanos;
    private final long maxAheadMs;
    private final Map<Integer, Reading> readings = new ConcurrentHashMap<>();
    private volatile long aheadMs;
    private volatile long lastWarnNanos = Long.MIN_VALUE;

    /**
     * @param own        this broker's clock
     * @param nanos      a monotonic clock ({@code System::nanoTime}): readings age by it, not by {@code own}, so a
     *                   jump of {@code own} does not move the cluster's time with it
     * @param maxAheadMs {@code receive.time.max.ahead.ms}
     */
    public ClusterClock(InstantSource own, LongSupplier nanos, long maxAheadMs) {
        this.own = own;
        this.nanos = nanos;
        this.maxAheadMs = maxAheadMs;
    }

    /** The monotonic clock probes are timed by. */
    long nowNanos() {
        return nanos.getAsLong();
    }

    /** Records another broker's clock from its probe answer, sent and received at these monotonic times. */
    void heard(int nodeId, long clockMs, long sentNanos, long receivedNanos) {
        readings.put(nodeId, new Reading(clockMs, sentNanos + (receivedNanos - sentNanos) / 2));
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public long millis() {
        long ownMs = own.millis();
        long now = nanos.getAsLong();
        long[] clocks = new long[readings.size() + 1];
        int n = 0;
        clocks[n++] = ownMs;
        for (Reading reading : readings.values()) {
            long ageMs = TimeUnit.NANOSECONDS.toMillis(now - reading.atNanos());
            if (ageMs <= READING_MAX_AGE_MS && n < clocks.length) {
                clocks[n++] = reading.clockMs() + ageMs;
            }
        }
        if (n == 1) {
            aheadMs = 0;
            return ownMs;
        }
        Arrays.sort(clocks, 0, n);
        long median = clocks[(n - 1) / 2];
        aheadMs = Math.max(0, ownMs - median);
        if (ownMs - median <= maxAheadMs) {
            return ownMs;
        }
        if (lastWarnNanos == Long.MIN_VALUE || now - lastWarnNanos >= TimeUnit.MILLISECONDS.toNanos(WARN_INTERVAL_MS)) {
            lastWarnNanos = now;
            LOG.error("This broker's clock reads {} ms ahead of the cluster's (the median of {} brokers' clocks), "
                    + "more than receive.time.max.ahead.ms {}: its partitions' ReceiveTimes are stamped "
                    + "{} ms ahead at most until its clock is set right", ownMs - median, n, maxAheadMs, maxAheadMs);
        }
        return median + maxAheadMs;
    }

    /** How far this broker's clock read ahead of the cluster's at the last stamp; 0 when not ahead. */
    public long aheadMs() {
        return aheadMs;
    }
}
