package io.tidemark.mirror.failover;

import io.tidemark.proto.v1.MirrorCheckpoint;

import java.util.Optional;

/**
 * How fast a consumer group committed on a source partition before a checkpoint: the records its offset moved between
 * the checkpoint's previous reading and the checkpoint's own (mirror.proto, {@code previous_source_offset}), over the
 * time between the two commits (source clock). Exact mode estimates the records the group committed after the
 * checkpoint from it ({@link #recordsIn}).
 *
 * @param records the records the group's committed offset moved; 0 when it committed the same offset again
 * @param overMs  the time between the two commits; above 0 when {@code records} is
 */
public record CommitRate(long records, long overMs) {
    public CommitRate {
        if (records < 0 || overMs < 0 || (records > 0 && overMs == 0)) {
            throw new IllegalArgumentException("not a commit rate: " + records + " records over " + overMs + " ms");
        }
    }

    /**
     * The group's rate before {@code checkpoint}; empty when it is unknown: the checkpoint has no previous reading (the
     * first after the mirror started, or written before the field existed), the group's offset was moved back, or the
     * source's clock did not advance between two commits that moved it.
     */
    static Optional<CommitRate> of(MirrorCheckpoint checkpoint) {
        if (!checkpoint.getPreviousKnown()) {
            return Optional.empty();
        }
        long records = checkpoint.getSourceOffset() - checkpoint.getPreviousSourceOffset();
        long overMs = checkpoint.getSourceCommitTimeMs() - checkpoint.getPreviousSourceCommitTimeMs();
        if (records == 0) {
            return Optional.of(new CommitRate(0, Math.max(0, overMs)));
        }
        return records > 0 && overMs > 0 ? Optional.of(new CommitRate(records, overMs)) : Optional.empty();
    }

    /** Records a second. */
    public double perSecond() {
        return records == 0 ? 0 : records * 1000.0 / overMs;
    }

    /** The records committed in {@code ms} at this rate, rounded to the nearest (half up); 0 for no time. */
    public long recordsIn(long ms) {
        return records == 0 || ms <= 0 ? 0 : Math.round((double) records * ms / overMs);
    }
}
