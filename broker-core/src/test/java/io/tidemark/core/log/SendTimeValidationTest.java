package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.admitAndAppend;
import static io.tidemark.core.log.LogTestUtils.batch;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * SendTime is checked against the batch's ReceiveTime, as seed 001 found Kafka does with CreateTime: by the leader's
 * {@link BatchAdmission}; the log keeps ReceiveTime from decreasing.
 */
class SendTimeValidationTest {
    private static final long MINUTE_MS = 60_000;

    @TempDir
    Path dir;

    @Test
    void thirtyMinutesAheadIsAcceptedTwoHoursAheadIsRejectedWithTheRange() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(new AppendResult(0, 0, BASE_MS), log.append(batch(0, BASE_MS + 30 * MINUTE_MS), BASE_MS));

            TidemarkException e = assertThrows(TidemarkException.class,
                    () -> admitAndAppend(log, batch(1, BASE_MS, BASE_MS + 120 * MINUTE_MS), BASE_MS));
            assertEquals(ErrorCode.INVALID_TIMESTAMP, e.code());
            assertEquals("record 1 of the batch has SendTime 1700007200000 (2023-11-15T00:13:20Z), outside the "
                    + "allowed range [0, 1700003600000] = ReceiveTime 1700000000000 - send.time.before.max.ms "
                    + "(unlimited) .. + send.time.after.max.ms 3600000; the whole batch was rejected", e.getMessage());
            assertEquals(1, log.logEndOffset(), "nothing of the rejected batch is appended");
            assertEquals(1, readAll(log).size());
        }
    }

    @Test
    void beforeLimitRejectsOldSendTimes() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("send.time.before.max.ms", "600000"), BASE_MS)) {
            log.append(batch(0, BASE_MS - 10 * MINUTE_MS), BASE_MS);
            TidemarkException e = assertThrows(TidemarkException.class,
                    () -> admitAndAppend(log, batch(1, BASE_MS - 10 * MINUTE_MS - 1), BASE_MS));
            assertEquals(ErrorCode.INVALID_TIMESTAMP, e.code());
            assertEquals("record 0 of the batch has SendTime 1699999399999 (2023-11-14T22:03:19.999Z), outside the "
                    + "allowed range [1699999400000, 1700003600000] = ReceiveTime 1700000000000 - "
                    + "send.time.before.max.ms 600000 .. + send.time.after.max.ms 3600000; the whole batch was "
                    + "rejected", e.getMessage());
        }
    }

    @Test
    void unlimitedAfterAcceptsAnyFuture() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("send.time.after.max.ms", "-1"), BASE_MS)) {
            assertEquals(0, log.append(batch(0, Long.MAX_VALUE / 2), BASE_MS).baseOffset());
        }
    }

    @Test
    void receiveTimeNeverDecreases() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(batch(0, BASE_MS), BASE_MS + 5);
            assertEquals(1, log.append(batch(1, BASE_MS), BASE_MS + 5).baseOffset(), "equal is fine");
            TidemarkException e = assertThrows(TidemarkException.class, () -> log.append(batch(2, BASE_MS), BASE_MS));
            assertEquals(ErrorCode.INVALID_TIMESTAMP, e.code());
            assertEquals("ReceiveTime 1700000000000 is below the partition's last ReceiveTime 1700000000005; "
                    + "ReceiveTime never decreases in a partition (stamp max(now, last))", e.getMessage());
            assertEquals(2, log.logEndOffset());
        }
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(BASE_MS + 5, reopened.lastReceiveTimeMs().orElseThrow(), "survives a restart");
            assertThrows(TidemarkException.class, () -> reopened.append(batch(2, BASE_MS), BASE_MS + 4));
        }
    }
}
