package io.tidemark.replication.snapshot;

import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.ReadPartitionResponse;

import java.util.UUID;

/**
 * Another broker's replica of a partition group, as a replica catching up (or a partition moving between groups)
 * reads it: its latest snapshot and its partitions' batches. Both calls name the broker, since a copy must read the
 * batches of the replica whose snapshot it installs.
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
     * Whole batches of a partition of the group's replica on {@code nodeId}, as its log stores them, from the one
     * holding {@code offset} (from the log start when retention removed it): about {@code maxBytes}, at least that
     * batch; with the log's start and end offsets and the partition's state there.
     *
     * @throws io.tidemark.proto.error.TidemarkException OFFSET_OUT_OF_RANGE when the offset is past the log's end,
     *                                                   UNKNOWN_PARTITION when that replica does not host the
     *                                                   partition, NOT_AVAILABLE when that broker cannot answer
     */
    ReadPartitionResponse read(int nodeId, UUID groupId, GroupPartition partition, long offset, int maxBytes);
}
