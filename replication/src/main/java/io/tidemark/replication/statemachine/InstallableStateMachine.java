package io.tidemark.replication.statemachine;

import io.tidemark.replication.raft.RaftLogCheck;
import io.tidemark.replication.raft.RaftPeerIds;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * A state machine whose snapshots are single files in Ratis' {@link SimpleStateMachineStorage}, loaded when Ratis
 * starts the group ({@link #load}), and which installs snapshots on Ratis' notice (notification mode, see
 * RaftSettings): when the leader
 * purged the entries a member needs next, Ratis calls {@link #notifyInstallSnapshotFromLeader}; the member copies the
 * leader's latest snapshot ({@link #installFromLeader}) and Ratis then pauses the state machine and reinitializes it,
 * which {@link #reload}s from that snapshot. Ratis sends the notice to every member joining a group too, which gets
 * entries when the leader holds its whole log; and to a member the leader wrongly takes for one behind its log, which
 * answers with a snapshot of its own ({@link #notifyInstallSnapshotFromLeader} says when). The pause moves the
 * lifecycle to PAUSED, as Ratis checks ({@code StateMachineUpdater.reload}; BaseStateMachine's pause does nothing).
 *
 * <p>A member without a snapshot rebuilds its state from every entry, so its Raft log must start at index 0
 * ({@link #latestSnapshotOrWholeLog}).
 *
 * <p>Threading: Ratis calls the notice on a gRPC thread, pause and reinitialize on its updater thread.
 */
abstract class InstallableStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(InstallableStateMachine.class);
    /** How long a member may take to snapshot itself for a leader that takes it for one behind its log. */
    private static final long OWN_SNAPSHOT_TIMEOUT_MS = 60_000;

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private volatile Path raftLogDir;
    /**
     * The latest snapshot file, empty when there is none; null until {@link #latestSnapshotOrWholeLog} looked. Ratis
     * asks for it several times per appendEntries, and {@link SimpleStateMachineStorage} lists the directory on every
     * ask while there is no snapshot.
     */
    private volatile Optional<SingleFileSnapshotInfo> latestSnapshotFile;

    /** Loads the state from the latest snapshot (and the files of {@code smDir}) when Ratis starts the group. */
    abstract void load(Path smDir) throws IOException;

    /**
     * Copies the latest snapshot of this group's member on node {@code leader} as this member's own.
     *
     * @param firstInLeaderLog the first entry the leader's log holds: the snapshot must reach it
     * @return completes with the snapshot's (term, index); fails when the copy failed, and Ratis asks again
     */
    abstract CompletableFuture<TermIndex> installFromLeader(int leader, TermIndex firstInLeaderLog);

    /** Replaces the state by the snapshot {@link #installFromLeader} installed, once Ratis paused the state machine. */
    abstract void reload() throws IOException;

    @Override
    public final void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        raftLogDir = raftStorage.getStorageDir().getCurrentDir().toPath();
        Path smDir = raftStorage.getStorageDir().getStateMachineDir().toPath();
        getLifeCycle().startAndTransition(() -> load(smDir));
    }

    SimpleStateMachineStorage storage() {
        return storage;
    }

    @Override
    public final StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public final SingleFileSnapshotInfo getLatestSnapshot() {
        Optional<SingleFileSnapshotInfo> known = latestSnapshotFile;
        return known == null ? storage.getLatestSnapshot() : known.orElse(null);
    }

    /** Makes a snapshot file just written the latest, unless a later one is. */
    void rememberSnapshot(SingleFileSnapshotInfo info) {
        latestSnapshotFile = Optional.of(storage.updateLatestSnapshot(info));
    }

    /**
     * The latest snapshot; null when there is none and the Raft log starts at index 0.
     *
     * @param who the member, as the message names it
     * @throws IOException when there is none but the log was purged ({@link RaftLogCheck#requireLogFromStart})
     */
    SingleFileSnapshotInfo latestSnapshotOrWholeLog(String who) throws IOException {
        SingleFileSnapshotInfo info = storage.loadLatestSnapshot();
        latestSnapshotFile = Optional.ofNullable(info);
        if (info == null) {
            RaftLogCheck.requireLogFromStart(raftLogDir, who);
        }
        return info;
    }

    /**
     * Answers the leader's notice:
     * <ul>
     *   <li>a leader that still holds its whole log (a member joining the group is told too): no snapshot, the entries
     *       follow;</li>
     *   <li>a member that holds and has applied what the leader's log starts with, but whom the leader takes for one
     *       further behind (its view of this member is stale, as after this member restarted): a snapshot of its own
     *       at its applied index, past the start of the leader's log, so the leader sends entries from there. Ratis
     *       asks again as long as it takes this member for one behind its log, and answering "none needed" (as this
     *       did until 2026-12-03) made it ask forever, hundreds of times a second: the leader had purged the entry
     *       before this member's next one, so it could not send entries either (its log started exactly there and
     *       its snapshot was later), and a group with another replica down stopped (DifferentConfigsIT);</li>
     *   <li>any other member: a copy of the leader's latest snapshot ({@link #installFromLeader}).</li>
     * </ul>
     */
    @Override
    public final CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(RoleInfoProto roleInfo,
                                                                              TermIndex firstTermIndexInLog) {
        long first = firstTermIndexInLog.getIndex();
        long nextIndex = nextRaftIndex();
        if (first <= RaftLog.LEAST_VALID_LOG_INDEX) {
            LOG.info("{}: the leader's Raft log starts at {}, this member needs entries from {}: no snapshot needed",
                    getId(), firstTermIndexInLog, nextIndex);
            return CompletableFuture.completedFuture(null);
        }
        long applied = getLastAppliedTermIndex().getIndex();
        if (first <= nextIndex && applied >= first) {
            LOG.info("{}: the leader's Raft log starts at {} and this member has applied up to {}: answering with a "
                    + "snapshot of its own there", getId(), firstTermIndexInLog, applied);
            return ownSnapshot(first);
        }
        if (!roleInfo.hasFollowerInfo() || !roleInfo.getFollowerInfo().hasLeaderInfo()) {
            return CompletableFuture.failedFuture(new IOException("Ratis asked " + getId() + " (group " + getGroupId()
                    + ") to install a snapshot without naming the leader"));
        }
        int leader = RaftPeerIds.nodeId(RaftPeerId.valueOf(roleInfo.getFollowerInfo().getLeaderInfo().getId()
                .getId()));
        return installFromLeader(leader, firstTermIndexInLog);
    }

    /**
     * A snapshot of this member at its applied index, taken as Ratis takes any (on its state machine updater, after
     * the entries applied so far); fails unless it covers {@code first}.
     */
    private CompletableFuture<TermIndex> ownSnapshot(long first) {
        RaftServer server = getServer().join();
        return server.snapshotManagementAsync(SnapshotManagementRequest.newCreate(ClientId.randomId(), server.getId(),
                getGroupId(), 0, OWN_SNAPSHOT_TIMEOUT_MS, 1)).thenApply(reply -> {
                    SingleFileSnapshotInfo latest = getLatestSnapshot();
                    if (!reply.isSuccess() || latest == null || latest.getIndex() < first) {
                        throw new CompletionException(new IOException(getId() + " took no snapshot at or past index "
                                + first + ": " + (reply.isSuccess() ? "its latest is " + latest
                                : reply.getException())));
                    }
                    return latest.getTermIndex();
                });
    }

    /** The next Raft index this member's log takes; after the applied index when the log cannot be read. */
    private long nextRaftIndex() {
        try {
            return getServer().get().getDivision(getGroupId()).getRaftLog().getNextIndex();
        } catch (IOException | InterruptedException | ExecutionException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return getLastAppliedTermIndex().getIndex() + 1;
        }
    }

    /** Ratis pauses the state machine before it reloads it from an installed snapshot. */
    @Override
    public final void pause() {
        getLifeCycle().transition(LifeCycle.State.PAUSING);
        getLifeCycle().transition(LifeCycle.State.PAUSED);
    }

    @Override
    public final void reinitialize() throws IOException {
        getLifeCycle().transition(LifeCycle.State.STARTING);
        reload();
        getLifeCycle().transition(LifeCycle.State.RUNNING);
    }
}
