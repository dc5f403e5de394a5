package io.tidemark.replication.partition;

import io.tidemark.replication.raft.RaftFollower;

import java.util.Map;

/**
 * A partition's Raft group as its leader sees it at one moment, read from Ratis' division info.
 *
 * @param term        the leader's term: a new term means leadership changed hands, possibly back to this broker
 * @param commitIndex the group's commit index on the leader
 * @param followers   by node id; empty while the leader's view of them is not consistent
 *                    ({@link RaftFollower#seenBy})
 */
public record LeaderView(long term, long commitIndex, Map<Integer, RaftFollower> followers) {
    public LeaderView {
        followers = Map.copyOf(followers);
    }
}
