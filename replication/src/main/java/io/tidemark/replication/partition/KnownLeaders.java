package io.tidemark.replication.partition;

import java.util.UUID;

/** Who leads the partition groups of which this broker holds no replica, as the brokers that do hold one tell. */
@FunctionalInterface
public interface KnownLeaders {
    /** The node id of the group's leader, or {@link io.tidemark.proto.error.TidemarkException#NO_LEADER}. */
    int leaderOf(UUID groupId);
}
