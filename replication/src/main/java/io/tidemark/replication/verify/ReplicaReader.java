package io.tidemark.replication.verify;

import io.tidemark.proto.v1.DigestPartitionRequest;
import io.tidemark.proto.v1.DigestPartitionResponse;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.ReadPartitionResponse;

import java.util.UUID;

/**
 * The replicas of a partition as {@link ReplicaVerifier} reads them, each named by its broker's node id: digests of
 * their records, and their batches. Both calls throw {@link io.tidemark.proto.error.TidemarkException} with the
 * broker's answer (NOT_AVAILABLE when it cannot be reached).
 */
public interface ReplicaReader {
    DigestPartitionResponse digest(int nodeId, DigestPartitionRequest request);

    /** Whole batches from the one holding {@code offset}, about {@code maxBytes}, with the log's start and end. */
    ReadPartitionResponse read(int nodeId, UUID groupId, GroupPartition partition, long offset, int maxBytes);
}
