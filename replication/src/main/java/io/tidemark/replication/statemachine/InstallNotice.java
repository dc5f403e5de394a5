package io.tidemark.replication.statemachine;

import io.tidemark.replication.raft.RaftPeerIds;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;

/**
 * Ratis' notice that a member's leader purged the entries it needs next (notification mode, see RaftSettings), as the
 * state machines read it: whether this member needs a snapshot at all, and from which broker to fetch it. Ratis sends
 * one to every member joining a group too, which may still get entries.
 *
 * <p>Stateless.
 */
final class InstallNotice {
    private static final Logger LOG = LoggerFactory.getLogger(InstallNotice.class);

    private InstallNotice() {
    }

    /**
     * The broker whose snapshot {@code machine} must install; empty when the leader's log, which starts at
     * {@code firstInLeaderLog}, still holds the entries the member needs next.
     *
     * @throws IOException when Ratis did not name the leader
     */
    static OptionalInt snapshotSource(BaseStateMachine machine, RoleInfoProto roleInfo, TermIndex firstInLeaderLog)
            throws IOException {
        long nextIndex = nextRaftIndex(machine);
        if (firstInLeaderLog.getIndex() <= nextIndex) {
            LOG.info("{}: the leader's Raft log starts at {}, this member needs entries from {}: no snapshot needed",
                    machine.getId(), firstInLeaderLog, nextIndex);
            return OptionalInt.empty();
        }
        if (!roleInfo.hasFollowerInfo() || !roleInfo.getFollowerInfo().hasLeaderInfo()) {
            throw new IOException("Ratis asked " + machine.getId() + " (group " + machine.getGroupId()
                    + ") to install a snapshot without naming the leader");
        }
        return OptionalInt.of(RaftPeerIds.nodeId(RaftPeerId.valueOf(roleInfo.getFollowerInfo().getLeaderInfo()
                .getId().getId())));
    }

    /** The next Raft index the member's log takes; after the applied index when the log cannot be read. */
    private static long nextRaftIndex(BaseStateMachine machine) {
        try {
            return machine.getServer().get().getDivision(machine.getGroupId()).getRaftLog().getNextIndex();
        } catch (IOException | InterruptedException | ExecutionException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return machine.getLastAppliedTermIndex().getIndex() + 1;
        }
    }
}
