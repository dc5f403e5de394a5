package io.tidemark.core.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.batch;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Seed 000's pattern 3: two mirrors, one copying today's data and one yesterday's, write into the same
 * partition at the same moment. Rolling and retention follow ReceiveTime, so the day-old SendTimes neither
 * split the segment nor get it deleted early.
 */
class ReceiveTimeDrivesRollingAndRetentionTest {
    private static final long HOUR_MS = 3_600_000;
    private static final long DAY_MS = 24 * HOUR_MS;

    @TempDir
    Path dir;

    @Test
    void batchesADayApartInSendTimeShareASegment() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("segment.ms", Long.toString(HOUR_MS)), BASE_MS)) {
            for (int i = 0; i < 10; i++) {
                log.append(batch(2 * i, BASE_MS + i), BASE_MS + i);
                log.append(batch(2 * i + 1, BASE_MS - DAY_MS + i), BASE_MS + i);
            }
            assertEquals(1, log.segments().size(), "lagged SendTimes make no one-record segments");
            SegmentInfo segment = log.segments().get(0);
            assertEquals(20, segment.nextOffset());
            assertEquals(BASE_MS, segment.firstReceiveTimeMs());
            assertEquals(BASE_MS + 9, segment.maxReceiveTimeMs());
            assertEquals(new TimeLookup.Found(0, BASE_MS, BASE_MS), log.lookupBySendTime(BASE_MS - DAY_MS),
                    "the first record in log order with SendTime >= t");
            assertEquals(new TimeLookup.Found(2, BASE_MS + 1, BASE_MS + 1), log.lookupBySendTime(BASE_MS + 1));
            assertEquals(new TimeLookup.Found(10, BASE_MS + 5, BASE_MS + 5), log.lookupByReceiveTime(BASE_MS + 5));
        }
    }

    @Test
    void segmentMsRollsOnReceiveTimeOnly() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("segment.ms", Long.toString(HOUR_MS)), BASE_MS)) {
            log.append(batch(0, BASE_MS - DAY_MS), BASE_MS);
            log.append(batch(1, BASE_MS + 90 * 60_000), BASE_MS + HOUR_MS - 1);
            assertEquals(1, log.segments().size(), "ReceiveTime is still within segment.ms");
            log.append(batch(2, BASE_MS - DAY_MS), BASE_MS + HOUR_MS);
            assertEquals(2, log.segments().size(), "ReceiveTime reached segment.ms");
            assertEquals(2, log.segments().get(1).baseOffset());
        }
    }

    @Test
    void retentionFollowsLargestReceiveTimeNotSendTime() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("segment.ms", Long.toString(HOUR_MS),
                "retention.ms", Long.toString(DAY_MS)), BASE_MS)) {
            log.append(batch(0, BASE_MS - 30 * DAY_MS), BASE_MS);
            log.append(batch(1, BASE_MS - 30 * DAY_MS), BASE_MS + 10);
            log.append(batch(2, BASE_MS + 1000), BASE_MS + HOUR_MS);
            log.append(batch(3, BASE_MS - 30 * DAY_MS), BASE_MS + 2 * HOUR_MS);
            assertEquals(3, log.segments().size());

            assertEquals(new RetentionResult(0, 0, 0, 0), log.deleteExpiredSegments(BASE_MS + 10 + DAY_MS),
                    "month-old SendTimes do not expire a segment whose largest ReceiveTime is a day old");
            RetentionResult result = log.deleteExpiredSegments(BASE_MS + 11 + DAY_MS);
            assertEquals(1, result.deletedSegments());
            assertEquals(2, result.logStartOffset());
            assertEquals(2, log.logStartOffset());

            RetentionResult all = log.deleteExpiredSegments(BASE_MS + 100 * DAY_MS);
            assertEquals(1, all.deletedSegments(), "the active segment is never deleted");
            assertEquals(3, log.logStartOffset());
            assertEquals(1, readAll(log).size());
            assertEquals(new TimeLookup.Found(3, BASE_MS + 2 * HOUR_MS, BASE_MS - 30 * DAY_MS),
                    log.lookupByReceiveTime(0), "a lookup before everything answers the log start offset");
        }
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(3, reopened.logStartOffset());
            assertEquals(4, reopened.logEndOffset());
        }
    }

    @Test
    void retentionKeepsSegmentsFromTheGivenOffsetOn() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", "100", "retention.ms", "1000"), BASE_MS)) {
            for (int i = 0; i < 5; i++) {
                log.append(batch(i, BASE_MS), BASE_MS);
            }
            assertEquals(5, log.segments().size());
            assertEquals(new RetentionResult(2, 2L * log.segments().get(0).sizeBytes(), 2, 2),
                    log.deleteExpiredSegments(BASE_MS + DAY_MS, 2), "segments ending at or below offset 2 only; the "
                            + "two closed segments after them are held");
            assertEquals(new RetentionResult(0, 0, 2, 2), log.deleteExpiredSegments(BASE_MS + DAY_MS, 2));
            assertEquals(2, log.deleteExpiredSegments(BASE_MS + DAY_MS).deletedSegments(), "never the active one");
        }
    }

    @Test
    void retentionBytesDeletesOldestWhileEnoughRemains() throws Exception {
        long size;
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", "100"), BASE_MS)) {
            for (int i = 0; i < 6; i++) {
                log.append(batch(i, BASE_MS), BASE_MS);
            }
            assertEquals(6, log.segments().size());
            size = log.segments().get(0).sizeBytes();
        }
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", "100",
                "retention.bytes", Long.toString(3 * size)), BASE_MS)) {
            RetentionResult result = log.deleteExpiredSegments(BASE_MS);
            assertEquals(new RetentionResult(3, 3 * size, 3, 0), result);
            assertEquals(3, readAll(log).size());
            assertEquals(new RetentionResult(0, 0, 3, 0), log.deleteExpiredSegments(BASE_MS));
        }
    }
}
