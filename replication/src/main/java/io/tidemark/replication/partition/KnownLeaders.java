package io.tidemark.replication.partition;

import io.tidemark.core.partition.PartitionLeader;

import java.util.UUID;

/** Who leads the partition groups of which this broker holds no replica, as the brokers that do hold one tell. */
@FunctionalInterface
public interface KnownLeaders {
    /** The group's leader and the term it leads in, or {@link PartitionLeader#NONE}. */
    PartitionLeader leaderOf(UUID groupId);
}
