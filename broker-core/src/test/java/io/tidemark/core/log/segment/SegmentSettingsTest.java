package io.tidemark.core.log.segment;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How much an active segment's index files are preallocated to. */
class SegmentSettingsTest {
    private static SegmentSettings settings(Map<String, String> config) {
        return SegmentSettings.of(TopicConfig.parse(config), new OpenFileCache(1));
    }

    @Test
    void withTheDefaultsAnIndexGetsRoomForWhatAOneGibSegmentCanFillNotTenMib() {
        SegmentSettings defaults = settings(Map.of());
        assertEquals(262_145 * 8, defaults.indexPreallocationBytes(OffsetIndex.ENTRY_SIZE, 0));
        assertEquals(262_145 * 12, defaults.indexPreallocationBytes(TimeIndex.ENTRY_SIZE, 0));
    }

    @Test
    void segmentIndexBytesStillCapsIt() {
        SegmentSettings small = settings(Map.of("segment.index.bytes", "24"));
        assertEquals(24, small.indexPreallocationBytes(OffsetIndex.ENTRY_SIZE, 0));
        assertEquals(24, small.indexPreallocationBytes(TimeIndex.ENTRY_SIZE, 0));
    }

    @Test
    void anIndexIntervalBelowABatchHeaderCountsOneEntryPerSmallestBatch() {
        SegmentSettings everyBatch = settings(Map.of("index.interval.bytes", "0", "segment.bytes", "6000"));
        assertEquals((6000 / 60 + 1) * 8, everyBatch.indexPreallocationBytes(OffsetIndex.ENTRY_SIZE, 0));
    }

    @Test
    void aLogWrittenUnderLargerSettingsGetsRoomForAllItHoldsSoRecoveryNeverFillsTheIndex() {
        SegmentSettings shrunk = settings(Map.of("segment.bytes", "4096", "segment.index.bytes", "16"));
        assertEquals(16, shrunk.indexPreallocationBytes(OffsetIndex.ENTRY_SIZE, 0));
        assertEquals((40_960 / 4096 + 1) * 8, shrunk.indexPreallocationBytes(OffsetIndex.ENTRY_SIZE, 40_960));
    }
}
