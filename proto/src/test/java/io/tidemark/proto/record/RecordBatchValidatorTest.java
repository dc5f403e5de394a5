package io.tidemark.proto.record;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

import static io.tidemark.proto.record.RecordBatchFormat.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Every way a batch can be malformed is refused with CORRUPT_BATCH and a message naming what is wrong. */
class RecordBatchValidatorTest {
    private final RecordBatchValidator validator = new RecordBatchValidator();

    private String corruption(Consumer<ByteBuffer> damage, boolean fixCrc) {
        ByteBuffer batch = RecordBatchFormatTest.goldenBatch();
        damage.accept(batch);
        if (fixCrc) {
            batch.putInt(CRC_OFFSET, computeCrc(new CRC32C(), batch, 0, batch.limit()));
        }
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> validator.validate(batch, 0, batch.limit(), SendTimeWindow.UNBOUNDED));
        assertEquals(ErrorCode.CORRUPT_BATCH, e.code());
        return e.getMessage();
    }

    @Test
    void tooShortForAHeader() {
        ByteBuffer bytes = ByteBuffer.wrap(new byte[] {1, 2, 3});
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> validator.validate(bytes, 0, 3, SendTimeWindow.UNBOUNDED));
        assertEquals("corrupt record batch: 3 bytes cannot hold a batch header of 60 bytes", e.getMessage());
    }

    @Test
    void lengthPastTheEnd() {
        assertEquals("corrupt record batch: batch length 69 runs past the 68 bytes that follow it",
                corruption(b -> b.putInt(BATCH_LENGTH_OFFSET, 69), false));
        assertEquals("corrupt record batch: batch length 10 is below the header's 48 bytes",
                corruption(b -> b.putInt(BATCH_LENGTH_OFFSET, 10), false));
    }

    @Test
    void badMagic() {
        assertEquals("corrupt record batch: unsupported magic 2; this broker reads version 1",
                corruption(b -> b.put(MAGIC_OFFSET, (byte) 2), true));
    }

    @Test
    void crcMismatch() {
        assertEquals("corrupt record batch: CRC32C mismatch: stored 0x72098d67, computed 0x80620e64 over 64 bytes",
                corruption(b -> b.put(b.limit() - 1, (byte) 1), false));
    }

    @Test
    void unsupportedAttributes() {
        String allowed = " are not supported; version 1 batches carry attributes 0, 64 for a mirrored batch, 16 for a "
                + "transactional one or 48 for a transaction marker (no compression)";
        assertEquals("corrupt record batch: attributes 1" + allowed,
                corruption(b -> b.put(ATTRIBUTES_OFFSET, (byte) 1), true));
        assertEquals("corrupt record batch: attributes 65" + allowed,
                corruption(b -> b.put(ATTRIBUTES_OFFSET, (byte) 65), true));
    }

    @Test
    void transactionalBatchesNeedAProducerAndNoMirror() {
        assertEquals("corrupt record batch: a transactional batch needs a producer id and epoch, not -1 and -1",
                corruption(b -> b.put(ATTRIBUTES_OFFSET, ATTRIBUTE_TRANSACTIONAL).putLong(PRODUCER_ID_OFFSET, -1)
                        .putShort(PRODUCER_EPOCH_OFFSET, (short) -1), true));
        assertEquals("corrupt record batch: a control batch (attributes 32) must also be transactional (16)",
                corruption(b -> b.put(ATTRIBUTES_OFFSET, ATTRIBUTE_CONTROL), true));
        assertEquals("corrupt record batch: a mirrored batch cannot be transactional: a mirror copies committed "
                + "records only", corruption(b -> b.put(ATTRIBUTES_OFFSET,
                (byte) (ATTRIBUTE_TRANSACTIONAL | ATTRIBUTE_MIRRORED)), true));
        ByteBuffer transactional = new RecordBatchBuilder().producer(7, (short) 2, 0).transactional()
                .append(1_000, null, new byte[] {1}).build();
        assertEquals(transactional.limit(), validator.validate(transactional, 0, transactional.limit(),
                SendTimeWindow.UNBOUNDED));
        assertEquals(true, transactional(transactional, 0));
        assertEquals(false, control(transactional, 0));
    }

    /**
     * A batch that names a producer has its id, epoch and base sequence not negative: a base sequence of -1 with a
     * producer id (the fuzzer's finding: a plain batch whose producer id became 965) passed, and the partition wrote
     * the batch, failed to record its sequences, and did not open again (IdempotentProducerTest).
     */
    @Test
    void aBatchThatNamesAProducerHasSequencesThatAreNotNegative() {
        assertEquals("corrupt record batch: a batch of producer 965 needs a producer id, epoch and base sequence that "
                + "are not negative, not 965, -1 and -1 (a batch of no idempotent producer has producer id -1)",
                corruption(b -> b.putLong(PRODUCER_ID_OFFSET, 965).putShort(PRODUCER_EPOCH_OFFSET, (short) -1)
                        .putInt(BASE_SEQUENCE_OFFSET, -1), true));
        assertEquals("corrupt record batch: a batch of producer 965 needs a producer id, epoch and base sequence that "
                + "are not negative, not 965, 0 and -7 (a batch of no idempotent producer has producer id -1)",
                corruption(b -> b.putLong(PRODUCER_ID_OFFSET, 965).putShort(PRODUCER_EPOCH_OFFSET, (short) 0)
                        .putInt(BASE_SEQUENCE_OFFSET, -7), true));
        assertEquals("corrupt record batch: a batch of producer -2 needs a producer id, epoch and base sequence that "
                + "are not negative, not -2, 0 and 0 (a batch of no idempotent producer has producer id -1)",
                corruption(b -> b.putLong(PRODUCER_ID_OFFSET, -2).putShort(PRODUCER_EPOCH_OFFSET, (short) 0)
                        .putInt(BASE_SEQUENCE_OFFSET, 0), true));
        ByteBuffer idempotent = new RecordBatchBuilder().producer(965, (short) 0, Integer.MAX_VALUE)
                .append(1_000, null, new byte[] {1}).build();
        assertEquals(idempotent.limit(), validator.validate(idempotent, 0, idempotent.limit(),
                SendTimeWindow.UNBOUNDED));
    }

    @Test
    void markersHaveTheirFixedLayout() {
        ByteBuffer commit = TransactionMarker.build(7, (short) 3, true, 12, 5_000);
        assertEquals(74, validator.validate(commit, 0, commit.limit(), SendTimeWindow.UNBOUNDED));
        assertEquals(true, TransactionMarker.commits(commit, 0));
        assertEquals(12, TransactionMarker.coordinatorEpoch(commit, 0));
        assertEquals(5_000, maxSendTime(commit, 0));
        assertEquals(true, control(commit, 0) && transactional(commit, 0));
        assertEquals(false, TransactionMarker.commits(TransactionMarker.build(7, (short) 3, false, 12, 5_000), 0));

        ByteBuffer badType = TransactionMarker.build(7, (short) 3, true, 12, 5_000).putShort(66, (short) 2);
        badType.putInt(CRC_OFFSET, computeCrc(new CRC32C(), badType, 0, badType.limit()));
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> validator.validate(badType, 0, badType.limit(), SendTimeWindow.UNBOUNDED));
        assertEquals("corrupt record batch: a transaction marker's record must be version 0, type 0 (abort) or 1 "
                + "(commit), with a 4-byte key, a 4-byte value and no headers; type is 2", e.getMessage());

        ByteBuffer records = new RecordBatchBuilder().producer(7, (short) 2, 0).transactional()
                .append(1_000, null, new byte[] {1}).build();
        records.put(ATTRIBUTES_OFFSET, (byte) (ATTRIBUTE_TRANSACTIONAL | ATTRIBUTE_CONTROL));
        records.putInt(CRC_OFFSET, computeCrc(new CRC32C(), records, 0, records.limit()));
        e = assertThrows(TidemarkException.class,
                () -> validator.validate(records, 0, records.limit(), SendTimeWindow.UNBOUNDED));
        assertEquals("corrupt record batch: a transaction marker is one record in 74 bytes, not 1 in "
                + records.limit(), e.getMessage());
    }

    @Test
    void recordCountMismatch() {
        assertEquals("corrupt record batch: record count 0 is below 1",
                corruption(b -> b.putInt(RECORD_COUNT_OFFSET, 0), true));
        assertEquals("corrupt record batch: 6 bytes follow the last of 1 records",
                corruption(b -> b.putInt(RECORD_COUNT_OFFSET, 1), true));
        assertEquals("corrupt record batch: record 2 of 3: varint runs past the record end",
                corruption(b -> b.putInt(RECORD_COUNT_OFFSET, 3), true));
    }

    @Test
    void sendTimeSummariesMustMatchTheRecords() {
        assertEquals("corrupt record batch: Max SendTime 1700000000001 differs from the records' largest "
                + "1700000000000", corruption(b -> b.putLong(MAX_SEND_TIME_OFFSET, 1_700_000_000_001L), true));
        assertEquals("corrupt record batch: First SendTime -1 is negative; SendTime is ms since the epoch",
                corruption(b -> b.putLong(FIRST_SEND_TIME_OFFSET, -1), true));
    }

    @Test
    void recordLayoutErrors() {
        int record0 = RECORDS_OFFSET;
        assertEquals("corrupt record batch: record 0 of 2: offset delta 5 where 0 was expected",
                corruption(b -> b.put(record0 + 1, (byte) 5), true));
        assertEquals("corrupt record batch: record 0 of 2: record length 100 runs past the batch end (19 bytes left)",
                corruption(b -> b.put(record0, (byte) 100), true));
        assertEquals("corrupt record batch: record 0 of 2: key length -2 is below -1 (null)",
                corruption(b -> b.put(record0 + 3, (byte) 3), true));
        assertEquals("corrupt record batch: record 0 of 2: value of 50 bytes runs past the record end (8 bytes left)",
                corruption(b -> b.put(record0 + 5, (byte) 100), true));
    }
}
