package io.tidemark.replication.snapshot;

import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupPartition;

/**
 * Where a group keeps a hosted partition's log: {@code partitions/TOPIC-PARTITION-TOPICID/} in its state machine
 * directory (and, for a copy under way, in its staged install). The topic's id tells a topic deleted and created
 * again under its name from the old one; its name and partition make the directory easy to find.
 */
public final class PartitionDirectories {
    public static final String PARTITIONS = "partitions";

    private PartitionDirectories() {
    }

    public static String name(GroupPartition partition) {
        return partition.getTopic() + "-" + partition.getPartition() + "-"
                + TopicIds.fromBytes(partition.getTopicId());
    }
}
