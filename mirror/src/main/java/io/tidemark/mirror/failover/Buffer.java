package io.tidemark.mirror.failover;

import java.util.Objects;
import java.util.Optional;

/**
 * X, the buffer before T: a partition that resumes by time starts at its first target record whose ReceiveTime is at
 * or after T - X. Given by the operator ({@code --buffer}), or derived from the mirror's latencies ({@code auto}):
 * <pre>
 *   X = {@link LatencySample#targetBehindMs()} + {@link LatencySample#spreadMs()}
 *     = max(0, -least) + (largest - least)      of target ReceiveTime minus source ReceiveTime, over the last hour
 * </pre>
 * Why: a copy is stamped on the target at its source ReceiveTime plus the latency r. A record whose source time is at
 * or after T is then found at or after T - X whenever X >= -r, so the first term (how far the target's clock ran
 * behind the source's) is what resuming without loss needs when T is a source time. The second term is the safety
 * margin seed 000 calls the latency difference between the clusters: the latency varied that much over the window,
 * a record of the source's last moments may have been stamped further from its source time than the window's least
 * (a slower copy, a clock step), and T itself (the last consumed record's time, or when the mirror last heard the
 * source) is only known to within the mirror's delay. With clocks in step it comes to the spread of the mirror's
 * latency; seed 000 gives 15 minutes as an example of a hand-chosen X.
 *
 * @param ms          X in ms, not negative
 * @param derivedFrom the latencies {@code auto} derived it from; empty when the operator gave it
 */
public record Buffer(long ms, Optional<LatencySample> derivedFrom) {
    public Buffer {
        Objects.requireNonNull(derivedFrom, "derivedFrom");
        if (ms < 0) {
            throw new IllegalArgumentException("buffer " + ms + " ms is negative");
        }
    }

    static Buffer given(long ms) {
        return new Buffer(ms, Optional.empty());
    }

    static Buffer auto(LatencySample latency) {
        return new Buffer(latency.targetBehindMs() + latency.spreadMs(), Optional.of(latency));
    }
}
