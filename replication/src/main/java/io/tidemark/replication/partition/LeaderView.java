package io.tidemark.replication.partition;

import java.util.Map;

/**
 * A partition's Raft group as its leader sees it at one moment, read from Ratis' division info.
 *
 * @param term        the leader's term: a new term means leadership changed hands, possibly back to this broker
 * @param commitIndex the group's commit index on the leader
 * @param followers   by node id; empty while the leader's view of them is not consistent (see
 *                    {@link PartitionGroup#leaderView()})
 */
public record LeaderView(long term, long commitIndex, Map<Integer, Follower> followers) {
    public LeaderView {
        followers = Map.copyOf(followers);
    }

    /**
     * One follower as the leader knows it.
     *
     * @param matchIndex        the highest Raft index the leader knows the follower holds
     * @param lastResponseAgoMs how long ago the follower last answered the leader (heartbeats go at half the
     *                          election timeout, so an alive follower stays well under it)
     */
    public record Follower(long matchIndex, long lastResponseAgoMs) {
    }
}
