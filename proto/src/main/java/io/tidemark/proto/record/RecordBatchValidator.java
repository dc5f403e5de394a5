package io.tidemark.proto.record;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.zip.CRC32C;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * Checks that bytes are one well-formed batch of {@link RecordBatchFormat}: lengths, magic, CRC, attributes,
 * an idempotent producer's id, epoch and base sequence not negative, every record's layout, offset deltas 0..n-1,
 * First and Max SendTime agreeing with the records, and every SendTime inside a {@link SendTimeWindow}. Nothing is
 * appended to a log before this passed, so bad input never damages a log; recovery uses the same checks to find where
 * a torn tail begins.
 *
 * <p>Walks the records once with a reusable cursor and allocates nothing unless it throws.
 * Not thread-safe: each log owns one and uses it under its append lock.
 */
public final class RecordBatchValidator {
    private final CRC32C crc = new CRC32C();
    private final RecordCursor cursor = new RecordCursor();
    private long minSendTimeMs;

    /**
     * Validates the batch at {@code position} that must lie within {@code available} bytes.
     *
     * @return the batch's total size in bytes
     * @throws TidemarkException {@link ErrorCode#CORRUPT_BATCH} naming the broken part, or
     *         {@link ErrorCode#INVALID_TIMESTAMP} naming the record, its SendTime and the allowed range
     */
    public int validate(ByteBuffer buffer, int position, int available, SendTimeWindow window) {
        minSendTimeMs = Long.MAX_VALUE;
        int totalSize = checkEnvelope(buffer, position, available);
        if (magic(buffer, position) != MAGIC_V1) {
            throw corrupt("unsupported magic " + magic(buffer, position) + "; this broker reads version " + MAGIC_V1);
        }
        int stored = storedCrc(buffer, position);
        int computed = computeCrc(crc, buffer, position, totalSize);
        if (stored != computed) {
            throw corrupt(String.format("CRC32C mismatch: stored 0x%08x, computed 0x%08x over %d bytes", stored,
                    computed, totalSize - CRC_COVERED_FROM));
        }
        checkAttributes(buffer, position, totalSize);
        checkProducer(buffer, position);
        int count = recordCount(buffer, position);
        if (count < 1) {
            throw corrupt("record count " + count + " is below 1");
        }
        long first = firstSendTime(buffer, position);
        if (first < 0) {
            throw corrupt("First SendTime " + first + " is negative; SendTime is ms since the epoch");
        }
        checkRecords(buffer, position, totalSize, count, first, window);
        return totalSize;
    }

    /**
     * The smallest SendTime of the records of the batch the last {@link #validate} accepted (the header holds the
     * largest, {@link RecordBatchFormat#maxSendTime}): with it a SendTime window is checked without reading the
     * records again.
     */
    public long minSendTimeMs() {
        return minSendTimeMs;
    }

    private static void checkAttributes(ByteBuffer buffer, int position, int totalSize) {
        byte attributes = attributes(buffer, position);
        if ((attributes & ~KNOWN_ATTRIBUTES) != 0) {
            throw corrupt("attributes " + attributes + " are not supported; version 1 batches carry attributes 0, "
                    + ATTRIBUTE_MIRRORED + " for a mirrored batch, " + ATTRIBUTE_TRANSACTIONAL + " for a transactional "
                    + "one or " + (ATTRIBUTE_TRANSACTIONAL | ATTRIBUTE_CONTROL) + " for a transaction marker "
                    + "(no compression)");
        }
        if (!transactional(buffer, position)) {
            if (control(buffer, position)) {
                throw corrupt("a control batch (attributes " + attributes + ") must also be transactional ("
                        + ATTRIBUTE_TRANSACTIONAL + ")");
            }
            return;
        }
        if (mirrored(buffer, position)) {
            throw corrupt("a mirrored batch cannot be transactional: a mirror copies committed records only");
        }
        if (producerId(buffer, position) < 0 || producerEpoch(buffer, position) < 0) {
            throw corrupt("a transactional batch needs a producer id and epoch, not " + producerId(buffer, position)
                    + " and " + producerEpoch(buffer, position));
        }
        if (control(buffer, position)) {
            TransactionMarker.check(buffer, position, totalSize);
        }
    }

    /**
     * A data batch that names a producer (an id other than {@value RecordBatchFormat#NO_PRODUCER_ID}) is an idempotent
     * producer's: its id, epoch and base sequence are not negative. A partition records the batch's sequences for its
     * producer after writing it, and a negative one failed there: the batch stayed in the segment without its offsets
     * counted, and the log did not open again. A marker's Base Sequence is {@value RecordBatchFormat#NO_SEQUENCE}
     * ({@link TransactionMarker#check}).
     */
    private static void checkProducer(ByteBuffer buffer, int position) {
        long producerId = producerId(buffer, position);
        if (producerId == NO_PRODUCER_ID || control(buffer, position)) {
            return;
        }
        if (producerId < 0 || producerEpoch(buffer, position) < 0 || baseSequence(buffer, position) < 0) {
            throw corrupt("a batch of producer " + producerId + " needs a producer id, epoch and base sequence that "
                    + "are not negative, not " + producerId + ", " + producerEpoch(buffer, position) + " and "
                    + baseSequence(buffer, position) + " (a batch of no idempotent producer has producer id "
                    + NO_PRODUCER_ID + ")");
        }
    }

    private int checkEnvelope(ByteBuffer buffer, int position, int available) {
        if (available < HEADER_SIZE_BYTES) {
            throw corrupt(available + " bytes cannot hold a batch header of " + HEADER_SIZE_BYTES + " bytes");
        }
        int batchLength = buffer.getInt(position + BATCH_LENGTH_OFFSET);
        if (batchLength < HEADER_SIZE_BYTES - LOG_OVERHEAD_BYTES) {
            throw corrupt("batch length " + batchLength + " is below the header's "
                    + (HEADER_SIZE_BYTES - LOG_OVERHEAD_BYTES) + " bytes");
        }
        if (batchLength > available - LOG_OVERHEAD_BYTES) {
            throw corrupt("batch length " + batchLength + " runs past the " + (available - LOG_OVERHEAD_BYTES)
                    + " bytes that follow it");
        }
        return batchLength + LOG_OVERHEAD_BYTES;
    }

    private void checkRecords(ByteBuffer buffer, int position, int totalSize, int count, long first,
                              SendTimeWindow window) {
        int batchEnd = position + totalSize;
        long max = Long.MIN_VALUE;
        int next = position + RECORDS_OFFSET;
        int record = 0;
        try {
            for (; record < count; record++) {
                next = cursor.openRecord(buffer, next, batchEnd);
                int delta = cursor.readUnsignedInt();
                if (delta != record) {
                    throw new RecordFormatException("offset delta " + delta + " where " + record + " was expected");
                }
                long sendTime = first + cursor.readSignedLong();
                if (sendTime < 0) {
                    throw new RecordFormatException("SendTime " + sendTime + " is negative");
                }
                if (record == 0 && sendTime != first) {
                    throw new RecordFormatException("SendTime " + sendTime + " differs from First SendTime " + first);
                }
                window.check(record, sendTime);
                max = Math.max(max, sendTime);
                minSendTimeMs = Math.min(minSendTimeMs, sendTime);
                cursor.skipNullableBytes("key");
                cursor.skipNullableBytes("value");
                int headers = cursor.readUnsignedInt();
                for (int h = 0; h < headers; h++) {
                    cursor.skipBytes("header name");
                    cursor.skipBytes("header value");
                }
                if (cursor.position() != cursor.limit()) {
                    throw new RecordFormatException((cursor.limit() - cursor.position())
                            + " bytes left over after the last header");
                }
            }
        } catch (RecordFormatException e) {
            throw corrupt("record " + record + " of " + count + ": " + e.getMessage());
        }
        if (next != batchEnd) {
            throw corrupt((batchEnd - next) + " bytes follow the last of " + count + " records");
        }
        if (max != maxSendTime(buffer, position)) {
            throw corrupt("Max SendTime " + maxSendTime(buffer, position) + " differs from the records' largest "
                    + max);
        }
    }

    static TidemarkException corrupt(String detail) {
        return new TidemarkException(ErrorCode.CORRUPT_BATCH, "corrupt record batch: " + detail);
    }

    /**
     * The SendTimes a batch may carry: at most {@code afterMaxMs} after its ReceiveTime and at most
     * {@code beforeMaxMs} before it; a negative limit means unlimited. A mirrored batch's records are held to the same
     * limits around their origin ReceiveTime instead ({@link #checkAgainstOrigin}). The error message is only built
     * when a record falls outside, so a check costs two comparisons.
     */
    public record SendTimeWindow(long receiveTimeMs, long afterMaxMs, long beforeMaxMs) {
        /** Any SendTime (recovery re-checks data that was accepted under the configuration of its day). */
        public static final SendTimeWindow UNBOUNDED = new SendTimeWindow(0, -1, -1);

        public static SendTimeWindow around(long receiveTimeMs, long afterMaxMs, long beforeMaxMs) {
            return new SendTimeWindow(receiveTimeMs, afterMaxMs, beforeMaxMs);
        }

        void check(int record, long sendTimeMs) {
            check(record, sendTimeMs, receiveTimeMs, "ReceiveTime");
        }

        /** Whether every SendTime from {@code minSendTimeMs} to {@code maxSendTimeMs} is allowed: two comparisons. */
        public boolean admits(long minSendTimeMs, long maxSendTimeMs) {
            return !(afterMaxMs >= 0 && maxSendTimeMs - receiveTimeMs > afterMaxMs)
                    && !(beforeMaxMs >= 0 && receiveTimeMs - minSendTimeMs > beforeMaxMs);
        }

        /**
         * Checks a mirrored record's SendTime against its origin ReceiveTime (its provenance) rather than the batch's:
         * the source applied its window when it took the record, so a copy of a day-old backlog is held to the time
         * the record was taken, not to when the mirror got to it.
         */
        void checkAgainstOrigin(int record, long sendTimeMs, long originReceiveTimeMs) {
            check(record, sendTimeMs, originReceiveTimeMs, "origin ReceiveTime");
        }

        private void check(int record, long sendTimeMs, long fromMs, String from) {
            if ((afterMaxMs >= 0 && sendTimeMs - fromMs > afterMaxMs)
                    || (beforeMaxMs >= 0 && fromMs - sendTimeMs > beforeMaxMs)) {
                throw new TidemarkException(ErrorCode.INVALID_TIMESTAMP, "record " + record
                        + " of the batch has SendTime " + sendTimeMs + " (" + Instant.ofEpochMilli(sendTimeMs)
                        + "), outside the allowed range [" + minMs(fromMs) + ", " + maxMs(fromMs) + "] = " + from + " "
                        + fromMs + " - send.time.before.max.ms "
                        + (beforeMaxMs < 0 ? "(unlimited)" : beforeMaxMs) + " .. + send.time.after.max.ms "
                        + (afterMaxMs < 0 ? "(unlimited)" : afterMaxMs) + "; the whole batch was rejected");
            }
        }

        private long minMs(long fromMs) {
            return beforeMaxMs < 0 ? 0 : Math.max(0, fromMs - beforeMaxMs);
        }

        private long maxMs(long fromMs) {
            return afterMaxMs < 0 || afterMaxMs > Long.MAX_VALUE - fromMs ? Long.MAX_VALUE : fromMs + afterMaxMs;
        }
    }
}
