package io.tidemark.replication.cluster;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.server.Reassignment;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.replication.raft.RaftGroups;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Moves a partition to another set of replicas through a Ratis configuration change, keeping its data. Any broker
 * can run a move (it answers the {@code ReassignPartition} RPC); the steps, in this order:
 * <ol>
 *   <li>Check the replica list: 1 to n brokers of the cluster, none twice; and that no move of the partition to
 *       other replicas is under way.</li>
 *   <li><b>Begin</b>: the metadata group records the list as the partition's target ({@code begin_reassignment}).
 *       Each broker of the target that holds no replica yet starts the partition's Raft group with no peers
 *       ({@link PartitionReplicas}); this broker waits until each of them runs it.</li>
 *   <li><b>Add</b> the joining brokers to the group's Raft configuration, one at a time ({@code setConfiguration}
 *       in ADD mode). Ratis first catches a new peer up (its log replay, or a segment copy when the leader purged
 *       the entries it needs: {@code notifyInstallSnapshotFromLeader}) and only then commits the configuration
 *       that counts it, so an empty replica never counts toward a majority. One at a time, since Ratis refuses a
 *       change that adds as many peers as it keeps (RATIS-1912).</li>
 *   <li>When the leader is leaving, move leadership to the first broker of the target ({@link RaftLeadership}), so
 *       that the removal does not cost an election. Best effort: if it fails, the removed leader steps down once
 *       the new configuration commits (Ratis then closes its division itself, and {@link PartitionReplicas}
 *       deletes the directory Ratis leaves behind).</li>
 *   <li><b>Remove</b>: set the configuration to exactly the target; the brokers left out are no longer peers.</li>
 *   <li><b>Complete</b>: the metadata group makes the target the partition's replicas
 *       ({@code complete_reassignment}). The brokers left out stop the group and delete its directory, the brokers
 *       that joined start serving it, and describe and status show the new replicas.</li>
 * </ol>
 * <p>A crash of any broker, this one included, at any point leaves a consistent state, and asking for the same
 * replicas again finishes the move, since every step can be repeated: the metadata keeps the target until the
 * move completes (and refuses a move elsewhere meanwhile), so every broker that may be a peer keeps running the
 * group; adding a peer that is already one changes nothing; the removal only ever keeps target brokers, which
 * were all added before it; and completing a completed move is answered as done. The replica data is deleted only
 * after the broker left the Raft configuration. Until the move completes, clients are served by the old replicas
 * (the metadata's replica list); the new ones are peers that serve nothing yet.
 *
 * <p>Thread-safe; moves of one partition at the same time are not coordinated beyond what the metadata refuses.
 */
final class PartitionReassignment implements Reassignment {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionReassignment.class);
    private static final long QUERY_TIMEOUT_MS = 3_000;

    private final ClusterMembers members;
    private final MetadataGroup metadata;
    private final RaftLeadership leadership;
    private final InstantSource clock;

    PartitionReassignment(ClusterMembers members, MetadataGroup metadata, RaftLeadership leadership,
                          InstantSource clock) {
        this.members = members;
        this.metadata = metadata;
        this.leadership = leadership;
        this.clock = clock;
    }

    @Override
    public List<Integer> reassign(TopicPartition partition, List<Integer> target, long timeoutMs) {
        checkReplicaList(target, members.nodeIds());
        long deadlineMs = clock.millis() + timeoutMs;
        PartitionAssignment current = metadata.assignment(partition.topic()).getPartitions(partition.partition());
        if (current.getTargetReplicaNodeIdsList().isEmpty() && current.getReplicaNodeIdsList().equals(target)) {
            return target;
        }
        List<Integer> before = current.getReplicaNodeIdsList();
        LOG.info("Moving {} from replicas {} to {}", partition, before, target);
        metadata.submit(MetadataCommand.newBuilder().setBeginReassignment(command(partition, target)).build());
        List<Integer> joining = target.stream().filter(node -> !before.contains(node)).toList();
        Set<Integer> involved = new LinkedHashSet<>(before);
        involved.addAll(target);
        RaftGroup group = RaftGroup.valueOf(RaftGroups.partition(partition), members.peers(List.copyOf(involved)));
        try (RaftClient queries = client(group, QUERY_TIMEOUT_MS);
             RaftClient changes = client(group, Math.max(1, timeoutMs))) {
            for (int node : joining) {
                awaitGroupRunning(queries, group.getGroupId(), node, deadlineMs, partition);
            }
            for (int node : joining) {
                check(changes.admin().setConfiguration(SetConfigurationRequest.Arguments.newBuilder()
                        .setServersInNewConf(List.of(members.member(node).peer()))
                        .setMode(SetConfigurationRequest.Mode.ADD).build()), "add node " + node + " to", partition);
                LOG.info("Node {} caught up and joined the Raft group of {}", node, partition);
            }
            moveLeaderIntoTarget(queries, partition, List.copyOf(involved), target, deadlineMs);
            check(changes.admin().setConfiguration(members.peers(target)), "set the replicas " + target + " of",
                    partition);
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the move of " + partition + " to " + target
                    + " did not complete: " + e.getMessage() + "; ask for the same replicas again to finish it");
        }
        metadata.submit(MetadataCommand.newBuilder().setCompleteReassignment(command(partition, target)).build());
        metadata.await(() -> completedHere(partition, target), Duration.ofMillis(Math.max(0,
                deadlineMs - clock.millis())), "the move of " + partition + " to be applied here");
        LOG.info("Moved {} from replicas {} to {}", partition, before, target);
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

    private static io.tidemark.proto.v1.PartitionReassignment command(TopicPartition partition, List<Integer> target) {
        return io.tidemark.proto.v1.PartitionReassignment.newBuilder().setTopic(partition.topic())
                .setPartition(partition.partition()).addAllReplicaNodeIds(target).build();
    }

    private static RaftClient client(RaftGroup group, long requestTimeoutMs) {
        RaftProperties properties = RaftSettings.client();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties,
                TimeDuration.valueOf(requestTimeoutMs, TimeUnit.MILLISECONDS));
        return RaftClient.newBuilder().setProperties(properties).setRaftGroup(group)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(5,
                        TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
                .build();
    }

    /** Waits until {@code node} runs the partition's group (it starts it when it applies the begin). */
    private void awaitGroupRunning(RaftClient queries, RaftGroupId groupId, int node, long deadlineMs,
                                   TopicPartition partition) {
        metadata.await(() -> {
            try {
                return queries.getGroupManagementApi(RaftPeerIds.of(node)).list().getGroupIds().contains(groupId);
            } catch (IOException e) {
                return false;
            }
        }, Duration.ofMillis(Math.max(0, deadlineMs - clock.millis())), "node " + node + " to start the Raft group of "
                + partition);
    }

    /** Moves leadership to the target's first broker when the leader is not in the target. */
    private void moveLeaderIntoTarget(RaftClient queries, TopicPartition partition, List<Integer> involved,
                                      List<Integer> target, long deadlineMs) {
        for (int node : involved) {
            GroupInfoReply info;
            try {
                info = queries.getGroupManagementApi(RaftPeerIds.of(node)).info(RaftGroups.partition(partition));
            } catch (IOException e) {
                continue;
            }
            if (info.getRoleInfoProto().getRole() != RaftPeerRole.LEADER || target.contains(node)) {
                continue;
            }
            // The group's peers as the leader has them (Ratis 3.2.0 does not send GroupInfoReply.getConf()).
            List<Integer> voters = new ArrayList<>();
            for (RaftPeer peer : info.getGroup().getPeers()) {
                voters.add(RaftPeerIds.nodeId(peer.getId()));
            }
            try {
                leadership.move(partition, voters, target.get(0), Math.max(1, deadlineMs - clock.millis()));
            } catch (TidemarkException e) {
                LOG.warn("Leadership of {} did not move off node {} before it leaves; removing it makes it step "
                        + "down instead: {}", partition, node, e.getMessage());
            }
            return;
        }
    }

    private boolean completedHere(TopicPartition partition, List<Integer> target) {
        PartitionAssignment applied = metadata.assignment(partition.topic()).getPartitions(partition.partition());
        return applied.getTargetReplicaNodeIdsList().isEmpty() && applied.getReplicaNodeIdsList().equals(target);
    }

    private static void check(RaftClientReply reply, String what, TopicPartition partition) throws IOException {
        if (!reply.isSuccess()) {
            throw new IOException("could not " + what + " the Raft group of " + partition + ": "
                    + reply.getException());
        }
    }
}
