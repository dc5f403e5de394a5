package io.tidemark.mirror.failover;

import io.tidemark.proto.v1.MirrorHeartbeat;

import java.util.List;
import java.util.Optional;

/**
 * The mirror's latency over a window of heartbeats: target ReceiveTime minus origin ReceiveTime, each heartbeat
 * carrying the least and the largest over every record copied since the one before. It is the copy's delay plus the
 * target clock's lead over the source clock; one-way, so the two cannot be told apart, but a negative value shows the
 * target's clock behind the source's by at least that much.
 *
 * @param receiveMinMs the least target-minus-origin ReceiveTime of the window
 * @param receiveMaxMs the largest
 * @param records      records copied in the window
 * @param heartbeats   heartbeats of the window that report copies
 * @param fromMs       the first such heartbeat's time (mirror clock)
 * @param toMs         the last one's
 */
public record LatencySample(long receiveMinMs, long receiveMaxMs, long records, int heartbeats, long fromMs,
                            long toMs) {
    public LatencySample {
        if (receiveMaxMs < receiveMinMs || records < 1 || heartbeats < 1 || toMs < fromMs) {
            throw new IllegalArgumentException("not a latency sample: least " + receiveMinMs + " ms, largest "
                    + receiveMaxMs + " ms, " + records + " records, " + heartbeats + " heartbeats, from " + fromMs
                    + " to " + toMs);
        }
    }

    /** The latencies of the heartbeats that report copies; empty when none does. */
    static Optional<LatencySample> of(List<MirrorHeartbeat> heartbeats) {
        List<MirrorHeartbeat> copying = heartbeats.stream().filter(h -> h.getIntervalRecords() > 0).toList();
        if (copying.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new LatencySample(
                copying.stream().mapToLong(MirrorHeartbeat::getReceiveLatencyMinMs).min().orElseThrow(),
                copying.stream().mapToLong(MirrorHeartbeat::getReceiveLatencyMaxMs).max().orElseThrow(),
                copying.stream().mapToLong(MirrorHeartbeat::getIntervalRecords).sum(), copying.size(),
                copying.get(0).getMirrorTimeMs(), copying.get(copying.size() - 1).getMirrorTimeMs()));
    }

    /** How far the target's ReceiveTime was seen behind the source's: minus the least latency, 0 when never. */
    public long targetBehindMs() {
        return Math.max(0, -receiveMinMs);
    }

    /** How much the latency varied: the largest minus the least. */
    public long spreadMs() {
        return receiveMaxMs - receiveMinMs;
    }
}
