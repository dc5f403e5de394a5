package io.tidemark.mirror.checkpoint;

import io.tidemark.mirror.sink.CopierStatus;
import io.tidemark.mirror.sink.CopyState;
import io.tidemark.proto.mirror.MirrorStateFormat;

import java.util.Optional;

/**
 * When a partition's status is written to the target ({@link PartitionStatusAgent}), asked every heartbeat interval:
 * <ul>
 *   <li>at once when it was never written by this mirror process, and when the partition stopped (or stopped for
 *       another reason) since the last one written: a stop must be seen soon;</li>
 *   <li>when its state, records behind or last origin offset copied changed, at most once a
 *       {@code checkpoint.interval} ({@code intervalMs}): a partition copying under load changes every time, and
 *       one record per partition and interval is what checkpoints cost too;</li>
 *   <li>otherwise every {@link MirrorStateFormat#CHECKPOINT_REFRESH_MS} ms (1 day), so retention (7 days) never
 *       removes the latest status of a partition that stands still.</li>
 * </ul>
 * Pure: the last written status and the time in, a decision out.
 *
 * @param intervalMs the checkpoint interval
 */
public record StatusSchedule(long intervalMs) {
    /** A status written, and when (the mirror's clock). */
    public record Written(CopierStatus status, long atMs) {
    }

    /** Whether {@code now} is to be written at {@code nowMs}, {@code last} being the last one written. */
    public boolean due(Optional<Written> last, CopierStatus now, long nowMs) {
        if (last.isEmpty()) {
            return true;
        }
        CopierStatus before = last.get().status();
        long sinceMs = nowMs - last.get().atMs();
        if (now.state() == CopyState.STOPPED && !now.stopReason().equals(before.stopReason())) {
            return true;
        }
        boolean changed = now.state() != before.state() || now.recordsBehind() != before.recordsBehind()
                || now.lastOriginOffset() != before.lastOriginOffset();
        return (changed && sinceMs >= intervalMs) || sinceMs >= MirrorStateFormat.CHECKPOINT_REFRESH_MS;
    }
}
