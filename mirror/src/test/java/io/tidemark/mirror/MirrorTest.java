package io.tidemark.mirror;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class MirrorTest {
    @Test
    void aRateLimitFetchesATenthOfASecondsBytesPerPartitionWithinBounds() {
        assertEquals(1 << 20, Mirror.fetchMaxBytes(0), "no limit: the consumer's default");
        assertEquals(1024, Mirror.fetchMaxBytes(1024), "never below 1 KiB");
        assertEquals(5_000, Mirror.fetchMaxBytes(50_000));
        assertEquals(1 << 20, Mirror.fetchMaxBytes(100_000_000), "never above the default");
    }

    @Test
    void aRateLimitAlsoBoundsAFetchOfManyPartitions() {
        assertEquals(16 << 20, Mirror.fetchRequestMaxBytes(0), "no limit: the consumer's default");
        assertEquals(5_000, Mirror.fetchRequestMaxBytes(50_000));
    }
}
