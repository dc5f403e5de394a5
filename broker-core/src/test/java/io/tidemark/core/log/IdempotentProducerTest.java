package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A batch an idempotent producer sends again is answered with the first one's result and stored once. */
class IdempotentProducerTest {
    @TempDir
    Path dir;

    private static ByteBuffer batch(long producerId, short epoch, int baseSequence, int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder().producer(producerId, epoch, baseSequence);
        for (int i = 0; i < records; i++) {
            builder.append(BASE_MS, null, LogTestUtils.bytes("p" + producerId + "-s" + (baseSequence + i)));
        }
        return builder.build();
    }

    @Test
    void aResentBatchIsStoredOnceAndAnsweredWithItsFirstResult() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(new AppendResult(0, 2, BASE_MS), log.append(batch(7, (short) 0, 0, 3), BASE_MS));
            assertEquals(new AppendResult(3, 3, BASE_MS + 5), log.append(batch(8, (short) 0, 40, 1), BASE_MS + 5));
            assertEquals(new AppendResult(0, 2, BASE_MS), log.append(batch(7, (short) 0, 0, 3), BASE_MS + 9),
                    "the duplicate gets the original offsets and ReceiveTime");
            assertEquals(4, log.logEndOffset());
            assertEquals(new AppendResult(4, 5, BASE_MS + 9), log.append(batch(7, (short) 0, 3, 2), BASE_MS + 9));
        }
    }

    @Test
    void aGapInSequencesAndAnOldEpochAreRefused() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(batch(7, (short) 1, 0, 3), BASE_MS);
            TidemarkException gap = assertThrows(TidemarkException.class,
                    () -> log.append(batch(7, (short) 1, 5, 1), BASE_MS));
            assertEquals(ErrorCode.OUT_OF_ORDER_SEQUENCE, gap.code());
            assertEquals("producer 7 sent sequence 5; this partition expects 3 (its last stored batch ended at 2)",
                    gap.getMessage());
            TidemarkException fenced = assertThrows(TidemarkException.class,
                    () -> log.append(batch(7, (short) 0, 3, 1), BASE_MS));
            assertEquals(ErrorCode.INVALID_PRODUCER_EPOCH, fenced.code());
            assertEquals(new AppendResult(3, 3, BASE_MS), log.append(batch(7, (short) 2, 0, 1), BASE_MS),
                    "a newer epoch starts over");
            assertEquals(4, log.logEndOffset());
        }
    }

    @Test
    void sequencesWrapLikeTheProducers() throws Exception {
        assertEquals(0, ProducerStateTable.advance(Integer.MAX_VALUE, 1));
        assertEquals(1, ProducerStateTable.advance(Integer.MAX_VALUE - 1, 3));
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(batch(7, (short) 0, Integer.MAX_VALUE - 1, 2), BASE_MS);
            assertEquals(new AppendResult(2, 2, BASE_MS), log.append(batch(7, (short) 0, 0, 1), BASE_MS));
        }
    }

    @Test
    void theTableIsRebuiltFromTheLogOnOpenAndAfterTruncation() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(batch(7, (short) 0, 0, 2), BASE_MS);
            log.append(batch(7, (short) 0, 2, 2), BASE_MS);
        }
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(new AppendResult(2, 3, BASE_MS), reopened.append(batch(7, (short) 0, 2, 2), BASE_MS));
            assertEquals(4, reopened.logEndOffset());
            reopened.truncateTo(2);
            assertEquals(new AppendResult(2, 3, BASE_MS + 1), reopened.append(batch(7, (short) 0, 2, 2), BASE_MS + 1),
                    "a truncated batch is gone from the table too, so its resend is stored");
            assertEquals(4, readAll(reopened).size());
        }
    }
}
