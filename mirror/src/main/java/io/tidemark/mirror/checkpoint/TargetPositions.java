package io.tidemark.mirror.checkpoint;

import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.record.OriginPartition;

/** What the {@link CheckpointAgent} asks of the target's partitions ({@link TargetOffsetLookup} reads them). */
public interface TargetPositions {
    /**
     * The first target offset holding a copy of {@code origin} with origin offset at least {@code originOffset}.
     *
     * @param known a target offset that holds such a copy (the copy of the last origin offset the target holds)
     */
    long firstCopyAtOrAbove(TopicPartition tp, OriginPartition origin, long originOffset, long known);

    long logEndOffset(TopicPartition tp);
}
