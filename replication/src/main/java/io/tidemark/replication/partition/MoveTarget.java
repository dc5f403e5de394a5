package io.tidemark.replication.partition;

import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupChangeReply;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import io.tidemark.replication.statemachine.PartitionHost;
import io.tidemark.replication.statemachine.PartitionKey;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/** What a partition move needs of the group it moves a partition into ({@link PartitionGroup}, or a test's). */
public interface MoveTarget {
    /** Whether this broker's replica leads the group: the move runs only there. */
    boolean leads();

    /** The partitions this replica hosts. */
    PartitionHost host();

    /** Submits copied batches of a partition (whole, as the old group stores them); completes with the outcome. */
    CompletableFuture<GroupEntryFormat.CopyOutcome> submitCopy(PartitionKey partition, long logStartOffset,
                                                               ByteBuffer batches);

    /** Submits a change of the partitions the group hosts; completes with the group's answer. */
    CompletableFuture<GroupChangeReply> submitChange(GroupChange change);
}
