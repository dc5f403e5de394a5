package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.replication.snapshot.CatchUp;
import io.tidemark.replication.snapshot.GroupSnapshotFile;
import io.tidemark.replication.snapshot.PartitionDirectories;
import io.tidemark.replication.snapshot.StagedInstall;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * The state machine of a partition group: a Raft group that hosts many partitions, adapted to Ratis. What the
 * group's entries do to its partitions is {@link PartitionHost}'s, a core that knows no Ratis; this class feeds it the
 * entries Ratis commits, stamps the leader's entries through it, writes its snapshots where Ratis finds them and
 * installs the leader's when this replica is behind the leader's purged log. Consensus is paid per group: one Raft
 * log, one fsync and one round per entry, however many partitions the entry's batches go to.
 * <ul>
 *   <li>{@link #startTransaction} makes a request of batches stampable ({@link StampedEntry}) and
 *       {@link #preAppendTransaction}, which Ratis calls on the leader only, in log order, before the entry is
 *       serialized, has the core stamp it ({@link PartitionHost#stamp}).</li>
 *   <li>{@link #applyTransaction} applies each committed entry through the core, on every replica, and replies with
 *       its outcome; the applied index only moves forward.</li>
 *   <li>A snapshot is the partition logs themselves with what their next appends depend on
 *       ({@link PartitionHost#captureSnapshot}): {@link #takeSnapshot} captures it from memory on the apply thread and
 *       leaves the fsyncs of the logs that changed and the file ({@link GroupSnapshotFile}) to the broker's snapshot
 *       writer; Ratis hears of it, and purges behind it, only once the file is written, so never behind a snapshot a
 *       crash could lose. At start the core opens from the latest one and Ratis replays the entries after it.</li>
 *   <li>A replica behind the leader's purged Raft log catches up by copying the leader's latest snapshot
 *       ({@link #notifyInstallSnapshotFromLeader}, {@link CatchUp}); Ratis then pauses and reinitializes the state
 *       machine, which replaces its logs by the copy ({@link StagedInstall}) and continues after the snapshot.</li>
 * </ul>
 *
 * <p>Threading: Ratis calls apply, snapshots and {@link #reinitialize} on its state machine updater thread, one at a
 * time, and {@link #startTransaction} and {@link #preAppendTransaction} on the leader's request path (the latter under
 * the Raft log's write lock, in log order); readers use the hosted partitions' logs, which are safe to read
 * concurrently (a reader that meets the logs being replaced gets NOT_AVAILABLE and retries). The snapshot writer
 * fsyncs logs while entries append to them (a log's lock orders the two) and writes snapshot files; a reload or close
 * waits for the write under way first.
 */
public final class GroupStateMachine extends InstallableStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(GroupStateMachine.class);
    private static final SnapshotRetentionPolicy ONLY_LATEST = new SnapshotRetentionPolicy() {
        @Override
        public int getNumSnapshotsRetained() {
            return 1;
        }
    };

    private final Function<Map<String, String>, TopicConfig> configs;
    private final ClientId localClient;
    private final CatchUp catchUp;
    private final InstantSource clock;
    private final Listener listener;
    private final Executor snapshotWriter;
    /** The snapshot being written off the apply thread; null when none is. Set and taken on the apply thread. */
    private volatile CompletableFuture<Written> writing;
    private final AtomicReference<CompletableFuture<Void>> nextLeadershipEvent =
            new AtomicReference<>(new CompletableFuture<>());
    private volatile Path smDir;
    private volatile PartitionHost host;
    private volatile boolean closed;

    /**
     * @param configs       a topic's config from the overrides the group's log gives a partition (over this broker's
     *                      defaults): segment sizes and retention of the logs, and the leader's SendTime window
     * @param localClient   the client id of this broker's own submissions, whose batches it admitted before
     * @param listener      told when this replica starts, stops and sees a new leader
     * @param snapshotWriter where a snapshot's fsyncs and file are written, off the apply thread; it must run every
     *                      task it takes (a direct executor writes them on the apply thread)
     */
    public GroupStateMachine(Function<Map<String, String>, TopicConfig> configs, ClientId localClient, CatchUp catchUp,
                             InstantSource clock, Listener listener, Executor snapshotWriter) {
        this.configs = configs;
        this.localClient = localClient;
        this.catchUp = catchUp;
        this.clock = clock;
        this.listener = listener;
        this.snapshotWriter = snapshotWriter;
    }

    /** What a replica of a group tells the broker, on Ratis threads: each must be short. */
    @FunctionalInterface
    public interface Listener {
        /** The group has a new leader. */
        void leaderChanged(RaftGroupId groupId);

        /**
         * The replica's partitions are open (Ratis has built its division: {@code server.getDivision} answers at
         * once), before Ratis replays its log.
         */
        default void started(RaftServer server, RaftGroupId groupId) throws IOException {
        }

        /** The replica was closed. */
        default void closed(RaftGroupId groupId) {
        }

        /** The replica stops for good in this process: a disk error failed an apply or a snapshot. */
        default void stoppedOnDiskError(RaftGroupId groupId, String error) {
        }
    }

    @Override
    void load(Path smDir) throws IOException {
        this.smDir = smDir;
        host = new PartitionHost(who(), smDir, configs);
        openPartitions();
        listener.started(getServer().join(), getGroupId());
    }

    /**
     * Opens the partition logs: first completes an install whose copy was committed (or discards one that was not),
     * then has the core open from the latest snapshot, from where Ratis replays.
     *
     * @throws IOException when a log is shorter than its snapshot says, or when there is no snapshot but the Raft log
     *                     was purged
     */
    private void openPartitions() throws IOException {
        Path partitionsDir = smDir.resolve(PartitionDirectories.PARTITIONS);
        Optional<GroupSnapshot> installed = new StagedInstall(smDir).finish(partitionsDir, this::recordSnapshot);
        if (installed.isPresent()) {
            storage().cleanupOldSnapshots(ONLY_LATEST);
        }
        SingleFileSnapshotInfo info = latestSnapshotOrWholeLog(who());
        Optional<GroupSnapshot> snapshot = info == null ? Optional.empty()
                : Optional.of(GroupSnapshotFile.read(info.getFile().getPath()));
        host.open(snapshot, clock.millis());
        if (info != null) {
            setLastAppliedTermIndex(info.getTermIndex());
        }
    }

    /** Records a snapshot where Ratis finds it; every log it names must be fsynced up to its log end offset. */
    private void recordSnapshot(GroupSnapshot snapshot) throws IOException {
        rememberSnapshot(writeSnapshotFile(snapshot));
    }

    /**
     * Writes a snapshot's file (and its MD5 beside it), which a restart finds; Ratis sees it as the latest only once
     * it is {@link #rememberSnapshot remembered}.
     */
    private SingleFileSnapshotInfo writeSnapshotFile(GroupSnapshot snapshot) throws IOException {
        File file = storage().getSnapshotFile(snapshot.getTerm(), snapshot.getIndex());
        GroupSnapshotFile.write(file.toPath(), snapshot);
        FileInfo info = new FileInfo(file.toPath(), MD5FileUtil.computeAndSaveMd5ForFile(file));
        return new SingleFileSnapshotInfo(info, TermIndex.valueOf(snapshot.getTerm(), snapshot.getIndex()));
    }

    /**
     * The partitions this replica hosts and what the group's entries did to them.
     *
     * @throws TidemarkException NOT_AVAILABLE (retriable) before Ratis started the replica
     */
    public PartitionHost host() {
        PartitionHost started = host;
        if (started == null) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the replica of Raft group " + getGroupId()
                    + " on this broker is starting");
        }
        return started;
    }

    /**
     * Makes the entry of a request, once the core checked it ({@link PartitionHost#checkRequest}): a request that
     * would fail apply is refused with the reason and never appended, whoever sent it. For batches: the table in an
     * array of its own joined to the batches, not copied ({@link StampedEntry}); it is the transaction's context, so
     * {@link #preAppendTransaction} can stamp it: Ratis builds the log entry from these bytes only after that.
     */
    @Override
    public TransactionContext startTransaction(RaftClientRequest request) {
        ByteString content = request.getMessage().getContent();
        TransactionContext.Builder builder = TransactionContext.newBuilder().setStateMachine(this)
                .setClientRequest(request);
        try {
            host().checkRequest(content, request.getClientId().equals(localClient));
        } catch (TidemarkException e) {
            TransactionContext refused = builder.setLogData(content).build();
            refused.setException(e);
            return refused;
        }
        if (!GroupEntryFormat.ofBatches(content)) {
            return builder.setLogData(content).build();
        }
        StampedEntry entry = StampedEntry.of(content);
        return builder.setLogData(entry.data()).setStateMachineContext(entry).build();
    }

    @Override
    public TransactionContext preAppendTransaction(TransactionContext trx) {
        if (trx.getStateMachineContext() instanceof StampedEntry entry) {
            host.stamp(entry, clock.millis());
        }
        return trx;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        byte[] reply;
        try {
            reply = host.apply(entry.getStateMachineLogEntry().getLogData(), entry.getIndex(),
                    trx.getStateMachineContext() instanceof StampedEntry stamped ? stamped : null, clock.millis());
        } catch (UncheckedIOException e) {
            stopOnDiskError("applying entry " + entry.getIndex(), e);
            throw e;
        }
        if (!updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex())) {
            throw new IllegalStateException("applied index of " + getGroupId() + " would move back to "
                    + entry.getIndex());
        }
        return CompletableFuture.completedFuture(Message.valueOf(UnsafeByteOperations.unsafeWrap(reply)));
    }

    /**
     * A snapshot, on the apply thread ({@link #takeSnapshot}): captures the state from memory and hands its fsyncs and
     * file to the snapshot writer, then answers the index of the latest snapshot whose file is written and not yet
     * told, or -1 (Ratis then neither logs nor purges, and calls again after the next entries it applies). Flushing
     * the changed logs here, thousands in a group, held every acknowledgement of the group for as long.
     */
    @Override
    long snapshot() throws IOException {
        CompletableFuture<Written> written = writing;
        if (written != null && !written.isDone()) {
            return -1;
        }
        if (written != null) {
            writing = null;
            Optional<GroupSnapshot> recorded = recorded(written);
            if (recorded.isPresent()) {
                return recorded.get().getIndex();
            }
        }
        TermIndex applied = getLastAppliedTermIndex();
        if (applied == null || applied.getIndex() < 0) {
            return -1;
        }
        long startMs = clock.millis();
        SnapshotCapture capture = host.captureSnapshot(applied.getTerm(), applied.getIndex());
        long capturedMs = clock.millis();
        CompletableFuture<Written> write = CompletableFuture.supplyAsync(() -> write(capture, capturedMs),
                snapshotWriter);
        LOG.info("{}: snapshot at index {}: {} partitions captured in {} ms on the apply thread, {} logs to fsync",
                who(), applied.getIndex(), capture.snapshot().getPartitionsCount(), capturedMs - startMs,
                capture.changed().size());
        if (!write.isDone()) {
            writing = write;
            return -1;
        }
        return recorded(write).map(GroupSnapshot::getIndex).orElse(-1L);
    }

    /** fsyncs a capture's changed logs and writes its file; on the snapshot writer. */
    private Written write(SnapshotCapture capture, long capturedMs) {
        capture.flush(clock.millis());
        SingleFileSnapshotInfo file;
        try {
            file = writeSnapshotFile(capture.snapshot());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        LOG.info("{}: snapshot at index {} written in {} ms", who(), capture.snapshot().getIndex(),
                clock.millis() - capturedMs);
        return new Written(capture, file);
    }

    /** A snapshot whose logs are fsynced and whose file is written, to be told to Ratis. */
    private record Written(SnapshotCapture capture, SingleFileSnapshotInfo file) {
    }

    /**
     * The snapshot a finished write recorded, now the latest for Ratis and the core; empty when the write failed
     * (logged: the next call captures again). Ratis sees it only now: it answers a snapshot request without asking
     * this machine when the latest it sees is recent enough, which kept a written snapshot from ever being told.
     *
     * @throws UncheckedIOException when a disk error failed the write: the replica stops ({@link #stopOnDiskError});
     *                              unchecked, since Ratis logs an {@link IOException} from a snapshot and goes on
     */
    private Optional<GroupSnapshot> recorded(CompletableFuture<Written> write) throws IOException {
        Written written;
        try {
            written = write.join();
        } catch (CompletionException e) {
            host.snapshotAbandoned();
            if (e.getCause() instanceof UncheckedIOException disk) {
                stopOnDiskError("writing a snapshot", disk);
                throw disk;
            }
            LOG.warn("{}: a snapshot was not written; the next is taken after the next entries: {}", who(),
                    e.getCause().toString());
            return Optional.empty();
        }
        rememberSnapshot(written.file());
        host.snapshotRecorded(written.capture());
        return Optional.of(written.capture().snapshot());
    }

    /**
     * A disk error in an apply or a snapshot: this replica stops, as Ratis closes a replica whose apply or snapshot
     * throws; its logs may be ahead of what is durable, and a snapshot that skipped a log whose fsync failed would let
     * Ratis purge entries that log never kept. The group goes on on its other replicas; the broker restarted once the
     * disk is repaired recovers this one from its last snapshot and the Raft log.
     */
    private void stopOnDiskError(String doing, UncheckedIOException e) {
        String error = doing + " failed: " + e.getMessage();
        host.stopOnDiskError(error);
        listener.stoppedOnDiskError(getGroupId(), error);
        LOG.error("{}: {}; this replica stops, the group goes on on its other replicas; restart the broker once the "
                + "disk is repaired", who(), error, e);
    }

    /** Waits for a snapshot being written to end (logs and files must stay until it did); on the apply thread. */
    private void awaitWriting() {
        CompletableFuture<Written> written = writing;
        writing = null;
        if (written != null) {
            try {
                written.join();
            } catch (CompletionException e) {
                LOG.warn("{}: a snapshot was not written: {}", who(), e.getCause().toString());
            }
        }
    }

    /**
     * The leader no longer has the Raft entries this replica needs next (it lost its Raft log, or it is new): copies
     * the leader's latest snapshot (its partition logs up to the snapshot's log ends) through the brokers' API
     * ({@link CatchUp}); the reload then takes the copy as its logs. A failed copy fails the future: Ratis asks again
     * at its next attempt and the copy starts over.
     */
    @Override
    CompletableFuture<TermIndex> installFromLeader(int leader, TermIndex firstInLeaderLog) {
        CatchUp.Replica replica = new CatchUp.Replica(getId().toString(), getGroupId().getUuid(),
                new StagedInstall(smDir), configs, () -> closed);
        return catchUp.install(replica, leader, firstInLeaderLog.getIndex())
                .thenApply(snapshot -> TermIndex.valueOf(snapshot.getTerm(), snapshot.getIndex()));
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
        listener.leaderChanged(getGroupId());
        leadershipEvent();
    }

    /** This replica, elected, has applied what its predecessors committed: it takes writes now. */
    @Override
    public void notifyLeaderReady() {
        leadershipEvent();
    }

    /**
     * Completes at this replica's next leadership event: it learned of a new leader (another replica or itself; Ratis
     * does not tell of a leader lost), or it became ready to lead. Dependents run on a Ratis thread (the leader
     * notice under the server's lock, readiness on the apply thread): they must be short.
     */
    public CompletableFuture<Void> nextLeadershipEvent() {
        return nextLeadershipEvent.get();
    }

    private void leadershipEvent() {
        nextLeadershipEvent.getAndSet(new CompletableFuture<>()).complete(null);
    }

    /**
     * Reloads after a snapshot was installed: closes the logs and opens them again, which completes the committed
     * install ({@link StagedInstall#finish}) and sets the applied index to the snapshot's.
     */
    @Override
    void reload() throws IOException {
        awaitWriting();
        host.close();
        openPartitions();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.closed(getGroupId());
        PartitionHost started = host;
        awaitWriting();
        if (started != null) {
            started.close();
        }
        super.close();
    }

    /** This replica, as messages name it. */
    private String who() {
        return "Raft group " + groupUuid() + " on " + getId();
    }

    /** The group of a state machine Ratis built for it, as an id other code names it by. */
    public UUID groupUuid() {
        return getGroupId().getUuid();
    }
}
