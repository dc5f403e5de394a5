package io.tidemark.replication.partition;

import io.tidemark.core.partition.TopicPartition;

/** Who leads the partitions of which this broker holds no replica, as the brokers that do hold one tell. */
@FunctionalInterface
public interface KnownLeaders {
    /** The node id of the partition's leader, or {@link io.tidemark.proto.error.TidemarkException#NO_LEADER}. */
    int leaderOf(TopicPartition partition);
}
