package io.tidemark.core.log;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.MirroredBatchScanner;
import io.tidemark.proto.record.MirroredBatchScanner.OriginRange;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;

/**
 * What a partition's leader decides about a produced batch, from its topic's config, before the batch is appended:
 * the decisions that replicas must not make again when they apply it, since each replica takes a topic's config
 * changes (and may have other defaults) at its own moment, and two replicas that decided differently would give the
 * same offset to different records. Replicas then append what the leader admitted ({@link PartitionLog#append}),
 * which checks only what the log itself decides (ReceiveTime order, producer sequences, origin offsets).
 * <ol>
 *   <li>{@link #admit}, before the batch is submitted: it is exactly one well-formed batch (layout, CRC, every
 *       record; {@link RecordBatchValidator}), within {@code max.batch.bytes} ({@link BatchSizeLimit}: a mirrored
 *       batch may exceed it by its provenance headers), and a mirrored batch's records' SendTimes are within the
 *       topic's window around their origin ReceiveTime ({@link MirroredBatchScanner}). It returns the batch's
 *       smallest and largest SendTime.</li>
 *   <li>{@link #checkSendTimes}, once the batch's ReceiveTime is stamped: a plain batch's SendTimes are within the
 *       window around it. Two comparisons with the facts {@link #admit} kept; the records are read again only to name
 *       the one refused.</li>
 * </ol>
 *
 * <p>Not thread-safe (it reuses a validator and a scanner): one per thread.
 */
public final class BatchAdmission {
    private final RecordBatchValidator validator = new RecordBatchValidator();
    private final MirroredBatchScanner scanner = new MirroredBatchScanner();

    /**
     * A batch {@link #admit} accepted.
     *
     * @param mirrored      its SendTimes are held to no window here: a mirrored batch's were held to the window around
     *                      their origin ReceiveTimes already, a transaction marker's is when it was decided
     * @param minSendTimeMs the smallest SendTime of its records
     * @param maxSendTimeMs the largest (its header's Max SendTime)
     */
    public record Admitted(boolean mirrored, long minSendTimeMs, long maxSendTimeMs) {
    }

    /**
     * Checks the batch between {@code batch}'s position and limit (left unchanged).
     *
     * @param largestBatchBytes what the partition can carry at most: what one Raft entry holds
     * @throws TidemarkException RECORD_TOO_LARGE, CORRUPT_BATCH, or INVALID_TIMESTAMP for a mirrored record, saying
     *                           what is allowed
     */
    public Admitted admit(ByteBuffer batch, TopicConfig config, int largestBatchBytes) {
        int position = batch.position();
        int size = batch.remaining();
        BatchSizeLimit.checkSize(batch, position, size, config.maxBatchBytes(), largestBatchBytes);
        checkOneBatch(size, validator.validate(batch, position, size, SendTimeWindow.UNBOUNDED));
        boolean mirrored = RecordBatchFormat.mirrored(batch, position);
        if (mirrored) {
            OriginRange origin = scanner.scan(batch, position, window(config, 0));
            BatchSizeLimit.checkMirrored(size, origin.provenanceBytes(), config.maxBatchBytes());
        }
        return new Admitted(mirrored || RecordBatchFormat.control(batch, position), validator.minSendTimeMs(),
                RecordBatchFormat.maxSendTime(batch, position));
    }

    /**
     * Whether the SendTimes of an admitted batch are within the topic's window around {@code receiveTimeMs}; a mirrored
     * batch's are (they were held to their origin's).
     */
    public static boolean sendTimesAllowed(Admitted admitted, TopicConfig config, long receiveTimeMs) {
        return admitted.mirrored() || window(config, receiveTimeMs).admits(admitted.minSendTimeMs(),
                admitted.maxSendTimeMs());
    }

    /**
     * Checks the SendTimes of an admitted batch against the topic's window around {@code receiveTimeMs}.
     *
     * @throws TidemarkException INVALID_TIMESTAMP naming the first record outside the window, its SendTime and the
     *                           allowed range
     */
    public void checkSendTimes(ByteBuffer batch, Admitted admitted, TopicConfig config, long receiveTimeMs) {
        if (sendTimesAllowed(admitted, config, receiveTimeMs)) {
            return;
        }
        validator.validate(batch, batch.position(), batch.remaining(), window(config, receiveTimeMs));
        throw new IllegalStateException("SendTimes [" + admitted.minSendTimeMs() + ", " + admitted.maxSendTimeMs()
                + "] fall outside the window around ReceiveTime " + receiveTimeMs + " but no record of the batch does");
    }

    private static SendTimeWindow window(TopicConfig config, long receiveTimeMs) {
        return SendTimeWindow.around(receiveTimeMs, config.sendTimeAfterMaxMs(), config.sendTimeBeforeMaxMs());
    }

    static void checkOneBatch(int size, int validated) {
        if (validated != size) {
            throw new TidemarkException(ErrorCode.CORRUPT_BATCH, (size - validated) + " bytes follow the "
                    + validated + "-byte batch; an append takes exactly one batch");
        }
    }
}
