package io.tidemark.core.log.segment;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;

import static io.tidemark.proto.record.RecordBatchFormat.*;

/**
 * Rebuilds a segment from its log file after a crash or when its indexes cannot be trusted: reads every
 * batch, checks it fully ({@link RecordBatchValidator}: lengths, CRC, record layout), checks that offsets
 * are contiguous from the segment's base offset (increasing, in a compacted segment) and that ReceiveTime never
 * decreases, and rebuilds the three
 * indexes as it goes. At the first batch that fails, the log file is truncated there and the loss is
 * reported with the file, the position and the reason. A compacted segment that keeps every batch ends where its
 * marker says ({@link CompactionMarker}); one that lost batches ends after the last batch kept, so the loader sees
 * the loss. SendTime windows are not applied: they were checked
 * when the batch was appended, under the configuration of that day.
 */
public final class SegmentRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentRecovery.class);

    private SegmentRecovery() {
    }

    /**
     * @param previousMaxReceiveTimeMs largest ReceiveTime of the segments before this one, or
     *                                 {@link LogSegment#NO_TIME}
     * @param settings                 what the rebuilt indexes are preallocated by
     */
    public static void recover(LogSegment segment, long previousMaxReceiveTimeMs, RecordBatchValidator validator,
                               SegmentSettings settings) throws IOException {
        long fileSize = segment.files().logFileBytes();
        segment.resetIndexes(settings, fileSize);
        try (OpenSegment open = segment.files().acquire()) {
            recover(segment, open, fileSize, previousMaxReceiveTimeMs, validator);
        }
    }

    private static void recover(LogSegment segment, OpenSegment open, long fileSize, long previousMaxReceiveTimeMs,
                                RecordBatchValidator validator) throws IOException {
        int end = (int) Math.min(fileSize, Integer.MAX_VALUE);
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE_BYTES);
        ByteBuffer batch = ByteBuffer.allocate(64 * 1024);
        long expectedOffset = segment.baseOffset();
        long lastReceiveTime = previousMaxReceiveTimeMs;
        int position = 0;
        String reason = null;
        while (position < end && reason == null) {
            int size = open.readHeader(position, header, end);
            if (size < 0) {
                reason = "torn batch: " + (end - position) + " bytes left cannot hold the header or the length "
                        + "it gives";
                break;
            }
            if (batch.capacity() < size) {
                batch = ByteBuffer.allocate(Math.max(size, batch.capacity() * 2));
            }
            batch.clear().limit(size);
            open.readFully(batch, position);
            reason = problem(segment, validator, batch, size, expectedOffset, lastReceiveTime);
            if (reason == null) {
                long receiveTime = receiveTime(batch, 0);
                segment.track(open, position, size, baseOffset(batch, 0), lastOffset(batch, 0), receiveTime,
                        maxSendTime(batch, 0));
                expectedOffset = lastOffset(batch, 0) + 1;
                lastReceiveTime = receiveTime;
                position += size;
            }
        }
        if (position == fileSize) {
            segment.endAsCompacted();
        }
        if (position < fileSize) {
            if (reason == null) {
                reason = "the log file is above the 2 GiB a segment may hold";
            }
            open.truncate(position);
            LOG.warn("Truncated {} at position {}: dropped {} bytes from offset {} on; reason: {}",
                    segment.logFile(), position, fileSize - position, expectedOffset, reason);
        }
    }

    /**
     * Why a batch cannot start at {@code baseOffset} when the previous one ended just before {@code expectedOffset}
     * (or the segment starts there), or null when it can: exactly there, or anywhere above in a compacted segment.
     */
    static String offsetProblem(LogSegment segment, long baseOffset, long expectedOffset) {
        if (baseOffset == expectedOffset || segment.compacted() && baseOffset > expectedOffset) {
            return null;
        }
        return "has offset " + baseOffset + " where " + (segment.compacted() ? "at least " : "") + expectedOffset
                + " was expected";
    }

    private static String problem(LogSegment segment, RecordBatchValidator validator, ByteBuffer batch, int size,
                                  long expectedOffset, long lastReceiveTime) {
        try {
            validator.validate(batch, 0, size, SendTimeWindow.UNBOUNDED);
        } catch (TidemarkException e) {
            return e.getMessage();
        }
        String offsetProblem = offsetProblem(segment, baseOffset(batch, 0), expectedOffset);
        if (offsetProblem != null) {
            return "batch " + offsetProblem;
        }
        long receiveTime = receiveTime(batch, 0);
        if (receiveTime < 0 || receiveTime < lastReceiveTime) {
            return "batch at offset " + baseOffset(batch, 0) + " has ReceiveTime " + receiveTime
                    + ", below the previous batch's " + lastReceiveTime;
        }
        return null;
    }
}
