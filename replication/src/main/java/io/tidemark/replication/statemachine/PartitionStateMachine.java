package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CompletableFuture;

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
 *   <li>A snapshot is the log itself: {@link #takeSnapshot} fsyncs it and records (term, index, log end offset).
 *       At start the log is cut back to the snapshot's log end offset and Ratis replays the entries after it, so
 *       a batch applied before a crash but after the snapshot is not appended twice.</li>
 * </ul>
 *
 * <p>Threading: Ratis calls apply on its state machine updater thread, one entry at a time; readers use the
 * partition log, which is safe to read concurrently.
 */
public final class PartitionStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionStateMachine.class);

    private final PartitionIdentityStore identities;
    private final InstantSource clock;
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private volatile PartitionLog log;
    private volatile CompletableFuture<Void> nextAppend = new CompletableFuture<>();
    private long lastStampedMs = Long.MIN_VALUE;
    private volatile long snapshotLogEndOffset;

    public PartitionStateMachine(PartitionIdentityStore identities, InstantSource clock) {
        this.identities = identities;
        this.clock = clock;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        getLifeCycle().startAndTransition(() -> openLog(raftStorage.getStorageDir().getStateMachineDir().toPath()));
    }

    private void openLog(Path smDir) throws IOException {
        TopicConfig config = identities.config(getGroupId(), smDir);
        PartitionLog opened = PartitionLog.open(smDir.resolve("log"), config, clock.millis());
        SingleFileSnapshotInfo snapshot = storage.loadLatestSnapshot();
        long snapshotLogEnd = snapshot == null ? 0 : readSnapshot(snapshot.getFile().getPath());
        opened.truncateTo(snapshotLogEnd);
        snapshotLogEndOffset = snapshotLogEnd;
        if (snapshot != null) {
            setLastAppliedTermIndex(snapshot.getTermIndex());
        }
        log = opened;
        LOG.info("{}: partition log opened at {} (snapshot {}, log end offset {})", getId(), smDir,
                snapshot == null ? "none" : snapshot.getTermIndex(), opened.logEndOffset());
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
        return snapshotLogEndOffset;
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
        File file = storage.getSnapshotFile(applied.getTerm(), applied.getIndex());
        long logEnd = partitionLog.logEndOffset();
        Files.write(file.toPath(), ByteBuffer.allocate(8).putLong(logEnd).array());
        FileInfo info = new FileInfo(file.toPath(), MD5FileUtil.computeAndSaveMd5ForFile(file));
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(info, applied));
        snapshotLogEndOffset = logEnd;
        return applied.getIndex();
    }

    /** A snapshot file holds the partition's log end offset at the snapshot's index (8 bytes, big-endian). */
    private static long readSnapshot(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        if (bytes.length != 8) {
            throw new IOException("snapshot " + file + " has " + bytes.length + " bytes, not 8");
        }
        return ByteBuffer.wrap(bytes).getLong();
    }

    /**
     * The leader purged entries this replica still needs: it can only happen to a replica that lost its Raft log,
     * since a leader purges only what every follower has. Copying the partition's segments from the leader is not
     * built yet, so the replica refuses loudly rather than pretend it caught up, and stays behind.
     */
    @Override
    public CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(
            org.apache.ratis.proto.RaftProtos.RoleInfoProto roleInfo, TermIndex firstTermIndexInLog) {
        LOG.error("{}: the leader no longer has the Raft entries from {} this replica needs; catching up by copying "
                + "the partition's segments is not supported yet", getId(), firstTermIndexInLog);
        return CompletableFuture.failedFuture(new IOException("segment copy from the leader is not supported yet"));
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public void close() throws IOException {
        PartitionLog current = log;
        if (current != null) {
            current.close();
        }
        nextAppend.complete(null);
        super.close();
    }
}
