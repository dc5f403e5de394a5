package io.tidemark.replication.statemachine;

import io.tidemark.replication.raft.RaftLogCheck;
import io.tidemark.replication.raft.RaftLogTrash;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;

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

    /** The snapshot this member asked Ratis for to answer a leader's notice ({@link #requestOwnSnapshot}). */
    private final AtomicReference<CompletableFuture<Void>> ownSnapshot =
            new AtomicReference<>(CompletableFuture.completedFuture(null));

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

    /**
     * Ratis' snapshot call, on the apply thread: the index of the snapshot to tell Ratis ({@link #snapshot}), which
     * Ratis then purges the log up to; the closed segments it may delete are linked into the group's trash first
     * ({@link RaftLogTrash}), so that their deletion costs the group's log worker nothing. A link that cannot be made
     * (a file system without hard links) is logged and the snapshot told all the same: Ratis then deletes those
     * segments on the log worker, as it does by itself.
     */
    @Override
    public final long takeSnapshot() throws IOException {
        long index = snapshot();
        Path logDir = raftLogDir;
        if (index >= 0 && logDir != null) {
            try {
                RaftLogTrash.linkPurgeable(logDir, index);
            } catch (IOException | UnsupportedOperationException e) {
                LOG.warn("{}: could not link the Raft log segments up to index {} into the trash; Ratis will delete "
                        + "them on the group's log worker", getId(), index, e);
            }
        }
        return index;
    }

    /** Takes a snapshot, or finishes one: the index of a snapshot whose file is written, or -1 for none to tell. */
    abstract long snapshot() throws IOException;

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
     *   <li>a member that committed every entry the leader's log lacks (the leader purged up to this member's commit
     *       index as it knew it, or this member restarted and the leader's view of it is stale): it needs no copy,
     *       only for the leader to take it for one at a snapshot of its own reaching the entry before the leader's
     *       first, so that the leader sends entries from there ({@link #ownSnapshotReaching});</li>
     *   <li>any other member: a copy of the leader's latest snapshot ({@link #installFromLeader}).</li>
     * </ul>
     * A member that holds the entries never copies: the copy would take the install path whose answer Ratis takes
     * only at the leader's next notice, and the leader notifies only while it takes this member for one behind its
     * log start; meanwhile this member answers the leader's entries with its own log's next index, which an
     * uncommitted tail of a former leader's term puts past that start. The leader then never notified again and the
     * member refused entries for good (DifferentConfigsIT, 2026-12-06: a restarted broker that had led term 1 of a
     * group held uncommitted entries 8 and 9 and commit index 7, the new leader purged its log up to 7; the group
     * stood on one replica until the test gave up).
     */
    @Override
    public final CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(RoleInfoProto roleInfo,
                                                                              TermIndex firstTermIndexInLog) {
        long first = firstTermIndexInLog.getIndex();
        if (first <= RaftLog.LEAST_VALID_LOG_INDEX) {
            LOG.info("{}: the leader's Raft log starts at {}: no snapshot needed", getId(), firstTermIndexInLog);
            return CompletableFuture.completedFuture(null);
        }
        if (committedRaftIndex() >= first - 1) {
            return CompletableFuture.completedFuture(ownSnapshotReaching(first));
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
     * The answer of a member that committed every entry before the leader's {@code first}, given at once: its latest
     * snapshot when that reaches {@code first - 1} (Ratis then reloads the state machine from it and the leader sends
     * the entries after it, without the entry before them it no longer has); otherwise none yet (Ratis tells the
     * leader, which asks again), and a snapshot at the applied index is requested once this member applied up to
     * {@code first - 1}, so that the next notice finds it. Ratis takes no snapshot while a notice is being answered:
     * the request runs after this answer returns, off Ratis' thread.
     */
    private TermIndex ownSnapshotReaching(long first) {
        SingleFileSnapshotInfo latest = getLatestSnapshot();
        if (latest != null && latest.getIndex() >= first - 1) {
            LOG.info("{}: the leader's Raft log starts at {}; this member answers with its own snapshot at {}", getId(),
                    first, latest.getTermIndex());
            return latest.getTermIndex();
        }
        long applied = getLastAppliedTermIndex().getIndex();
        if (applied >= first - 1) {
            requestOwnSnapshot(first);
        }
        return null;
    }

    /** Asks Ratis for a snapshot at the applied index, unless one asked for is still being taken. */
    private void requestOwnSnapshot(long first) {
        CompletableFuture<Void> underway = ownSnapshot.get();
        CompletableFuture<Void> requested = new CompletableFuture<>();
        if (!underway.isDone() || !ownSnapshot.compareAndSet(underway, requested)) {
            return;
        }
        LOG.info("{}: the leader's Raft log starts at {}, this member committed the entries before it: taking a "
                + "snapshot of its own to answer the leader's next notice", getId(), first);
        RaftServer server = getServer().join();
        SnapshotManagementRequest create = SnapshotManagementRequest.newCreate(ClientId.randomId(), server.getId(),
                getGroupId(), 0, OWN_SNAPSHOT_TIMEOUT_MS, 1);
        CompletableFuture.supplyAsync(() -> server.snapshotManagementAsync(create)).thenCompose(reply -> reply)
                .whenComplete((reply, e) -> {
                    if (e != null || !reply.isSuccess()) {
                        LOG.warn("{}: the snapshot for the leader's next notice failed; the notice after asks again: {}",
                                getId(), e != null ? e.toString() : reply.getException());
                    }
                    requested.complete(null);
                });
    }

    /** The last Raft index this member committed; its applied index when the log cannot be read. */
    private long committedRaftIndex() {
        try {
            return getServer().get().getDivision(getGroupId()).getRaftLog().getLastCommittedIndex();
        } catch (IOException | InterruptedException | ExecutionException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return getLastAppliedTermIndex().getIndex();
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
