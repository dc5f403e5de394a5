package io.tidemark.mirror.sink;

import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.record.OriginPartition;

import java.util.List;

/**
 * What the mirror's checkpoints need of a partition being copied ({@link PartitionCopier}): where it goes, how a
 * source offset translates to the target, the source's log end for the lag, and the holes in what was copied.
 */
public interface CopiedPartition {
    TopicPartition source();

    TopicPartition target();

    OriginPartition origin();

    /** How a group's committed offset on the source maps to the target, as far as the copier knows. */
    OffsetMap.Translation translate(long committed);

    /** The source partition's log end offset as a listing saw it; the highest seen counts. */
    void sourceLogEndOffset(long offset);

    /**
     * Source offsets [from, to) that the source's retention removed before they were copied: the next record read was
     * past the last one queued + 1.
     */
    record Gap(long fromOffset, long toOffset) {
        public Gap {
            if (fromOffset < 0 || toOffset <= fromOffset) {
                throw new IllegalArgumentException("not a gap: source offsets " + fromOffset + " to " + toOffset);
            }
        }

        public long records() {
            return toOffset - fromOffset;
        }
    }

    /** The gaps found since the last call, oldest first; each is handed out once. */
    List<Gap> takeGaps();
}
