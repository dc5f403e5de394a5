package io.tidemark.core.server;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.List;

/** Moves the leadership of partitions, where there is more than one replica to lead. */
public interface Leadership {
    /**
     * A transfer done.
     *
     * @param leaderNodeId the new leader's node id
     * @param moved        every partition whose leadership moved: those that share the asked one's leader (its
     *                     partition group), it among them, sorted by topic and partition
     */
    record Transferred(int leaderNodeId, List<TopicPartition> moved) {
        public Transferred {
            moved = List.copyOf(moved);
        }
    }

    /**
     * Moves the partition's leadership to the replica on {@code toNodeId} and waits for it.
     *
     * @throws TidemarkException INVALID_REQUEST when that node holds no replica, NOT_AVAILABLE when it did not move
     *                           in time
     */
    Transferred transfer(TopicPartition partition, int toNodeId, long timeoutMs);

    /** A single broker leads every partition it has: there is nowhere to move leadership to. */
    Leadership SINGLE_NODE = (partition, toNodeId, timeoutMs) -> {
        throw new TidemarkException(ErrorCode.INVALID_REQUEST, "this broker runs alone and leads every partition; "
                + "leadership transfer needs a cluster (tidemark broker --cluster, tidemark local up)");
    };
}
