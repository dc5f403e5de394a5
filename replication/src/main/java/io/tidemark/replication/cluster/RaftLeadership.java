package io.tidemark.replication.cluster;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.server.Leadership;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.raft.RaftGroups;
import io.tidemark.replication.raft.RaftSettings;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Planned leadership moves through Ratis. Ratis only hands leadership to the peer with the highest priority (and
 * a leader yields to a higher-priority peer by itself), so a move first rewrites the group's configuration with
 * the target at priority 1 and the others at 0, then asks the current leader to transfer.
 */
final class RaftLeadership implements Leadership {
    private final ClusterMembers members;
    private final MetadataGroup metadata;

    RaftLeadership(ClusterMembers members, MetadataGroup metadata) {
        this.members = members;
        this.metadata = metadata;
    }

    @Override
    public int transfer(TopicPartition partition, int toNodeId, long timeoutMs) {
        List<Integer> replicas = metadata.assignment(partition.topic()).getPartitions(partition.partition())
                .getReplicaNodeIdsList();
        if (!replicas.contains(toNodeId)) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "node " + toNodeId + " holds no replica of "
                    + partition + "; its replicas are on nodes " + replicas);
        }
        List<Integer> order = new ArrayList<>(List.of(toNodeId));
        replicas.stream().filter(n -> n != toNodeId).forEach(order::add);
        List<RaftPeer> peers = members.peers(order);
        RaftGroup group = RaftGroup.valueOf(RaftGroups.partition(partition), peers);
        try (RaftClient client = RaftClient.newBuilder().setProperties(RaftSettings.client()).setRaftGroup(group)
                .build()) {
            check(client.admin().setConfiguration(peers), partition, toNodeId);
            check(client.admin().transferLeadership(ClusterMembers.peerId(toNodeId), timeoutMs), partition, toNodeId);
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "leadership of " + partition + " did not move to node "
                    + toNodeId + ": " + e.getMessage());
        }
        return toNodeId;
    }

    private static void check(RaftClientReply reply, TopicPartition partition, int toNodeId) {
        if (!reply.isSuccess()) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "leadership of " + partition + " did not move to node "
                    + toNodeId + ": " + reply.getException());
        }
    }
}
