package io.tidemark.proto.record;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static io.tidemark.proto.record.RecordBatchFormat.BATCH_LENGTH_OFFSET;
import static io.tidemark.proto.record.RecordBatchFormat.RECORDS_OFFSET;
import static io.tidemark.proto.record.RecordBatchFormat.RECORD_COUNT_OFFSET;
import static io.tidemark.proto.record.RecordBatchFormat.totalSize;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
}
