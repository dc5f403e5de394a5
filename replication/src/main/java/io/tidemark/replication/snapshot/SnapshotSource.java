package io.tidemark.replication.snapshot;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.v1.GroupSnapshot;

import java.nio.ByteBuffer;
import java.util.UUID;

/**
 * Another broker's replica of a partition group, as a replica catching up reads it: its latest snapshot and its
 * partitions' batches. Both calls name the broker, since a copy must read the batches of the replica whose snapshot
 * it installs.
 */
public interface SnapshotSource {
    /**
     * The latest snapshot of the replica of group {@code groupId} on {@code nodeId}, with each partition's log start
     * offset there now.
     *
     * @throws io.tidemark.proto.error.TidemarkException NOT_AVAILABLE when that broker cannot answer or has no
     *                                                   snapshot yet, UNKNOWN_PARTITION when it does not run the group
     */
    GroupSnapshot latestSnapshot(int nodeId, UUID groupId);

    /**
     * Whole batches of the partition on {@code nodeId}, as its log stores them, from the one holding {@code offset}:
     * about {@code maxBytes}, at least that batch. The read is pinned to the topic's id.
     *
     * @throws io.tidemark.proto.error.TidemarkException OFFSET_OUT_OF_RANGE when retention deleted the offset there
     *                                                   meanwhile, NOT_AVAILABLE when that broker cannot answer
     */
    ByteBuffer fetch(int nodeId, TopicPartition partition, UUID topicId, long offset, int maxBytes);
}
