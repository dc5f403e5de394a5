package io.tidemark.replication.cluster;

import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.replication.statemachine.PartitionKey;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A group leader's watch over the partitions sealed in its group to move out: one sealed for longer than
 * {@link #MAX_SEALED_MS} is overdue, and the leader unseals it ({@code GroupChange.unseal}), so it takes batches in
 * this group again. A move seals a partition only once its copy caught up, and finishes a few Raft rounds later; one
 * still sealed after this long is one whose new group cannot finish it (it lost its majority after the seal), and
 * without the unseal the partition would take no batch until that group recovered, perhaps never. Its move goes on
 * when it can, and seals again. A released partition is past return and is not watched.
 *
 * <p>Times are this broker's clock from when it first saw the partition sealed: a partition sealed at least that long
 * ago, whoever led the group meanwhile.
 *
 * <p>Not thread-safe: one per group, used on the group-changes thread.
 */
final class PartitionSeals {
    /** How long a partition may stay sealed before its group's leader unseals it. */
    static final long MAX_SEALED_MS = 15_000;

    private final Map<PartitionKey, Long> sealedSinceMs = new HashMap<>();

    /**
     * The partitions of {@code sealed} (those sealed in the group now) that are overdue at {@code nowMs}; forgets the
     * partitions no longer sealed.
     */
    List<GroupPartition> overdue(Collection<GroupPartition> sealed, long nowMs) {
        Map<PartitionKey, Long> stillSealed = new HashMap<>();
        List<GroupPartition> overdue = new ArrayList<>();
        for (GroupPartition partition : sealed) {
            PartitionKey key = PartitionKey.of(partition);
            long since = sealedSinceMs.getOrDefault(key, nowMs);
            stillSealed.put(key, since);
            if (nowMs - since > MAX_SEALED_MS) {
                overdue.add(partition);
            }
        }
        sealedSinceMs.clear();
        sealedSinceMs.putAll(stillSealed);
        return overdue;
    }
}
