package io.tidemark.replication.cluster;

import io.tidemark.core.ManualClock;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ClusterClockTest {
    private static final long NOW = 1_800_000_000_000L;
    private static final long DAY_MS = 86_400_000;

    private final ManualClock own = new ManualClock(NOW);
    private final AtomicLong nanos = new AtomicLong(5_000_000_000L);
    private final ClusterClock clock = new ClusterClock(own, nanos::get, 60_000);

    private void advance(long ms) {
        own.advance(ms);
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    /** Another broker's answer giving its clock, over a round trip of 2 ms ending now. */
    private void heard(int node, long clockMs) {
        clock.heard(node, clockMs, nanos.get() - 2_000_000, nanos.get());
    }

    @Test
    void aBrokerAloneOrWithinTheBoundStampsByItsOwnClock() {
        assertEquals(NOW, clock.millis(), "no other broker to compare with");
        heard(2, NOW - 50_000);
        heard(3, NOW - 40_000);
        assertEquals(NOW, clock.millis(), "40 s ahead of the median: within 60 s");
        assertEquals(39_999, clock.aheadMs(), "the median, node 3's, read 1 ms ago (the middle of its round trip)");
    }

    @Test
    void aClockThatJumpsADayAheadStampsTheMedianPlusTheBoundCarriedOnTheMonotonicClock() {
        heard(2, NOW);
        heard(3, NOW - 1_000);
        own.advance(DAY_MS);
        assertEquals(NOW + 1 + 60_000, clock.millis(), "median: node 2's clock, 1 ms after its reading, plus 60 s");
        assertEquals(DAY_MS - 1, clock.aheadMs());
        advance(5_000);
        assertEquals(NOW + 5_001 + 60_000, clock.millis(), "the readings age on the monotonic clock");
    }

    @Test
    void readingsOlderThanTenSecondsAreNotCountedAndAClockBehindIsLeftAlone() {
        heard(2, NOW - DAY_MS);
        heard(3, NOW - DAY_MS);
        assertEquals(NOW - DAY_MS + 1 + 60_000, clock.millis(), "both others a day behind: this one is the outlier");
        advance(ClusterClock.READING_MAX_AGE_MS + 1);
        assertEquals(own.millis(), clock.millis(), "their readings are too old to count");
        heard(2, own.millis() + DAY_MS);
        heard(3, own.millis() + DAY_MS);
        assertEquals(own.millis(), clock.millis(), "a clock behind the others stamps by itself");
    }
}
