package io.tidemark.mirror.checkpoint;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupPartitionLag;

import java.util.List;
import java.util.Optional;

/**
 * What the {@link CheckpointAgent} reads of the source cluster: its consumer groups, their committed offsets, and
 * its partitions. {@link #over} reads a running cluster; tests script it. Failures are the cluster's
 * TidemarkExceptions.
 */
public interface SourceGroups {
    List<String> groups();

    /** The group's committed offsets, one per partition it committed; empty when the source does not know it. */
    List<GroupPartitionLag> committed(String group);

    long logEndOffset(TopicPartition tp);

    /** The record at {@code offset}, while the source has it. */
    Optional<ConsumerRecord> recordAt(TopicPartition tp, long offset);

    static SourceGroups over(TidemarkAdmin admin) {
        return new SourceGroups() {
            @Override
            public List<String> groups() {
                return admin.listGroups();
            }

            @Override
            public List<GroupPartitionLag> committed(String group) {
                return admin.committedPartitions(group);
            }

            @Override
            public long logEndOffset(TopicPartition tp) {
                return admin.listOffsets(tp, OffsetSpec.latest()).logEndOffset();
            }

            @Override
            public Optional<ConsumerRecord> recordAt(TopicPartition tp, long offset) {
                try {
                    return admin.read(tp, offset, 1).stream().filter(r -> r.offset() == offset).findFirst();
                } catch (TidemarkException e) {
                    if (e.code() == ErrorCode.OFFSET_OUT_OF_RANGE) {
                        return Optional.empty();
                    }
                    throw e;
                }
            }
        };
    }
}
