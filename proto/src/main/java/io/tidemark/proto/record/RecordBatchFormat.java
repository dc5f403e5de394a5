package io.tidemark.proto.record;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The record batch: the unit a producer sends, the broker appends and a consumer fetches. The same bytes
 * travel on the wire and lie in a segment's {@code .log} file; the producer builds the batch
 * ({@link RecordBatchBuilder}) and the partition leader only validates it and fills in the base offset and
 * the ReceiveTime ({@link #stamp}).
 *
 * <h2>Batch header (60 bytes, big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      Base Offset (int64)                      |  0
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                     Batch Length (int32)                      |  8
 * +---------------------------------------------------------------+
 * |                        CRC32C (uint32)                        | 12
 * +---------------+---------------+-------------------------------+
 * |  Magic (int8) | Attrs (int8)  |     Producer Epoch (int16)    | 16
 * +---------------+---------------+-------------------------------+
 * |                     Record Count (int32)                      | 20
 * +---------------------------------------------------------------+
 * |                     ReceiveTime (int64, ms)                   | 24
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                  First SendTime (int64, ms)                   | 32
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                   Max SendTime (int64, ms)                    | 40
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                     Producer Id (int64)                       | 48
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                    Base Sequence (int32)                      | 56
 * +---------------------------------------------------------------+
 * |                 Records (Record Count of them)               ... 60
 * +---------------------------------------------------------------+
 * </pre>
 * <ul>
 *   <li><b>Base Offset</b>: offset of the first record; written by the broker. A producer writes 0.</li>
 *   <li><b>Batch Length</b>: bytes after this field, so a batch occupies {@code 12 + Batch Length} bytes and a
 *       reader can skip it after reading 12 bytes.</li>
 *   <li><b>CRC32C</b>: Castagnoli CRC of bytes {@code [16, end)}: every field from Magic to the last record,
 *       including ReceiveTime. ReceiveTime is covered because the time index, rolling and retention all
 *       trust it: a flipped bit there must be caught by recovery, not silently reorder time. The broker
 *       therefore recomputes the CRC after stamping (CRC32C is an intrinsic, several GB/s per core). Base
 *       Offset is not covered, so offsets can be assigned without hashing; a damaged offset is caught instead
 *       by recovery's check that offsets are contiguous. Batch Length is not covered either: a wrong length
 *       makes the CRC run over the wrong bytes and fail.</li>
 *   <li><b>Magic</b>: format version, {@value #MAGIC_V1}. Bytes 0-15 are the same in every version; a reader
 *       checks Magic before it trusts any later field.</li>
 *   <li><b>Attributes</b>: bit 6 ({@link #ATTRIBUTE_MIRRORED}, 0x40) marks a <i>mirrored</i> batch, written by a
 *       mirror: every record carries the provenance header of {@link ProvenanceHeaders}, all naming the same
 *       origin partition, with origin offsets strictly increasing from record to record
 *       ({@link MirroredBatchScanner} checks it). A partition log keeps, per origin partition, the last origin
 *       offset it holds and refuses a mirrored batch that starts at or below it (ORIGIN_OFFSET_HELD), so a record
 *       is copied into a partition at most once.
 *       Bit 4 ({@link #ATTRIBUTE_TRANSACTIONAL}, 0x10) marks a batch written inside a producer's transaction: it
 *       needs a Producer Id and Epoch, and its records count only once the transaction's commit marker follows it
 *       in the partition (a reader at {@code read_committed} skips them when an abort marker follows instead).
 *       Bit 5 ({@link #ATTRIBUTE_CONTROL}, 0x20) marks a control batch, which holds no application record but a
 *       transaction marker ({@link TransactionMarker}: its exact 74 bytes); it always has bit 4 set too.
 *       A mirrored batch is never transactional (a mirror copies committed records only). Every other bit must
 *       be 0 in version 1: bits 0-2 are reserved for a compression codec.</li>
 *   <li><b>Producer Id / Epoch / Base Sequence</b>: idempotent producer identity, or
 *       {@value #NO_PRODUCER_ID} / {@value #NO_PRODUCER_EPOCH} / {@value #NO_SEQUENCE} when the producer is
 *       not idempotent.</li>
 *   <li><b>Record Count</b>: at least 1.</li>
 *   <li><b>ReceiveTime</b>: stamped by the partition leader, one for the whole batch, never lower than the
 *       previous batch's. A producer writes {@value #NO_RECEIVE_TIME}.</li>
 *   <li><b>First SendTime</b>: SendTime of record 0; every record's SendTime is stored as a delta from it.
 *       <b>Max SendTime</b>: the largest SendTime in the batch, so a SendTime lookup skips whole batches
 *       without decoding records. SendTimes are ms since the epoch and never negative.</li>
 * </ul>
 *
 * <h2>Record (variable length)</h2>
 * Integers marked varint are unsigned LEB128; zigzag fields are zigzag-encoded LEB128 (see {@link Varints}).
 * <pre>
 * Length          varint          bytes after this field
 * Offset Delta    varint          record's offset - Base Offset; record i has delta i
 * SendTime Delta  zigzag varlong  record's SendTime - First SendTime
 * Key Length      zigzag varint   -1 for a null key
 * Key             bytes
 * Value Length    zigzag varint   -1 for a null value
 * Value           bytes
 * Header Count    varint
 * Headers         Header Count times:
 *   Name Length   varint
 *   Name          bytes (UTF-8)
 *   Value Length  varint
 *   Value         bytes
 * </pre>
 *
 * <h2>After a crash</h2>
 * A batch torn by a crash fails its length or CRC check; recovery truncates the segment at the first batch
 * that fails any check ({@link RecordBatchValidator}) and rebuilds the indexes from what remains.
 *
 * <p>Stateless; every method works on absolute positions and is safe from any thread.
 */
public final class RecordBatchFormat {
    public static final int BASE_OFFSET_OFFSET = 0;
    public static final int BASE_OFFSET_LENGTH = 8;
    public static final int BATCH_LENGTH_OFFSET = BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH;
    public static final int BATCH_LENGTH_LENGTH = 4;
    public static final int CRC_OFFSET = BATCH_LENGTH_OFFSET + BATCH_LENGTH_LENGTH;
    public static final int CRC_LENGTH = 4;
    public static final int MAGIC_OFFSET = CRC_OFFSET + CRC_LENGTH;
    public static final int MAGIC_LENGTH = 1;
    public static final int ATTRIBUTES_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;
    public static final int ATTRIBUTES_LENGTH = 1;
    public static final int PRODUCER_EPOCH_OFFSET = ATTRIBUTES_OFFSET + ATTRIBUTES_LENGTH;
    public static final int PRODUCER_EPOCH_LENGTH = 2;
    public static final int RECORD_COUNT_OFFSET = PRODUCER_EPOCH_OFFSET + PRODUCER_EPOCH_LENGTH;
    public static final int RECORD_COUNT_LENGTH = 4;
    public static final int RECEIVE_TIME_OFFSET = RECORD_COUNT_OFFSET + RECORD_COUNT_LENGTH;
    public static final int RECEIVE_TIME_LENGTH = 8;
    public static final int FIRST_SEND_TIME_OFFSET = RECEIVE_TIME_OFFSET + RECEIVE_TIME_LENGTH;
    public static final int FIRST_SEND_TIME_LENGTH = 8;
    public static final int MAX_SEND_TIME_OFFSET = FIRST_SEND_TIME_OFFSET + FIRST_SEND_TIME_LENGTH;
    public static final int MAX_SEND_TIME_LENGTH = 8;
    public static final int PRODUCER_ID_OFFSET = MAX_SEND_TIME_OFFSET + MAX_SEND_TIME_LENGTH;
    public static final int PRODUCER_ID_LENGTH = 8;
    public static final int BASE_SEQUENCE_OFFSET = PRODUCER_ID_OFFSET + PRODUCER_ID_LENGTH;
    public static final int BASE_SEQUENCE_LENGTH = 4;
    public static final int RECORDS_OFFSET = BASE_SEQUENCE_OFFSET + BASE_SEQUENCE_LENGTH;

    /** Size of the batch header; also the smallest possible batch minus its records. */
    public static final int HEADER_SIZE_BYTES = RECORDS_OFFSET;
    /** Bytes a reader needs to learn a batch's offset and total size. */
    public static final int LOG_OVERHEAD_BYTES = BATCH_LENGTH_OFFSET + BATCH_LENGTH_LENGTH;
    /** Where the CRC starts covering. */
    public static final int CRC_COVERED_FROM = MAGIC_OFFSET;

    public static final byte MAGIC_V1 = 1;
    /** Attributes bit of a mirrored batch (see the class comment). */
    public static final byte ATTRIBUTE_MIRRORED = 0x40;
    /** Attributes bit of a batch written inside a transaction (see the class comment). */
    public static final byte ATTRIBUTE_TRANSACTIONAL = 0x10;
    /** Attributes bit of a control batch: a {@link TransactionMarker} (see the class comment). */
    public static final byte ATTRIBUTE_CONTROL = 0x20;
    /** The attribute bits version 1 defines; a batch with any other bit set is refused. */
    public static final byte KNOWN_ATTRIBUTES = ATTRIBUTE_MIRRORED | ATTRIBUTE_TRANSACTIONAL | ATTRIBUTE_CONTROL;
    public static final long NO_PRODUCER_ID = -1L;
    public static final short NO_PRODUCER_EPOCH = -1;
    public static final int NO_SEQUENCE = -1;
    public static final long NO_RECEIVE_TIME = -1L;

    private RecordBatchFormat() {
    }

    /** Total bytes of the batch that starts at {@code position}, from its Batch Length field. */
    public static int totalSize(ByteBuffer buffer, int position) {
        return LOG_OVERHEAD_BYTES + buffer.getInt(position + BATCH_LENGTH_OFFSET);
    }

    public static long baseOffset(ByteBuffer buffer, int position) {
        return buffer.getLong(position + BASE_OFFSET_OFFSET);
    }

    public static int storedCrc(ByteBuffer buffer, int position) {
        return buffer.getInt(position + CRC_OFFSET);
    }

    public static byte magic(ByteBuffer buffer, int position) {
        return buffer.get(position + MAGIC_OFFSET);
    }

    public static byte attributes(ByteBuffer buffer, int position) {
        return buffer.get(position + ATTRIBUTES_OFFSET);
    }

    /** Whether the batch at {@code position} is a mirrored one ({@link #ATTRIBUTE_MIRRORED}). */
    public static boolean mirrored(ByteBuffer buffer, int position) {
        return (attributes(buffer, position) & ATTRIBUTE_MIRRORED) != 0;
    }

    /** Whether the batch at {@code position} was written inside a transaction ({@link #ATTRIBUTE_TRANSACTIONAL}). */
    public static boolean transactional(ByteBuffer buffer, int position) {
        return (attributes(buffer, position) & ATTRIBUTE_TRANSACTIONAL) != 0;
    }

    /** Whether the batch at {@code position} is a control batch, a {@link TransactionMarker}. */
    public static boolean control(ByteBuffer buffer, int position) {
        return (attributes(buffer, position) & ATTRIBUTE_CONTROL) != 0;
    }

    public static short producerEpoch(ByteBuffer buffer, int position) {
        return buffer.getShort(position + PRODUCER_EPOCH_OFFSET);
    }

    public static int recordCount(ByteBuffer buffer, int position) {
        return buffer.getInt(position + RECORD_COUNT_OFFSET);
    }

    /** Offset of the batch's last record. */
    public static long lastOffset(ByteBuffer buffer, int position) {
        return baseOffset(buffer, position) + recordCount(buffer, position) - 1;
    }

    public static long receiveTime(ByteBuffer buffer, int position) {
        return buffer.getLong(position + RECEIVE_TIME_OFFSET);
    }

    public static long firstSendTime(ByteBuffer buffer, int position) {
        return buffer.getLong(position + FIRST_SEND_TIME_OFFSET);
    }

    public static long maxSendTime(ByteBuffer buffer, int position) {
        return buffer.getLong(position + MAX_SEND_TIME_OFFSET);
    }

    public static long producerId(ByteBuffer buffer, int position) {
        return buffer.getLong(position + PRODUCER_ID_OFFSET);
    }

    public static int baseSequence(ByteBuffer buffer, int position) {
        return buffer.getInt(position + BASE_SEQUENCE_OFFSET);
    }

    /** CRC32C of the covered part of the batch at {@code position} whose total size is {@code totalSize}. */
    public static int computeCrc(CRC32C crc, ByteBuffer buffer, int position, int totalSize) {
        crc.reset();
        int from = position + CRC_COVERED_FROM;
        int length = totalSize - CRC_COVERED_FROM;
        if (buffer.hasArray()) {
            crc.update(buffer.array(), buffer.arrayOffset() + from, length);
        } else {
            crc.update(buffer.duplicate().limit(from + length).position(from));
        }
        return (int) crc.getValue();
    }

    /**
     * Writes the broker-assigned fields: base offset and ReceiveTime, then the CRC that covers ReceiveTime.
     * The caller has validated the batch.
     */
    public static void stamp(CRC32C crc, ByteBuffer buffer, int position, long baseOffset, long receiveTimeMs) {
        buffer.putLong(position + BASE_OFFSET_OFFSET, baseOffset);
        buffer.putLong(position + RECEIVE_TIME_OFFSET, receiveTimeMs);
        buffer.putInt(position + CRC_OFFSET, computeCrc(crc, buffer, position, totalSize(buffer, position)));
    }
}
