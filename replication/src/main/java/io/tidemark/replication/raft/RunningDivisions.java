package io.tidemark.replication.raft;

import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The divisions (replicas of Raft groups) of the local Raft server whose state machine has started, by group: a
 * lookup that never waits. Ratis' {@code RaftServer.getDivision} blocks until the group's replica has been built,
 * which after a restart with many groups takes seconds for the last of them; a request thread (a Netty event loop
 * above all) asking whether this broker leads must get "not running yet" at once instead.
 *
 * <p>A state machine adds its division when Ratis has initialized it and removes it when closed. Thread-safe.
 */
public final class RunningDivisions {
    private final Map<RaftGroupId, RaftServer.Division> running = new ConcurrentHashMap<>();

    /** A division whose state machine has just initialized (Ratis has built it: getDivision does not wait). */
    public void started(RaftServer.Division division) {
        running.put(division.getMemberId().getGroupId(), division);
    }

    /** The group's division here stopped. */
    public void stopped(RaftGroupId groupId) {
        running.remove(groupId);
    }

    /** The group's division here; empty while it is not running (yet). */
    public Optional<RaftServer.Division> get(RaftGroupId groupId) {
        return Optional.ofNullable(running.get(groupId));
    }
}
