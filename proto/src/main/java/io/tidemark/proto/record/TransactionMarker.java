package io.tidemark.proto.record;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * A transaction marker: the control batch that ends a producer's transaction in one partition, committing or
 * aborting every transactional batch that producer wrote there since its last marker. Only the brokers write
 * markers (a client's produce of one is refused), and a reader never sees one as a record: it moves its position
 * past it.
 *
 * <h2>Layout (exactly 74 bytes)</h2>
 * A batch of {@link RecordBatchFormat} with Attributes {@code 0x30} (transactional and control), the producer's id
 * and epoch, Base Sequence {@value RecordBatchFormat#NO_SEQUENCE}, Record Count 1, First and Max SendTime the
 * moment the marker was decided, and one record whose bytes are fixed but for Type and Coordinator Epoch:
 * <pre>
 * 60  Length              0x0d (13 bytes follow)
 * 61  Offset Delta        0x00
 * 62  SendTime Delta      0x00
 * 63  Key Length          0x08 (zigzag 4)
 * 64  Version (int16)     0
 * 66  Type (int16)        0 abort, 1 commit
 * 68  Value Length        0x08 (zigzag 4)
 * 69  Coordinator Epoch   int32: the epoch of the coordinator that decided it, so a marker a deposed
 *                         coordinator decided can be told from its successor's
 * 73  Header Count        0x00
 * </pre>
 * Kafka's control records carry the same key and value; the fixed layout lets a broker read a marker without
 * decoding varints.
 *
 * <p>Stateless.
 */
public final class TransactionMarker {
    public static final int SIZE_BYTES = HEADER_SIZE_BYTES + 14;
    private static final int LENGTH_OFFSET = RECORDS_OFFSET;
    private static final int KEY_LENGTH_OFFSET = RECORDS_OFFSET + 3;
    private static final int VERSION_OFFSET = RECORDS_OFFSET + 4;
    private static final int TYPE_OFFSET = RECORDS_OFFSET + 6;
    private static final int VALUE_LENGTH_OFFSET = RECORDS_OFFSET + 8;
    private static final int COORDINATOR_EPOCH_OFFSET = RECORDS_OFFSET + 9;
    private static final int HEADER_COUNT_OFFSET = RECORDS_OFFSET + 13;
    private static final byte ZIGZAG_FOUR = 8;
    private static final short ABORT = 0;
    private static final short COMMIT = 1;

    private TransactionMarker() {
    }

    /**
     * A marker batch as a producer's batch is built: base offset 0, no ReceiveTime; the partition leader stamps it.
     *
     * @param commit true for a commit marker, false for an abort
     */
    public static ByteBuffer build(long producerId, short producerEpoch, boolean commit, int coordinatorEpoch,
                                   long decidedAtMs) {
        if (producerId < 0 || producerEpoch < 0) {
            throw new IllegalArgumentException("a marker needs a producer id and epoch, not " + producerId + " and "
                    + producerEpoch);
        }
        if (decidedAtMs < 0) {
            throw new IllegalArgumentException("decidedAtMs " + decidedAtMs + " is negative");
        }
        ByteBuffer batch = ByteBuffer.allocate(SIZE_BYTES);
        batch.putLong(BASE_OFFSET_OFFSET, 0L)
                .putInt(BATCH_LENGTH_OFFSET, SIZE_BYTES - LOG_OVERHEAD_BYTES)
                .put(MAGIC_OFFSET, MAGIC_V1)
                .put(ATTRIBUTES_OFFSET, (byte) (ATTRIBUTE_TRANSACTIONAL | ATTRIBUTE_CONTROL))
                .putShort(PRODUCER_EPOCH_OFFSET, producerEpoch)
                .putInt(RECORD_COUNT_OFFSET, 1)
                .putLong(RECEIVE_TIME_OFFSET, NO_RECEIVE_TIME)
                .putLong(FIRST_SEND_TIME_OFFSET, decidedAtMs)
                .putLong(MAX_SEND_TIME_OFFSET, decidedAtMs)
                .putLong(PRODUCER_ID_OFFSET, producerId)
                .putInt(BASE_SEQUENCE_OFFSET, NO_SEQUENCE);
        batch.put(LENGTH_OFFSET, (byte) (SIZE_BYTES - LENGTH_OFFSET - 1))
                .put(KEY_LENGTH_OFFSET, ZIGZAG_FOUR)
                .putShort(VERSION_OFFSET, (short) 0)
                .putShort(TYPE_OFFSET, commit ? COMMIT : ABORT)
                .put(VALUE_LENGTH_OFFSET, ZIGZAG_FOUR)
                .putInt(COORDINATOR_EPOCH_OFFSET, coordinatorEpoch)
                .put(HEADER_COUNT_OFFSET, (byte) 0);
        batch.putInt(CRC_OFFSET, computeCrc(new CRC32C(), batch, 0, SIZE_BYTES));
        return batch;
    }

    /** Whether the marker at {@code position} (checked by {@link RecordBatchValidator}) commits its transaction. */
    public static boolean commits(ByteBuffer batch, int position) {
        return batch.getShort(position + TYPE_OFFSET) == COMMIT;
    }

    public static int coordinatorEpoch(ByteBuffer batch, int position) {
        return batch.getInt(position + COORDINATOR_EPOCH_OFFSET);
    }

    /** Checks the fixed layout of a control batch of {@code totalSize} bytes; the validator checks the rest. */
    static void check(ByteBuffer batch, int position, int totalSize) {
        if (totalSize != SIZE_BYTES || recordCount(batch, position) != 1) {
            throw RecordBatchValidator.corrupt("a transaction marker is one record in " + SIZE_BYTES
                    + " bytes, not " + recordCount(batch, position) + " in " + totalSize);
        }
        if (baseSequence(batch, position) != NO_SEQUENCE) {
            throw RecordBatchValidator.corrupt("a transaction marker has Base Sequence " + NO_SEQUENCE + ", not "
                    + baseSequence(batch, position));
        }
        short type = batch.getShort(position + TYPE_OFFSET);
        if (batch.get(position + LENGTH_OFFSET) != SIZE_BYTES - LENGTH_OFFSET - 1
                || batch.get(position + KEY_LENGTH_OFFSET) != ZIGZAG_FOUR
                || batch.getShort(position + VERSION_OFFSET) != 0 || (type != ABORT && type != COMMIT)
                || batch.get(position + VALUE_LENGTH_OFFSET) != ZIGZAG_FOUR
                || batch.get(position + HEADER_COUNT_OFFSET) != 0) {
            throw RecordBatchValidator.corrupt("a transaction marker's record must be version 0, type 0 (abort) or 1 "
                    + "(commit), with a 4-byte key, a 4-byte value and no headers; type is " + type);
        }
    }
}
