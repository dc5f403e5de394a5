package io.tidemark.replication.statemachine;

import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupPartition;

import java.util.Objects;
import java.util.UUID;

/**
 * A partition as a Raft group's log names it: its topic's id and its number. A topic deleted and created again under
 * its name has another id, so its partitions are other partitions: an entry written for the old one never lands in
 * the new one.
 */
public record PartitionKey(UUID topicId, int partition) {
    public PartitionKey {
        Objects.requireNonNull(topicId, "topicId");
        if (partition < 0) {
            throw new IllegalArgumentException("partition " + partition + " is negative");
        }
    }

    /** The key of a partition a group change names. */
    public static PartitionKey of(GroupPartition partition) {
        return new PartitionKey(TopicIds.fromBytes(partition.getTopicId()), partition.getPartition());
    }

    @Override
    public String toString() {
        return topicId + "/" + partition;
    }
}
