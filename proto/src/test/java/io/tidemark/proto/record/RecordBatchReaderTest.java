package io.tidemark.proto.record;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HexFormat;

import static io.tidemark.proto.record.RecordBatchFormat.BATCH_LENGTH_OFFSET;
import static io.tidemark.proto.record.RecordBatchFormat.RECORDS_OFFSET;
import static io.tidemark.proto.record.RecordBatchFormat.RECORD_COUNT_OFFSET;
import static io.tidemark.proto.record.RecordBatchFormat.totalSize;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

class RecordBatchReaderTest {
    /**
     * A batch of 70 bytes whose one record claims a key of 2^30 bytes is refused naming the field, before anything is
     * allocated for it (it allocated 1 GiB, and a produce to an internal topic decodes the client's batch).
     */
    @Test
    void aLengthFromAVarintIsHeldToTheBytesBeforeAnythingIsAllocated() {
        ByteBuffer golden = RecordBatchFormatTest.goldenBatch();
        int overhead = totalSize(golden, 0) - golden.getInt(BATCH_LENGTH_OFFSET);
        byte[] record = {7, 0, 0, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x08};
        ByteBuffer batch = ByteBuffer.allocate(RECORDS_OFFSET + record.length);
        batch.put(golden.duplicate().limit(RECORDS_OFFSET)).put(record).flip();
        batch.putInt(BATCH_LENGTH_OFFSET, batch.limit() - overhead).putInt(RECORD_COUNT_OFFSET, 1);

        RecordFormatException e = assertThrows(RecordFormatException.class,
                () -> new RecordBatchReader().records(batch));
        assertEquals("a field of 1073741824 bytes runs past the record end (0 bytes left)", e.getMessage());
    }

    /**
     * Bytes nobody validated whose batch length is -12 (a batch of 0 bytes) and record count 0: the reader stepped 0
     * bytes a batch and never returned, so one produce of 60 bytes to {@code __mirror_state} held a broker thread for
     * good (its check reads the client's batch before the append validates it). Now a batch shorter than its header is
     * refused.
     */
    @Test
    void aBatchShorterThanItsHeaderIsRefusedNotReadForever() {
        ByteBuffer batch = ByteBuffer.allocate(RecordBatchFormat.HEADER_SIZE_BYTES);
        batch.putInt(BATCH_LENGTH_OFFSET, -RecordBatchFormat.LOG_OVERHEAD_BYTES).putInt(RECORD_COUNT_OFFSET, 0)
                .put(RecordBatchFormat.MAGIC_OFFSET, RecordBatchFormat.MAGIC_V1);

        RecordFormatException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> assertThrows(RecordFormatException.class, () -> new RecordBatchReader().records(batch)));
        assertEquals("the batch at position 0 has length -12, shorter than its header (48 bytes after its first 12)",
                e.getMessage());
    }

    /**
     * The fuzzer's input 28 of seed 20261205 (RecordBatchFuzzTest): 82 random bytes whose batch length is negative
     * walked the reader's position back before the buffer's start (IndexOutOfBoundsException).
     */
    @Test
    void aNegativeBatchLengthIsRefusedNotFollowedBackwards() {
        ByteBuffer bytes = ByteBuffer.wrap(HexFormat.of().parseHex("5fe96680c473a45f871a2aaf5a8cb7b40140457cc200ca2b"
                + "34e11e84d0150db996f51c696ec83160c6ad5452d13db51619878284a1391de0f9893c9dcda3f0c4c7f1fd5941f9"
                + "02463fa1f0816fc8d06edcba"));

        RecordFormatException e = assertThrows(RecordFormatException.class,
                () -> new RecordBatchReader().records(bytes));
        assertEquals("the batch at position 0 has length -2028328273, shorter than its header (48 bytes after its "
                + "first 12)", e.getMessage());
    }
}
