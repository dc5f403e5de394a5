package io.tidemark.replication.cluster;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.server.Reassignment;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.PartitionAssignment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Moves a partition to another set of replicas, keeping its data, offsets and ReceiveTimes. A partition's replicas
 * are its partition group's, so a move is a move into a group of the new replicas: any broker can ask for one (it
 * answers the {@code ReassignPartition} RPC), and the new group's leader carries it out.
 * <ol>
 *   <li>Check the replica list: 1 to n brokers of the cluster, none twice; and that no move of the partition to
 *       other replicas is under way.</li>
 *   <li><b>Begin</b>: the metadata group records the list as the partition's target and puts it into a group of that
 *       list ({@code begin_reassignment}; a group is created when the list has none in the partition's slot). The
 *       target brokers start that group if it is new.</li>
 *   <li>The new group's leader imports the partition, copies it, seals it in its old group, activates it and completes
 *       the move in the metadata ({@link PartitionMove}). The brokers then serve it from the new group, and the old
 *       group's leader removes it there (its replicas delete the old group when it hosts nothing more).</li>
 * </ol>
 * This class submits the begin and waits for the completion. Since the new group's leader carries the move out, a
 * move completes after the crash of any broker, this one included; the metadata keeps the target until then (and
 * refuses a move elsewhere meanwhile), and asking for the same replicas again waits for it. Until the move completes,
 * clients are served by the old group.
 *
 * <p>Thread-safe.
 */
final class PartitionReassignment implements Reassignment {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionReassignment.class);

    private final ClusterMembers members;
    private final MetadataGroup metadata;
    private final int groupsPerReplicaSet;

    /** @param groupsPerReplicaSet how many groups a replica list spreads over (raft.groups.per.replica.set) */
    PartitionReassignment(ClusterMembers members, MetadataGroup metadata, int groupsPerReplicaSet) {
        this.members = members;
        this.metadata = metadata;
        this.groupsPerReplicaSet = groupsPerReplicaSet;
    }

    @Override
    public List<Integer> reassign(TopicPartition partition, List<Integer> target, long timeoutMs) {
        checkReplicaList(target, members.nodeIds());
        PartitionAssignment current = metadata.assignment(partition.topic()).getPartitions(partition.partition());
        if (current.getTargetReplicaNodeIdsList().isEmpty() && current.getReplicaNodeIdsList().equals(target)) {
            return target;
        }
        LOG.info("Moving {} from replicas {} to {}", partition, current.getReplicaNodeIdsList(), target);
        metadata.submit(MetadataCommand.newBuilder().setBeginReassignment(
                io.tidemark.proto.v1.PartitionReassignment.newBuilder().setTopic(partition.topic())
                        .setPartition(partition.partition()).addAllReplicaNodeIds(target)
                        .setGroupsPerReplicaSet(groupsPerReplicaSet)).build());
        try {
            metadata.await(() -> completedHere(partition, target), Duration.ofMillis(Math.max(0, timeoutMs)),
                    "the move of " + partition + " to " + target);
        } catch (TidemarkException e) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the move of " + partition + " to " + target
                    + " did not complete within " + timeoutMs + " ms; it goes on (the new replicas' group copies the "
                    + "partition), and asking for the same replicas again waits for it");
        }
        LOG.info("Moved {} to replicas {}", partition, target);
        return target;
    }

    /**
     * Checks a replica list against the cluster's node ids.
     *
     * @throws TidemarkException INVALID_REPLICATION_FACTOR for an empty list or one longer than the cluster,
     *                           INVALID_REQUEST for a node listed twice or not in the cluster
     */
    static void checkReplicaList(List<Integer> replicas, List<Integer> nodeIds) {
        if (replicas.isEmpty() || replicas.size() > nodeIds.size()) {
            throw new TidemarkException(ErrorCode.INVALID_REPLICATION_FACTOR, "a partition needs 1 to "
                    + nodeIds.size() + " replicas on this cluster of " + nodeIds.size() + " brokers " + nodeIds
                    + ", not " + replicas.size() + (replicas.isEmpty() ? "" : " " + replicas));
        }
        Set<Integer> seen = new HashSet<>();
        for (int node : replicas) {
            if (!nodeIds.contains(node)) {
                throw new TidemarkException(ErrorCode.INVALID_REQUEST, "node " + node + " in replicas " + replicas
                        + " is not a broker of this cluster; its brokers are " + nodeIds);
            }
            if (!seen.add(node)) {
                throw new TidemarkException(ErrorCode.INVALID_REQUEST, "node " + node + " is listed twice in replicas "
                        + replicas + "; a broker holds at most one replica of a partition");
            }
        }
    }

    private boolean completedHere(TopicPartition partition, List<Integer> target) {
        PartitionAssignment applied = metadata.assignment(partition.topic()).getPartitions(partition.partition());
        return applied.getTargetReplicaNodeIdsList().isEmpty() && applied.getReplicaNodeIdsList().equals(target);
    }
}
