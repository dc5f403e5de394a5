package io.tidemark.replication.snapshot;

import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.PartitionSnapshot;
import io.tidemark.proto.v1.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.time.InstantSource;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * Copies the batches of a partition of a group snapshot, {@code [logStartOffset, logEndOffset)}, from another
 * broker's replica into an empty log that starts at {@code logStartOffset}, unchanged: each batch keeps its base offset, ReceiveTime and
 * CRC ({@link PartitionLog#appendStamped}, which also checks the CRC and that offsets follow on, across the gaps of a
 * compacted source). Batches at or after the snapshot's log end are not copied: Raft gives them to the replica after
 * the install; when compaction removed the records just below that end, the copy's end is moved up to it.
 *
 * <p>Progress goes to the log at every tenth of the offsets copied (batches, bytes, offset reached), and a
 * summary at the end.
 */
final class SegmentCopy {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentCopy.class);
    private static final int PROGRESS_STEPS = 10;

    /** What a copy moved. */
    record Copied(long batches, long bytes, long elapsedMs) {
    }

    private SegmentCopy() {
    }

    /**
     * @param name       names the replica in the log lines
     * @param chunkBytes how much one fetch asks for
     * @param cancelled  checked between fetches: the replica is closing
     * @throws IOException when the source's batches do not add up to the snapshot, or the copy was cancelled
     */
    static Copied run(String name, SnapshotSource source, int nodeId, UUID groupId, PartitionSnapshot snapshot,
                      PartitionLog into, int chunkBytes, BooleanSupplier cancelled, InstantSource clock)
            throws IOException {
        long startMs = clock.millis();
        long start = snapshot.getLogStartOffset();
        long end = snapshot.getLogEndOffset();
        TopicPartition partition = new TopicPartition(snapshot.getPartition().getTopic(),
                snapshot.getPartition().getPartition());
        long batches = 0;
        long bytes = 0;
        int stepsLogged = 0;
        while (into.logEndOffset() < end) {
            if (cancelled.getAsBoolean()) {
                throw new InterruptedIOException(name + ": the copy of " + partition + " was cancelled at offset "
                        + into.logEndOffset() + " of [" + start + ", " + end + ")");
            }
            long from = into.logEndOffset();
            ByteBuffer chunk = source.read(nodeId, groupId, snapshot.getPartition(), from, chunkBytes).getBatches()
                    .asReadOnlyByteBuffer();
            if (!chunk.hasRemaining()) {
                throw new IOException("node " + nodeId + " returned no batch of " + partition + " at offset " + from
                        + ", below its snapshot's log end offset " + end);
            }
            for (int position = chunk.position(); position < chunk.limit(); ) {
                int size = wholeBatchAt(chunk, position, nodeId);
                if (RecordBatchFormat.baseOffset(chunk, position) >= end) {
                    into.skipTo(end);
                    break;
                }
                into.appendStamped(chunk.duplicate().position(position).limit(position + size));
                batches++;
                bytes += size;
                position += size;
            }
            long copied = into.logEndOffset() - start;
            int steps = end == start ? PROGRESS_STEPS : (int) (copied * PROGRESS_STEPS / (end - start));
            if (steps > stepsLogged) {
                stepsLogged = steps;
                LOG.info("{}: copied {}% of {} from node {}: {} batches, {} bytes, up to offset {} of {}", name,
                        Math.min(100, steps * 100 / PROGRESS_STEPS), partition, nodeId, batches, bytes,
                        into.logEndOffset(), end);
            }
        }
        if (into.logEndOffset() != end) {
            throw new IOException("the batches of " + partition + " from node " + nodeId + " end at offset "
                    + into.logEndOffset() + ", past its snapshot's log end offset " + end
                    + ", which must fall between two batches");
        }
        return new Copied(batches, bytes, clock.millis() - startMs);
    }

    /** The size of the batch at {@code position}, which must lie whole in the chunk. */
    private static int wholeBatchAt(ByteBuffer chunk, int position, int nodeId) {
        int left = chunk.limit() - position;
        int size = left < RecordBatchFormat.LOG_OVERHEAD_BYTES ? -1 : RecordBatchFormat.totalSize(chunk, position);
        if (size < RecordBatchFormat.HEADER_SIZE_BYTES || size > left) {
            throw new TidemarkException(ErrorCode.CORRUPT_BATCH, "node " + nodeId + " sent a batch torn at "
                    + "position " + position + " of its answer: " + left + " bytes left, the batch says "
                    + size);
        }
        return size;
    }
}
