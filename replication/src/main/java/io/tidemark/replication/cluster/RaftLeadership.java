package io.tidemark.replication.cluster;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.server.Leadership;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.raft.RaftGroups;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;

import java.io.IOException;
import java.util.List;

/**
 * Planned leadership moves through Ratis. Ratis only hands leadership to the peer with the highest priority, so a
 * move rewrites the group's configuration with the target at priority 1, asks the leader to transfer, and then
 * sets every priority back to equal, so a later crash fails over in one election ({@link ClusterMembers#peers}).
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
        return move(partition, replicas, toNodeId, timeoutMs);
    }

    /**
     * Moves leadership within the group whose configuration is {@code voters} (the Raft peers, which during a
     * reassignment are not the metadata's replicas).
     */
    int move(TopicPartition partition, List<Integer> voters, int toNodeId, long timeoutMs) {
        List<RaftPeer> preferring = members.peersPreferring(voters, toNodeId);
        RaftGroup group = RaftGroup.valueOf(RaftGroups.partition(partition), preferring);
        try (RaftClient client = RaftClient.newBuilder().setProperties(RaftSettings.client()).setRaftGroup(group)
                .build()) {
            check(client.admin().setConfiguration(preferring), partition, toNodeId);
            check(client.admin().transferLeadership(RaftPeerIds.of(toNodeId), timeoutMs), partition, toNodeId);
            check(client.admin().setConfiguration(members.peers(voters)), partition, toNodeId);
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
