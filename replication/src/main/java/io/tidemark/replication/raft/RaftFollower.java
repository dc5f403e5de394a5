package io.tidemark.replication.raft;

import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One follower of a Raft group as its leader knows it.
 *
 * @param matchIndex        the highest Raft index the leader knows the follower holds
 * @param lastResponseAgoMs how long ago the follower last answered the leader (heartbeats go at half the election
 *                          timeout, so an alive follower stays well under it)
 */
public record RaftFollower(long matchIndex, long lastResponseAgoMs) {
    /**
     * The followers of the group as its leader here sees them, by node id; empty when this replica does not lead.
     *
     * <p>Ratis gives the followers' last answer times (role info) and their match indices in two arrays, both built
     * from its list of log appenders in that list's order; when the two differ in length (the group's members
     * changed in between) the map is empty, which a caller reads as "not known yet".
     */
    public static Optional<Map<Integer, RaftFollower>> seenBy(DivisionInfo leader) {
        if (!leader.isLeader()) {
            // and before Ratis gave a starting replica its first role, its role info fails (NullPointerException in
            // RoleInfo.buildRoleInfoProto: a leader balance pass failed so in a benchmark's first seconds)
            return Optional.empty();
        }
        RoleInfoProto role = leader.getRoleInfoProto();
        long[] matchIndices = leader.getFollowerMatchIndices();
        if (!role.hasLeaderInfo() || matchIndices == null) {
            return Optional.empty();
        }
        var answers = role.getLeaderInfo().getFollowerInfoList();
        Map<Integer, RaftFollower> followers = new HashMap<>();
        if (answers.size() == matchIndices.length) {
            for (int i = 0; i < matchIndices.length; i++) {
                ServerRpcProto answer = answers.get(i);
                followers.put(RaftPeerIds.nodeId(RaftPeerId.valueOf(answer.getId().getId())),
                        new RaftFollower(matchIndices[i], answer.getLastRpcElapsedTimeMs()));
            }
        }
        return Optional.of(followers);
    }
}
