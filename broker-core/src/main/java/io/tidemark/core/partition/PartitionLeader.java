package io.tidemark.core.partition;

import io.tidemark.proto.error.TidemarkException;

/**
 * Who leads a partition, as a broker knows it, and the epoch of that leadership: the Raft term of the partition's
 * group in which the node leads. A Raft term has at most one leader, and terms only grow, so of two reports the one of
 * the higher epoch is the newer; a client keeps a leader it was told of (a NOT_LEADER answer naming it) until its
 * metadata names a leader of that epoch or a later one, and no longer (PartitionInfo.leader_epoch).
 *
 * @param nodeId the leader's node id, or {@link TidemarkException#NO_LEADER}
 * @param epoch  the term of its leadership; when there is no leader, the term in which none is known; 0 when unknown
 */
public record PartitionLeader(int nodeId, long epoch) {
    /** No leader known, of no known epoch. */
    public static final PartitionLeader NONE = new PartitionLeader(TidemarkException.NO_LEADER, 0);
}
