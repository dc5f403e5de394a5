package io.tidemark.mirror.sink;

/** What a {@link PartitionCopier} is doing. */
public enum CopyState {
    /** Asking the target where to continue (at start, after a batch of unknown fate, or a target topic made again). */
    RESYNCHRONISING,
    /** Copying what the source partition gets. */
    COPYING,
    /** Stopped for a {@link StopReason}: nothing more of the partition is copied until the mirror restarts. */
    STOPPED
}
