package io.tidemark.core.group.membership;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.v1.TopicPartitionRef;

import java.util.Collection;
import java.util.List;

/** Partitions as the group API and a stored group state name them ({@code TopicPartitionRef}). */
public final class PartitionRefs {
    private PartitionRefs() {
    }

    /** In topic and partition order. */
    public static List<TopicPartitionRef> refs(Collection<TopicPartition> partitions) {
        return partitions.stream().sorted(Assignor.PARTITION_ORDER).map(tp -> TopicPartitionRef.newBuilder()
                .setTopic(tp.topic()).setPartition(tp.partition()).build()).toList();
    }

    public static List<TopicPartition> partitions(List<TopicPartitionRef> refs) {
        return refs.stream().map(ref -> new TopicPartition(ref.getTopic(), ref.getPartition())).toList();
    }
}
