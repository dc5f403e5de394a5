package io.tidemark.core.partition;

import java.util.List;

/**
 * A partition's state for describe and status calls.
 *
 * @param lastReceiveTimeMs -1 when the partition never held a batch
 * @param groupId           the partition group (Raft group) that hosts it, a UUID in text; "" when none
 */
public record PartitionStatus(int leaderNodeId, List<Integer> replicaNodeIds, long logStartOffset, long logEndOffset,
                              long sizeBytes, int segments, long lastReceiveTimeMs, String groupId) {
    public PartitionStatus {
        replicaNodeIds = List.copyOf(replicaNodeIds);
    }
}
