package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;

/**
 * A topic's {@code max.batch.bytes} as a partition's leader applies it before a batch enters its group's Raft log
 * ({@link BatchAdmission}).
 * <ul>
 *   <li>A batch is at most {@code max.batch.bytes}.</li>
 *   <li>A mirrored batch ({@link RecordBatchFormat#ATTRIBUTE_MIRRORED}) may exceed it by the bytes its records'
 *       {@value ProvenanceHeaders#NAME} headers add: its records as the origin held them are held to the limit, so a
 *       source record the source's topic took is not refused as a copy for the ~40 bytes of provenance (the target
 *       topic gets the source's overrides). The mirror keeps batches of several records within the limit with their
 *       provenance, so only a lone large record uses the allowance.</li>
 *   <li>Nothing may exceed what the partition can carry ({@code largestBatchBytes}: what one Raft entry holds, which
 *       topic creation already holds {@code max.batch.bytes} to). A mirrored batch that the allowance would take past
 *       it is refused naming both limits.</li>
 * </ul>
 * Before a batch is read ({@link #checkSize}) only its size is known; a mirrored batch's allowance is checked once
 * {@code MirroredBatchScanner} has counted its provenance bytes ({@link #checkMirrored}).
 *
 * <p>Stateless.
 */
public final class BatchSizeLimit {
    private BatchSizeLimit() {
    }

    /**
     * What the size alone decides: a batch of {@code size} bytes at {@code position} above max.batch.bytes is refused
     * unless it is mirrored and within {@code largestBatchBytes}.
     *
     * @throws TidemarkException RECORD_TOO_LARGE naming the size and the limit
     */
    public static void checkSize(ByteBuffer batch, int position, int size, int maxBatchBytes, int largestBatchBytes) {
        if (size <= maxBatchBytes) {
            return;
        }
        // max.batch.bytes is at least a batch header, so a larger batch has one to read the attributes from.
        if (!RecordBatchFormat.mirrored(batch, position)) {
            throw new TidemarkException(ErrorCode.RECORD_TOO_LARGE, "batch of " + size + " bytes is above "
                    + "max.batch.bytes " + maxBatchBytes + " of this topic");
        }
        if (size > largestBatchBytes) {
            throw new TidemarkException(ErrorCode.RECORD_TOO_LARGE, "mirrored batch of " + size + " bytes is above "
                    + largestBatchBytes + " bytes, the largest batch a Raft entry holds on this broker; "
                    + "max.batch.bytes " + maxBatchBytes + " of this topic allows a mirrored batch its "
                    + ProvenanceHeaders.NAME + " headers on top, up to that");
        }
    }

    /**
     * A mirrored batch of {@code size} bytes, {@code provenanceBytes} of which its provenance headers add: without
     * them it must be within max.batch.bytes.
     *
     * @throws TidemarkException RECORD_TOO_LARGE naming the size, the allowance and the limit
     */
    public static void checkMirrored(int size, int provenanceBytes, int maxBatchBytes) {
        if (size - provenanceBytes > maxBatchBytes) {
            throw new TidemarkException(ErrorCode.RECORD_TOO_LARGE, "mirrored batch of " + size + " bytes is above "
                    + "max.batch.bytes " + maxBatchBytes + " of this topic plus the " + provenanceBytes
                    + " bytes of its " + ProvenanceHeaders.NAME + " headers ("
                    + ((long) maxBatchBytes + provenanceBytes) + " bytes): its records take "
                    + (size - provenanceBytes) + " bytes as the origin held them");
        }
    }
}
