package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.snapshot.CatchUp;
import io.tidemark.replication.snapshot.SnapshotDescriptor;
import io.tidemark.replication.snapshot.SnapshotFile;
import io.tidemark.replication.snapshot.StagedInstall;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The state machine of a partition's Raft group: the partition's {@link PartitionLog}, fed by the group's
 * committed entries ({@link PartitionEntryFormat}).
 * <ul>
 *   <li>The leader wraps a request (one or more batches) into an entry ({@link #startTransaction}) and stamps its
 *       ReceiveTime in {@link #preAppendTransaction}, which Ratis calls on the leader only, in log order:
 *       {@code max(clock, last stamped, last applied)}, so ReceiveTime never decreases across leaders whose clocks
 *       disagree.</li>
 *   <li>{@link #applyTransaction} appends the entry's batches in order, each with {@code max(stamped, last
 *       ReceiveTime of the log)}, on every replica, so all store identical bytes, and replies with each batch's
 *       outcome; the applied index only moves forward.</li>
 *   <li>A snapshot is the log itself: {@link #takeSnapshot} fsyncs it and records (term, index, log end offset)
 *       ({@link SnapshotFile}). At start the log is cut back to the snapshot's log end offset and Ratis replays
 *       the entries after it, so a batch applied before a crash but after the snapshot is not appended twice.</li>
 *   <li>A replica behind the leader's purged Raft log catches up by copying the leader's latest snapshot
 *       ({@link #notifyInstallSnapshotFromLeader}, {@link CatchUp}); Ratis then pauses and reinitializes the state
 *       machine, which replaces its log by the copy ({@link StagedInstall}) and continues after the snapshot.</li>
 * </ul>
 *
 * <p>Threading: Ratis calls apply, snapshots and {@link #reinitialize} on its state machine updater thread, one
 * at a time; readers use the partition log, which is safe to read concurrently (a reader that meets the log being
 * replaced gets NOT_AVAILABLE and retries).
 */
public final class PartitionStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionStateMachine.class);

    private static final String LOG_DIR = "log";
    private static final SnapshotRetentionPolicy ONLY_LATEST = new SnapshotRetentionPolicy() {
        @Override
        public int getNumSnapshotsRetained() {
            return 1;
        }
    };

    private final PartitionIdentityStore identities;
    private final CatchUp catchUp;
    private final InstantSource clock;
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private volatile Path smDir;
    private volatile PartitionIdentityStore.Identity identity;
    private volatile PartitionLog log;
    private volatile CompletableFuture<Void> nextAppend = new CompletableFuture<>();
    private volatile SnapshotPoint latestSnapshot;
    private volatile boolean closed;
    private long lastStampedMs = Long.MIN_VALUE;

    /** A snapshot of this replica: the Raft entry it includes and the log end offset at it. */
    private record SnapshotPoint(TermIndex termIndex, long logEndOffset) {
    }

    public PartitionStateMachine(PartitionIdentityStore identities, CatchUp catchUp, InstantSource clock) {
        this.identities = identities;
        this.catchUp = catchUp;
        this.clock = clock;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        smDir = raftStorage.getStorageDir().getStateMachineDir().toPath();
        identity = identities.identity(groupId, smDir);
        TopicConfig config = identities.effective(identity.overrides());
        getLifeCycle().startAndTransition(() -> openLog(config));
    }

    /**
     * Opens the partition log: first completes an install whose copy was committed (or discards one that was
     * not), then cuts the log back to the latest snapshot's log end offset, from where Ratis replays.
     */
    private void openLog(TopicConfig config) throws IOException {
        Path logDir = smDir.resolve(LOG_DIR);
        Optional<SnapshotDescriptor> installed = new StagedInstall(smDir).finish(logDir, snapshot ->
                recordSnapshot(TermIndex.valueOf(snapshot.term(), snapshot.index()), snapshot.logEndOffset()));
        if (installed.isPresent()) {
            storage.cleanupOldSnapshots(ONLY_LATEST);
        }
        PartitionLog opened = PartitionLog.open(logDir, config, clock.millis());
        SingleFileSnapshotInfo snapshot = storage.loadLatestSnapshot();
        if (snapshot == null) {
            opened.truncateTo(0);
            latestSnapshot = null;
        } else {
            long snapshotLogEnd = SnapshotFile.read(snapshot.getFile().getPath());
            opened.truncateTo(snapshotLogEnd);
            latestSnapshot = new SnapshotPoint(snapshot.getTermIndex(), snapshotLogEnd);
            setLastAppliedTermIndex(snapshot.getTermIndex());
        }
        log = opened;
        LOG.info("{}: partition log opened at {} (snapshot {}, log offsets [{}, {}))", getId(), smDir,
                snapshot == null ? "none" : snapshot.getTermIndex(), opened.logStartOffset(), opened.logEndOffset());
    }

    /** Records a snapshot where Ratis finds it; the log up to {@code logEndOffset} must be fsynced. */
    private void recordSnapshot(TermIndex termIndex, long logEndOffset) throws IOException {
        File file = storage.getSnapshotFile(termIndex.getTerm(), termIndex.getIndex());
        SnapshotFile.write(file.toPath(), logEndOffset);
        FileInfo info = new FileInfo(file.toPath(), MD5FileUtil.computeAndSaveMd5ForFile(file));
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(info, termIndex));
        latestSnapshot = new SnapshotPoint(termIndex, logEndOffset);
    }

    /**
     * The partition's log.
     *
     * @throws TidemarkException NOT_AVAILABLE (retriable) while the replica is still starting
     */
    public PartitionLog log() {
        PartitionLog current = log;
        if (current == null) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the replica of Raft group " + getGroupId()
                    + " on this broker is still starting");
        }
        return current;
    }

    /**
     * Makes the entry of a request: a 9-byte header joined to the request's bytes, without copying them when the
     * join is a rope that shares the header's array (protobuf copies small joins instead; then the entry is one
     * array). The array that starts with the header is the transaction's context, so {@link #preAppendTransaction}
     * can stamp it: Ratis builds the log entry from these bytes only after that.
     */
    @Override
    public TransactionContext startTransaction(RaftClientRequest request) {
        byte[] header = PartitionEntryFormat.entryHeader();
        ByteString data = UnsafeByteOperations.unsafeWrap(header).concat(request.getMessage().getContent());
        if (!sharesFirstBytes(data, header)) {
            header = data.toByteArray();
            data = UnsafeByteOperations.unsafeWrap(header);
        }
        return TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request).setLogData(data)
                .setStateMachineContext(header).build();
    }

    /** Whether {@code data} reads its first bytes from {@code array}: a write to the array shows through. */
    private static boolean sharesFirstBytes(ByteString data, byte[] array) {
        int at = PartitionEntryFormat.RECEIVE_TIME_OFFSET;
        array[at] = 1;
        boolean shared = data.byteAt(at) == 1;
        array[at] = 0;
        return shared;
    }

    @Override
    public TransactionContext preAppendTransaction(TransactionContext trx) {
        long stamp = Math.max(clock.millis(), Math.max(lastStampedMs, log().lastReceiveTimeMs().orElse(0)));
        lastStampedMs = stamp;
        PartitionEntryFormat.stamp((byte[]) trx.getStateMachineContext(), stamp);
        return trx;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        ByteBuffer data = entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer();
        long stamped = PartitionEntryFormat.stampedReceiveTime(data);
        List<ByteBuffer> batches = PartitionEntryFormat.batches(data);
        PartitionLog partitionLog = log();
        PartitionEntryFormat.ReplyWriter reply = new PartitionEntryFormat.ReplyWriter(batches.size());
        for (ByteBuffer batch : batches) {
            try {
                long receiveTime = Math.max(stamped, partitionLog.lastReceiveTimeMs().orElse(0));
                reply.appended(partitionLog.append(writableCopy(batch), receiveTime));
            } catch (TidemarkException e) {
                reply.refused(e);
            }
        }
        if (!updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex())) {
            throw new IllegalStateException("applied index of " + getGroupId() + " would move back to "
                    + entry.getIndex());
        }
        CompletableFuture<Void> appended = nextAppend;
        nextAppend = new CompletableFuture<>();
        appended.complete(null);
        return CompletableFuture.completedFuture(Message.valueOf(UnsafeByteOperations.unsafeWrap(reply.toBytes())));
    }

    /** The log stamps offset, ReceiveTime and CRC into the batch it appends; the entry's bytes are read-only. */
    private static ByteBuffer writableCopy(ByteBuffer batch) {
        return ByteBuffer.allocate(batch.remaining()).put(batch.duplicate()).flip();
    }

    /**
     * The log end offset of the latest snapshot: retention keeps the segments from there on, since a restart cuts
     * the log back to it and replays the Raft log.
     */
    public long snapshotLogEndOffset() {
        SnapshotPoint snapshot = latestSnapshot;
        return snapshot == null ? 0 : snapshot.logEndOffset();
    }

    /**
     * The latest snapshot of this replica with the log's start offset now, for a replica that catches up from it;
     * empty before the first snapshot.
     */
    public Optional<SnapshotDescriptor> latestSnapshot() {
        SnapshotPoint snapshot = latestSnapshot;
        if (snapshot == null) {
            return Optional.empty();
        }
        return Optional.of(new SnapshotDescriptor(snapshot.termIndex().getTerm(), snapshot.termIndex().getIndex(),
                Math.min(log().logStartOffset(), snapshot.logEndOffset()), snapshot.logEndOffset()));
    }

    /** Completes when the next entry is applied (long-polling fetches wait on it). */
    public CompletableFuture<Void> nextAppend() {
        return nextAppend;
    }

    @Override
    public long takeSnapshot() throws IOException {
        TermIndex applied = getLastAppliedTermIndex();
        if (applied == null || applied.getIndex() < 0) {
            return -1;
        }
        PartitionLog partitionLog = log();
        partitionLog.flush(clock.millis());
        recordSnapshot(applied, partitionLog.logEndOffset());
        return applied.getIndex();
    }

    /**
     * The leader no longer has the Raft entries this replica needs next: a replica that lost its Raft log, or a
     * new replica (Ratis asks every replica joining a group once). When the leader still has them after all, the
     * answer is "no snapshot" and Ratis sends the entries. Otherwise the replica copies the leader's latest
     * snapshot (its partition log up to the snapshot's log end) through the brokers' API ({@link CatchUp}) and
     * answers its (term, index); Ratis then pauses and reinitializes this state machine, which takes the copy as its
     * log. A failed copy fails the future: Ratis asks again at its next attempt and the copy starts over.
     */
    @Override
    public CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(RoleInfoProto roleInfo,
                                                                        TermIndex firstTermIndexInLog) {
        long nextIndex = nextRaftIndex();
        if (firstTermIndexInLog.getIndex() <= nextIndex) {
            LOG.info("{}: the leader's Raft log starts at {}, this replica needs entries from {}: no snapshot needed",
                    getId(), firstTermIndexInLog, nextIndex);
            return CompletableFuture.completedFuture(null);
        }
        if (!roleInfo.hasFollowerInfo() || !roleInfo.getFollowerInfo().hasLeaderInfo()) {
            return CompletableFuture.failedFuture(new IOException("Ratis asked " + getId()
                    + " to install a snapshot without naming the leader"));
        }
        int leader = RaftPeerIds.nodeId(RaftPeerId.valueOf(roleInfo.getFollowerInfo().getLeaderInfo().getId().getId()));
        PartitionLog current = log;
        if (current == null) {
            return CompletableFuture.failedFuture(new IOException(getId() + " is reloading its partition log"));
        }
        CatchUp.Replica replica = new CatchUp.Replica(getId() + "@" + identity.partition(), identity.partition(),
                current.config(), new StagedInstall(smDir), () -> closed);
        return catchUp.install(replica, leader, firstTermIndexInLog.getIndex())
                .thenApply(snapshot -> TermIndex.valueOf(snapshot.term(), snapshot.index()));
    }

    /** The next Raft index this replica's log takes. */
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
    public void pause() {
        getLifeCycle().transition(LifeCycle.State.PAUSING);
        getLifeCycle().transition(LifeCycle.State.PAUSED);
    }

    /**
     * Reloads after a snapshot was installed: closes the log and opens it again, which completes the committed
     * install ({@link StagedInstall#finish}) and sets the applied index to the snapshot's.
     */
    @Override
    public void reinitialize() throws IOException {
        getLifeCycle().transition(LifeCycle.State.STARTING);
        PartitionLog previous = log;
        log = null;
        previous.close();
        openLog(previous.config());
        getLifeCycle().transition(LifeCycle.State.RUNNING);
        CompletableFuture<Void> waiting = nextAppend;
        nextAppend = new CompletableFuture<>();
        waiting.complete(null);
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        PartitionLog current = log;
        if (current != null) {
            current.close();
        }
        nextAppend.complete(null);
        super.close();
    }
}
