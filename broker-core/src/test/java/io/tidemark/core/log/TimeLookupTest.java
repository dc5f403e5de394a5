package io.tidemark.core.log;

import io.tidemark.core.log.index.IndexFile;
import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.seed001Log;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Seed 001's experiment: 300 records one second apart, {@code index.interval.bytes=200}, looked up by time.
 * Here SendTime and ReceiveTime are both {@code BASE_MS + i * 1000}, so both lookups must give the same
 * answers.
 */
class TimeLookupTest {
    @TempDir
    Path dir;

    @Test
    void seed001ExperimentOnSendTime() throws Exception {
        try (PartitionLog log = seed001Log(dir, config("index.interval.bytes", "200"))) {
            assertEquals(new TimeLookup.Found(0, BASE_MS, BASE_MS), log.lookupBySendTime(BASE_MS));
            assertEquals(new TimeLookup.Found(150, BASE_MS + 150_000, BASE_MS + 150_000),
                    log.lookupBySendTime(BASE_MS + 150_000));
            assertEquals(new TimeLookup.Found(151, BASE_MS + 151_000, BASE_MS + 151_000),
                    log.lookupBySendTime(BASE_MS + 150_500));
            assertEquals(new TimeLookup.Found(299, BASE_MS + 299_000, BASE_MS + 299_000),
                    log.lookupBySendTime(BASE_MS + 299_000));
            assertEquals(new TimeLookup.NotFound(300), log.lookupBySendTime(BASE_MS + 299_001));
            assertEquals(new TimeLookup.Found(0, BASE_MS, BASE_MS), log.lookupBySendTime(BASE_MS - 86_400_000));
        }
    }

    @Test
    void seed001ExperimentOnReceiveTime() throws Exception {
        try (PartitionLog log = seed001Log(dir, config("index.interval.bytes", "200"))) {
            assertEquals(new TimeLookup.Found(0, BASE_MS, BASE_MS), log.lookupByReceiveTime(BASE_MS));
            assertEquals(new TimeLookup.Found(150, BASE_MS + 150_000, BASE_MS + 150_000),
                    log.lookupByReceiveTime(BASE_MS + 150_000));
            assertEquals(new TimeLookup.Found(151, BASE_MS + 151_000, BASE_MS + 151_000),
                    log.lookupByReceiveTime(BASE_MS + 150_500));
            assertEquals(new TimeLookup.NotFound(300), log.lookupByReceiveTime(BASE_MS + 299_001));
            assertEquals(new TimeLookup.Found(0, BASE_MS, BASE_MS), log.lookupByReceiveTime(0));
        }
    }

    /**
     * Single-record batches here are 78 to 82 bytes, so with an interval of 200 bytes every third batch gets an
     * entry, as in the seed (about every 3 records): offsets 3, 6, ..., 297, the same in all three indexes.
     */
    @Test
    void seed001IndexEntriesEveryThirdRecord() throws Exception {
        try (PartitionLog log = seed001Log(dir, config("index.interval.bytes", "200"))) {
            assertEquals(1, log.segments().size());
            assertEquals(99, log.segments().get(0).indexEntries());
        }
        List<Long> offsets = new ArrayList<>();
        List<Long> receiveTimes = new ArrayList<>();
        List<Long> sendTimes = new ArrayList<>();
        try (OffsetIndex index = OffsetIndex.map(IndexFile.open(dir.resolve("00000000000000000000.index"), 0,
                OffsetIndex.ENTRY_SIZE));
             TimeIndex rt = TimeIndex.map(IndexFile.open(dir.resolve("00000000000000000000.timeindex"), 0,
                     TimeIndex.ENTRY_SIZE));
             TimeIndex st = TimeIndex.map(IndexFile.open(dir.resolve("00000000000000000000.sendindex"), 0,
                     TimeIndex.ENTRY_SIZE))) {
            for (int slot = 0; slot < index.entries(); slot++) {
                offsets.add(index.offsetAt(slot));
                receiveTimes.add(rt.timeAt(slot));
                sendTimes.add(st.timeAt(slot));
                assertEquals(index.offsetAt(slot), rt.offsetAt(slot));
                assertEquals(index.offsetAt(slot), st.offsetAt(slot));
            }
        }
        List<Long> expectedOffsets = new ArrayList<>();
        List<Long> expectedTimes = new ArrayList<>();
        for (long offset = 3; offset <= 297; offset += 3) {
            expectedOffsets.add(offset);
            expectedTimes.add(BASE_MS + offset * 1000);
        }
        assertEquals(expectedOffsets, offsets);
        assertEquals(expectedTimes, receiveTimes);
        assertEquals(expectedTimes, sendTimes);
    }

    /** Every lookup, at every half second from before the first to after the last record, across 25 segments. */
    @Test
    void exactAcrossManySegments() throws Exception {
        try (PartitionLog log = seed001Log(dir, config("index.interval.bytes", "200", "segment.bytes", "1000"))) {
            assertEquals(25, log.segments().size());
            assertEquals(0, log.segments().get(0).baseOffset());
            assertEquals(12, log.segments().get(1).baseOffset());
            for (long t = BASE_MS - 1000; t <= BASE_MS + 300_000; t += 500) {
                long first = Math.max(0, (t - BASE_MS + 999) / 1000);
                TimeLookup expected = first >= 300 ? new TimeLookup.NotFound(300)
                        : new TimeLookup.Found(first, BASE_MS + first * 1000, BASE_MS + first * 1000);
                assertEquals(expected, log.lookupByReceiveTime(t), "ReceiveTime " + t);
                assertEquals(expected, log.lookupBySendTime(t), "SendTime " + t);
            }
        }
    }

    @Test
    void emptyLogAnswersNotFoundAtOffsetZero() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(new TimeLookup.NotFound(0), log.lookupByReceiveTime(0));
            assertEquals(new TimeLookup.NotFound(0), log.lookupBySendTime(0));
            assertTrue(log.lastReceiveTimeMs().isEmpty());
        }
    }
}
