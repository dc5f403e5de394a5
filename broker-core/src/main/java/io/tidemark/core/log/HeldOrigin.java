package io.tidemark.core.log;

/**
 * What a partition holds of an origin partition through mirrored batches: the last origin offset, and the offset
 * of that record in this partition.
 */
public record HeldOrigin(long originOffset, long offset) {
    public HeldOrigin {
        if (originOffset < 0 || offset < 0) {
            throw new IllegalArgumentException("held origin offset " + originOffset + " at offset " + offset
                    + ": neither may be negative");
        }
    }
}
