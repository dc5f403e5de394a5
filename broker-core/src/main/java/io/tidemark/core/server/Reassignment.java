package io.tidemark.core.server;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;

import java.util.List;

/** Moves partitions between brokers, keeping their data. */
public interface Reassignment {
    /**
     * Gives the partition the replicas {@code replicaNodeIds} (the preferred leader first) and waits until the move
     * is complete.
     *
     * @return the partition's replicas afterwards
     * @throws TidemarkException INVALID_REQUEST or INVALID_REPLICATION_FACTOR for a replica list that is not
     *                           allowed, NOT_AVAILABLE when the move did not complete in time (asking for the same
     *                           replicas again finishes it)
     */
    List<Integer> reassign(TopicPartition partition, List<Integer> replicaNodeIds, long timeoutMs);

}
