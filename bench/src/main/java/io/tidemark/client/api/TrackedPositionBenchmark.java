package io.tidemark.client.api;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.concurrent.TimeUnit;

/**
 * Tracked mode's bookkeeping per delivery on the runtime's polling thread ({@link TrackedPosition}, package-private,
 * hence this package): a record arrives, and completes in an order scrambled within a window of {@code inFlight}
 * deliveries, as parallel workers finish them (a xorshift picks which). One operation = one arrival and one
 * completion. Run with
 * {@code -prof gc} to see that the path allocates nothing per delivery.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class TrackedPositionBenchmark {
    /** Deliveries unfinished at once. */
    @Param({"8", "100"})
    public int inFlight;

    /** The deliveries unfinished now, by slot; a completed slot takes the next arrival. */
    private long[] window;
    private TrackedPosition tracked;
    private long next;
    private long seed = 11;

    @Setup(Level.Iteration)
    public void setUp() {
        window = new long[inFlight];
        tracked = TrackedPosition.from(0);
        for (int i = 0; i < inFlight; i++) {
            window[i] = i;
            tracked.arrived(i);
        }
        next = inFlight;
    }

    /** One delivery of a random slot completes, and the next offset arrives in its place. */
    @Benchmark
    public long arriveAndComplete() {
        seed ^= seed << 13;
        seed ^= seed >>> 7;
        seed ^= seed << 17;
        int slot = (int) Long.remainderUnsigned(seed, inFlight);
        tracked.completed(window[slot]);
        window[slot] = next;
        tracked.arrived(next++);
        return tracked.stored().orElse(-1);
    }
}
