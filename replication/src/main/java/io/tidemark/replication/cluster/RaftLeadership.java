package io.tidemark.replication.cluster;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.server.Leadership;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionGroupRecord;
import io.tidemark.proto.v1.TopicAssignment;
import io.tidemark.replication.raft.RaftTransport;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.api.AdminApi;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Planned leadership moves through Ratis, per partition group: a partition's leadership is its group's, so moving it
 * moves every partition of the group. Ratis hands leadership only to a peer no other peer outranks in priority
 * ({@code RaftConfigurationImpl.isHighestPriority}); every peer of a Tidemark group has the same priority
 * ({@link ClusterMembers#peers}), so a crash fails over in one election and a move is one transfer request, with no
 * configuration change. Two kinds of group prefer a replica: a new one, created preferring its preferred replica
 * ({@link ClusterMembers#peersPreferringFirst}), and one left so by an older broker's move (moves once raised the
 * target's priority and set it back after, and a broker that died in between left the group preferring a replica
 * for good: Ratis then made the others wait for it at every election). Either is set back to equal priorities by
 * {@link #equalizePriorities}, which the balancer calls for the groups its broker leads, and by a move before it
 * transfers.
 */
final class RaftLeadership implements Leadership, PreferredLeaderBalancer.GroupLeadership {
    private static final Logger LOG = LoggerFactory.getLogger(RaftLeadership.class);
    /** Transfers tried per move, each with its share of the move's timeout. */
    private static final int TRANSFER_ATTEMPTS = 3;
    private final ClusterMembers members;
    private final MetadataGroup metadata;
    private final RaftTransport transport;

    RaftLeadership(ClusterMembers members, MetadataGroup metadata, RaftTransport transport) {
        this.transport = transport;
        this.members = members;
        this.metadata = metadata;
    }

    @Override
    public Transferred transfer(TopicPartition partition, int toNodeId, long timeoutMs) {
        PartitionAssignment assignment = metadata.assignment(partition.topic()).getPartitions(partition.partition());
        List<Integer> replicas = assignment.getReplicaNodeIdsList();
        if (!replicas.contains(toNodeId)) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "node " + toNodeId + " holds no replica of "
                    + partition + "; its replicas are on nodes " + replicas);
        }
        UUID group = TopicIds.fromBytes(assignment.getGroupId());
        move(group, replicas, toNodeId, timeoutMs, partition + "'s partition group " + group);
        return new Transferred(toNodeId, partitionsOf(group));
    }

    /** The partitions the metadata places in {@code group}, sorted by topic and partition. */
    private List<TopicPartition> partitionsOf(UUID group) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (TopicAssignment topic : metadata.topics()) {
            for (PartitionAssignment partition : topic.getPartitionsList()) {
                if (TopicIds.fromBytes(partition.getGroupId()).equals(group)) {
                    partitions.add(new TopicPartition(topic.getName(), partition.getPartition()));
                }
            }
        }
        return partitions;
    }

    @Override
    public void move(UUID group, int toNodeId, long timeoutMs) {
        PartitionGroupRecord record = metadata.group(group).orElseThrow(() -> new TidemarkException(
                ErrorCode.NOT_AVAILABLE, "partition group " + group + " is not known (any more)"));
        move(group, record.getReplicaNodeIdsList(), toNodeId, timeoutMs, "partition group " + group);
    }

    /**
     * Moves leadership, trying the transfer up to {@link #TRANSFER_ATTEMPTS} times within {@code timeoutMs}: under
     * load a transfer can fail although nothing is wrong (Ratis sends the target its go-ahead once it holds the
     * leader's last entry, and an entry admitted just before the transfer began may still land after it, so the
     * target's election is refused and another replica may win).
     *
     */
    private void move(UUID group, List<Integer> voters, int toNodeId, long timeoutMs, String what) {
        try (RaftClient client = client(group, voters)) {
            setEqualPriorities(client.admin(), group, voters);
            transfer(client.admin(), toNodeId, timeoutMs, what);
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "leadership of " + what + " did not move to node "
                    + toNodeId + ": " + e.getMessage());
        }
    }

    @Override
    public void equalizePriorities(UUID group, List<Integer> voters) {
        try (RaftClient client = client(group, voters)) {
            setEqualPriorities(client.admin(), group, voters);
            LOG.info("Set every priority of partition group {} equal", group);
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the priorities of partition group " + group
                    + " were not set equal: " + e.getMessage());
        }
    }

    /**
     * Sets every voter's priority equal: Ratis transfers only to a peer no other outranks. Ratis answers at once,
     * writing no entry, when they are equal already.
     */
    private void setEqualPriorities(AdminApi admin, UUID group, List<Integer> voters) throws IOException {
        RaftClientReply reply = admin.setConfiguration(members.peers(voters));
        if (!reply.isSuccess()) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the priorities of partition group " + group
                    + " were not set equal: " + reply.getException());
        }
    }

    private RaftClient client(UUID group, List<Integer> voters) {
        return transport.client(RaftGroup.valueOf(RaftGroupId.valueOf(group), members.peers(voters))).build();
    }

    /**
     * Asks for the transfer up to {@link #TRANSFER_ATTEMPTS} times. Ratis' blocking admin call throws a refused
     * transfer (a TransferLeadershipException: DIFFERENT_LEADER when another replica won the target's election, a
     * timeout) rather than answering it, so a failure is a reply or an exception, and either is tried again.
     */
    static void transfer(AdminApi admin, int toNodeId, long timeoutMs, String what) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                RaftClientReply reply = admin.transferLeadership(RaftPeerIds.of(toNodeId),
                        timeoutMs / TRANSFER_ATTEMPTS);
                if (reply.isSuccess() || attempt == TRANSFER_ATTEMPTS) {
                    check(reply, what, toNodeId);
                    return;
                }
            } catch (IOException e) {
                if (attempt == TRANSFER_ATTEMPTS) {
                    throw e;
                }
                LOG.info("leadership of {} did not move to node {} (attempt {} of {}), trying again: {}", what,
                        toNodeId, attempt, TRANSFER_ATTEMPTS, e.getMessage());
            }
        }
    }

    private static void check(RaftClientReply reply, String what, int toNodeId) {
        if (!reply.isSuccess()) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "leadership of " + what + " did not move to node "
                    + toNodeId + ": " + reply.getException());
        }
    }
}
