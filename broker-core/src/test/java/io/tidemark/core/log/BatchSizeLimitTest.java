package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** What the size alone decides, as a partition's leader asks it before reading a batch. */
class BatchSizeLimitTest {
    private static final ByteBuffer PLAIN = new RecordBatchBuilder().append(1, null, new byte[100]).build();
    private static final ByteBuffer MIRRORED = new RecordBatchBuilder().mirrored().append(1, null, new byte[100],
            ProvenanceHeaders.forCopy(List.of(), new OriginPartition("A", "t", new UUID(1, 2), 0), 0, 1)).build();

    private static String refusal(ByteBuffer batch, int maxBatchBytes, int largestBatchBytes) {
        TidemarkException e = assertThrows(TidemarkException.class, () -> BatchSizeLimit.checkSize(batch, 0,
                batch.remaining(), maxBatchBytes, largestBatchBytes));
        assertEquals(ErrorCode.RECORD_TOO_LARGE, e.code());
        return e.getMessage();
    }

    @Test
    void aPlainBatchIsHeldToMaxBatchBytes() {
        int size = PLAIN.remaining();
        BatchSizeLimit.checkSize(PLAIN, 0, size, size, LogTestUtils.NO_ENTRY_LIMIT);
        assertEquals("batch of " + size + " bytes is above max.batch.bytes " + (size - 1) + " of this topic",
                refusal(PLAIN, size - 1, LogTestUtils.NO_ENTRY_LIMIT));
    }

    @Test
    void aMirroredBatchAboveMaxBatchBytesWaitsForItsScanUpToWhatARaftEntryHolds() {
        int size = MIRRORED.remaining();
        BatchSizeLimit.checkSize(MIRRORED, 0, size, size - 40, size);
        assertEquals("mirrored batch of " + size + " bytes is above " + (size - 1) + " bytes, the largest batch a "
                + "Raft entry holds on this broker; max.batch.bytes " + (size - 40) + " of this topic allows a "
                + "mirrored batch its tidemark.origin headers on top, up to that",
                refusal(MIRRORED, size - 40, size - 1));
    }

    @Test
    void aScannedMirroredBatchIsHeldToMaxBatchBytesWithoutItsProvenance() {
        BatchSizeLimit.checkMirrored(1040, 40, 1000);
        TidemarkException e = assertThrows(TidemarkException.class, () -> BatchSizeLimit.checkMirrored(1041, 40,
                1000));
        assertEquals("mirrored batch of 1041 bytes is above max.batch.bytes 1000 of this topic plus the 40 bytes of "
                + "its tidemark.origin headers (1040 bytes): its records take 1001 bytes as the origin held them",
                e.getMessage());
    }
}
