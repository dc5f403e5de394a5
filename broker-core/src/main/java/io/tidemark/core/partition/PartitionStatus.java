package io.tidemark.core.partition;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A partition's state for describe and status calls.
 *
 * @param leader            who leads it, and in which epoch
 * @param lastReceiveTimeMs -1 when the partition never held a batch
 * @param groupId           the partition group (Raft group) that hosts it, a UUID in text; "" when none
 * @param overridesInUse    the topic's config overrides as this broker's replica of the partition uses them; empty
 *                          when this broker holds no replica of it (or its replica has not started)
 */
public record PartitionStatus(PartitionLeader leader, List<Integer> replicaNodeIds, long logStartOffset, long logEndOffset,
                              long sizeBytes, int segments, long lastReceiveTimeMs, String groupId,
                              Optional<Map<String, String>> overridesInUse) {
    public PartitionStatus {
        replicaNodeIds = List.copyOf(replicaNodeIds);
        overridesInUse = overridesInUse.map(Map::copyOf);
    }

    /** The leader's node id, or {@link io.tidemark.proto.error.TidemarkException#NO_LEADER}. */
    public int leaderNodeId() {
        return leader.nodeId();
    }
}
