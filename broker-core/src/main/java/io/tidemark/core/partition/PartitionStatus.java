package io.tidemark.core.partition;

import java.util.List;

/**
 * A partition's state for describe and status calls.
 *
 * @param lastReceiveTimeMs -1 when the partition never held a batch
 */
public record PartitionStatus(int leaderNodeId, List<Integer> replicaNodeIds, long logStartOffset, long logEndOffset,
                              long sizeBytes, int segments, long lastReceiveTimeMs) {
    public PartitionStatus {
        replicaNodeIds = List.copyOf(replicaNodeIds);
    }
}
