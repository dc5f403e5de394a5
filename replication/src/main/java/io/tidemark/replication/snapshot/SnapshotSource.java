package io.tidemark.replication.snapshot;

import io.tidemark.core.partition.TopicPartition;

import java.nio.ByteBuffer;

/**
 * Another broker's replica of a partition, as a replica catching up reads it: its latest snapshot and its
 * batches. Both calls name the broker, since a copy must read the batches of the replica whose snapshot it
 * installs.
 */
public interface SnapshotSource {
    /**
     * The latest snapshot of the replica on {@code nodeId}.
     *
     * @throws io.tidemark.proto.error.TidemarkException NOT_AVAILABLE when that broker cannot answer or has no
     *                                                   snapshot yet, UNKNOWN_PARTITION when it holds no replica
     */
    SnapshotDescriptor latestSnapshot(int nodeId, TopicPartition partition);

    /**
     * Whole batches of the replica on {@code nodeId}, as its log stores them, from the one holding {@code offset}:
     * about {@code maxBytes}, at least that batch.
     *
     * @throws io.tidemark.proto.error.TidemarkException OFFSET_OUT_OF_RANGE when retention deleted the offset there
     *                                                   meanwhile, NOT_AVAILABLE when that broker cannot answer
     */
    ByteBuffer fetch(int nodeId, TopicPartition partition, long offset, int maxBytes);
}
