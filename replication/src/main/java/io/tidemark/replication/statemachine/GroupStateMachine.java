package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.BatchAdmission;
import io.tidemark.core.log.DurableFiles;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupChangeReply;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.PartitionEnd;
import io.tidemark.proto.v1.PartitionSnapshot;
import io.tidemark.proto.v1.PartitionState;
import io.tidemark.replication.snapshot.CatchUp;
import io.tidemark.replication.snapshot.GroupSnapshotFile;
import io.tidemark.replication.snapshot.PartitionDirectories;
import io.tidemark.replication.snapshot.StagedInstall;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
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
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The state machine of a partition group: a Raft group that hosts many partitions, each a {@link PartitionLog} in the
 * group's state machine directory ({@link PartitionDirectories}), fed by the group's committed entries
 * ({@link GroupEntryFormat}). Consensus is paid per group: one Raft log, one fsync and one round per entry, however
 * many partitions the entry's batches go to.
 * <ul>
 *   <li>Which partitions it hosts is decided in its own log, by partition change entries (added empty, removed and
 *       deleted), so every replica applies every batch against the same set, also when replaying. A partition that
 *       moves between groups ({@code PartitionMove}) is imported by the group it joins (added empty and importing,
 *       it takes only batches copied from the other group, as they are, until it is activated with the log end
 *       offset the copy must reach) and sealed in the group it leaves (its batches are refused from then on, so its
 *       log ends where the copy ends).</li>
 *   <li>The leader stamps each batch's slot in {@link #preAppendTransaction}, which Ratis calls on the leader only,
 *       in log order: ReceiveTime {@code max(clock, last stamped for the partition, last in its log)}, so ReceiveTime
 *       never decreases in a partition across leaders whose clocks disagree, and the verdict on its SendTimes against
 *       its topic's window around that time.</li>
 *   <li>{@link #applyTransaction} appends each batch whose verdict lets it through to its partition, with
 *       {@code max(stamped, last ReceiveTime of the log)}, on every replica, so all store identical bytes; it never
 *       consults a topic's config (each replica takes config changes at its own moment): a batch is refused at apply
 *       only for what the log itself decides (producer sequences, origin offsets) or for a partition the group does
 *       not host. It replies with each batch's outcome; the applied index only moves forward.</li>
 *   <li>A snapshot is the partition logs themselves: {@link #takeSnapshot} fsyncs them and records (term, index) and
 *       each partition with its log end offset ({@link GroupSnapshotFile}). At start each log is cut back to its
 *       snapshot's log end offset, the directories of partitions the snapshot does not name are deleted, and Ratis
 *       replays the entries after it (adding those partitions again), so nothing applied after the snapshot is
 *       appended twice. A log shorter than its snapshot's end refuses the start: replaying onto it would give the
 *       entries' batches other offsets than on the other replicas. So the files of a partition removed (or whose
 *       copy starts again) after the snapshot are set aside, not deleted, until a snapshot no longer names it
 *       ({@link PartitionDirectories#setAside}), and a restart takes them back.</li>
 *   <li>A replica behind the leader's purged Raft log catches up by copying the leader's latest snapshot
 *       ({@link #notifyInstallSnapshotFromLeader}, {@link CatchUp}); Ratis then pauses and reinitializes the state
 *       machine, which replaces its logs by the copy ({@link StagedInstall}) and continues after the snapshot.</li>
 * </ul>
 *
 * <p>Threading: Ratis calls apply, snapshots and {@link #reinitialize} on its state machine updater thread, one at a
 * time, and {@link #startTransaction} and {@link #preAppendTransaction} on the leader's request path (the latter under
 * the Raft log's write lock, in log order); readers use the hosted partitions' logs, which are safe to read
 * concurrently (a reader that meets the logs being replaced gets NOT_AVAILABLE and retries).
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
    private final CatchUp catchUp;
    private final InstantSource clock;
    private final Listener listener;
    private final AtomicReference<CompletableFuture<Void>> nextLeadershipEvent =
            new AtomicReference<>(new CompletableFuture<>());
    private final Map<PartitionKey, HostedPartition> hosted = new ConcurrentHashMap<>();
    private final ThreadLocal<BatchAdmission> admissions = ThreadLocal.withInitial(BatchAdmission::new);
    /** The leader's last stamp per partition: only {@link #preAppendTransaction} uses it, in log order. */
    private final Map<PartitionKey, Long> lastStampedMs = new HashMap<>();
    private volatile Path smDir;
    private volatile boolean running;
    private volatile GroupSnapshot latestSnapshot;
    private volatile long metadataIndex;
    private volatile boolean closed;

    /**
     * @param configs       a topic's config from the overrides a partition was added with (over this broker's
     *                      defaults): segment sizes and retention of the logs, and the leader's SendTime window
     * @param listener      told when this replica starts, stops and sees a new leader
     */
    public GroupStateMachine(Function<Map<String, String>, TopicConfig> configs, CatchUp catchUp, InstantSource clock,
                             Listener listener) {
        this.configs = configs;
        this.catchUp = catchUp;
        this.clock = clock;
        this.listener = listener;
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
    }

    @Override
    void load(Path smDir) throws IOException {
        this.smDir = smDir;
        openPartitions();
        listener.started(getServer().join(), getGroupId());
    }

    /**
     * Opens the partition logs: first completes an install whose copy was committed (or discards one that was not),
     * then opens each partition of the latest snapshot cut back to its log end offset and deletes the directories of
     * the others, from where Ratis replays.
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
        Files.createDirectories(partitionsDir);
        SingleFileSnapshotInfo info = latestSnapshotOrWholeLog("Raft group " + groupUuid() + " on " + getId());
        GroupSnapshot snapshot = info == null ? GroupSnapshot.getDefaultInstance()
                : GroupSnapshotFile.read(info.getFile().getPath());
        Set<String> kept = new HashSet<>();
        for (PartitionSnapshot partition : snapshot.getPartitionsList()) {
            String name = PartitionDirectories.name(partition.getPartition());
            kept.add(name);
            Path dir = partitionsDir.resolve(name);
            takeBackSetAside(partitionsDir, name, snapshot.getIndex());
            PartitionLog log = PartitionLog.open(dir, configs.apply(partition.getPartition().getOverridesMap()),
                    clock.millis());
            if (log.logEndOffset() < partition.getLogEndOffset()) {
                log.close();
                throw new IOException("Raft group " + groupUuid() + " on " + getId() + " does not start: the log of "
                        + "partition " + name + " in " + dir + " ends at offset " + log.logEndOffset() + ", below "
                        + partition.getLogEndOffset() + " where the group's snapshot at index " + snapshot.getIndex()
                        + " says it ends: its files were truncated or lost. Replaying the group's entries onto it "
                        + "would give their batches other offsets than on the other replicas; restore the files, or "
                        + "delete the group's directory " + smDir.getParent() + " so that this replica copies the "
                        + "leader's logs when it joins the group again");
            }
            log.truncateTo(partition.getLogEndOffset());
            hosted.put(PartitionKey.of(partition.getPartition()), new HostedPartition(partition.getPartition(), log,
                    partition.getState()));
        }
        deleteOthers(partitionsDir, kept);
        latestSnapshot = info == null ? null : snapshot;
        metadataIndex = snapshot.getMetadataIndex();
        if (info != null) {
            setLastAppliedTermIndex(info.getTermIndex());
        }
        running = true;
        LOG.info("{}: {} partition logs opened in {} (snapshot {})", getId(), hosted.size(), partitionsDir,
                info == null ? "none" : info.getTermIndex());
    }

    /**
     * Puts back the files a partition had at the snapshot when an entry after it set them aside (a removal, a copy
     * that started again): those of the first such entry, over whatever the entries after it left in their place.
     */
    private void takeBackSetAside(Path partitionsDir, String name, long snapshotIndex) throws IOException {
        Optional<Path> setAside;
        try (Stream<Path> dirs = Files.list(partitionsDir)) {
            setAside = dirs.filter(d -> PartitionDirectories.setAsideIndex(d, name).orElse(-1) > snapshotIndex)
                    .min(Comparator.comparingLong(d -> PartitionDirectories.setAsideIndex(d, name).orElseThrow()));
        }
        if (setAside.isPresent()) {
            Path dir = partitionsDir.resolve(name);
            DurableFiles.deleteTree(dir);
            DurableFiles.move(setAside.get(), dir);
            LOG.info("{}: took back {}, the files of {} at the snapshot", getId(), setAside.get().getFileName(), name);
        }
    }

    /**
     * Keeps the files of a partition an entry at {@code index} removes or replaces while the latest snapshot names
     * the partition: a restart opens the partition as the snapshot left it and replays the entries after it, this one
     * included. They are deleted once a snapshot no longer names them; files no snapshot names are deleted at once.
     */
    private void setAside(Path partitionsDir, GroupPartition partition, long index) throws IOException {
        Path dir = partitionsDir.resolve(PartitionDirectories.name(partition));
        GroupSnapshot snapshot = latestSnapshot;
        boolean named = snapshot != null && snapshot.getPartitionsList().stream()
                .anyMatch(p -> PartitionKey.of(p.getPartition()).equals(PartitionKey.of(partition)));
        if (named) {
            DurableFiles.move(dir, PartitionDirectories.setAside(dir, index));
        } else {
            DurableFiles.deleteTree(dir);
            DurableFiles.syncDirectory(partitionsDir);
        }
    }

    /** Deletes the files set aside for the previous snapshot, which no snapshot names any more. */
    private void deleteSetAside(Path partitionsDir) throws IOException {
        List<Path> setAside;
        try (Stream<Path> dirs = Files.list(partitionsDir)) {
            setAside = dirs.filter(PartitionDirectories::isSetAside).toList();
        }
        for (Path dir : setAside) {
            DurableFiles.deleteTree(dir);
        }
        if (!setAside.isEmpty()) {
            DurableFiles.syncDirectory(partitionsDir);
        }
    }

    /** Deletes the partition directories the snapshot does not name: replay adds those partitions again. */
    private void deleteOthers(Path partitionsDir, Set<String> kept) throws IOException {
        List<Path> others;
        try (Stream<Path> dirs = Files.list(partitionsDir)) {
            others = dirs.filter(dir -> !kept.contains(dir.getFileName().toString())).toList();
        }
        for (Path dir : others) {
            DurableFiles.deleteTree(dir);
        }
        if (!others.isEmpty()) {
            DurableFiles.syncDirectory(partitionsDir);
            LOG.info("{}: deleted {} partition directories its snapshot does not name; the entries after it add them "
                    + "again", getId(), others.size());
        }
    }

    /** Records a snapshot where Ratis finds it; every log it names must be fsynced up to its log end offset. */
    private void recordSnapshot(GroupSnapshot snapshot) throws IOException {
        File file = storage().getSnapshotFile(snapshot.getTerm(), snapshot.getIndex());
        GroupSnapshotFile.write(file.toPath(), snapshot);
        FileInfo info = new FileInfo(file.toPath(), MD5FileUtil.computeAndSaveMd5ForFile(file));
        rememberSnapshot(new SingleFileSnapshotInfo(info, TermIndex.valueOf(snapshot.getTerm(), snapshot.getIndex())));
        latestSnapshot = snapshot;
    }

    /**
     * A hosted partition; empty when the group does not host it (yet: a partition change that adds it may be on its
     * way).
     *
     * @throws TidemarkException NOT_AVAILABLE (retriable) while the replica is starting or reloading its logs
     */
    public Optional<HostedPartition> partition(PartitionKey key) {
        if (!running) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the replica of Raft group " + getGroupId()
                    + " on this broker is starting or reloading its partition logs");
        }
        return Optional.ofNullable(hosted.get(key));
    }

    /**
     * The largest metadata index of the partition changes this replica applied: a broker changes the group only from
     * a view of the metadata at least this new.
     */
    public long metadataIndex() {
        return metadataIndex;
    }

    /** The partitions this replica hosts now. */
    public Set<PartitionKey> hostedPartitions() {
        return Set.copyOf(hosted.keySet());
    }

    /** What the leader stamps into a batch entry in {@link #preAppendTransaction}: its table, and its refusals. */
    private static final class StampedEntry {
        private final byte[] table;
        private final ByteString data;
        private final String[] refusals;

        private StampedEntry(byte[] table, ByteString data, int count) {
            this.table = table;
            this.data = data;
            this.refusals = new String[count];
        }
    }

    /**
     * Makes the entry of a request. For batches: the table in an array of its own joined to the batches, not copied
     * ({@link GroupEntryFormat#stampable}); the array is the transaction's context, so {@link #preAppendTransaction}
     * can stamp it: Ratis builds the log entry from these bytes only after that.
     */
    @Override
    public TransactionContext startTransaction(RaftClientRequest request) {
        ByteString content = request.getMessage().getContent();
        TransactionContext.Builder builder = TransactionContext.newBuilder().setStateMachine(this)
                .setClientRequest(request);
        if (content.isEmpty() || GroupEntryFormat.type(content) != GroupEntryFormat.BATCHES) {
            return builder.setLogData(content).build();
        }
        GroupEntryFormat.Stampable entry = GroupEntryFormat.stampable(content);
        return builder.setLogData(entry.data()).setStateMachineContext(new StampedEntry(entry.array(), entry.data(),
                GroupEntryFormat.count(content))).build();
    }

    @Override
    public TransactionContext preAppendTransaction(TransactionContext trx) {
        if (!(trx.getStateMachineContext() instanceof StampedEntry entry)) {
            return trx;
        }
        long now = clock.millis();
        ByteBuffer table = ByteBuffer.wrap(entry.table);
        for (int i = 0; i < entry.refusals.length; i++) {
            GroupEntryFormat.Slot slot = GroupEntryFormat.slot(table, i);
            HostedPartition partition = hosted.get(slot.partition());
            long last = Math.max(lastStampedMs.getOrDefault(slot.partition(), 0L),
                    partition == null ? 0 : partition.log().lastReceiveTimeMs().orElse(0));
            long stamp = Math.max(now, last);
            lastStampedMs.put(slot.partition(), stamp);
            short verdict = GroupEntryFormat.APPEND;
            if (partition != null) {
                TopicConfig config = partition.log().config();
                BatchAdmission.Admitted admitted = new BatchAdmission.Admitted(slot.mirrored(), slot.minSendTimeMs(),
                        slot.maxSendTimeMs());
                if (!BatchAdmission.sendTimesAllowed(admitted, config, stamp)) {
                    verdict = (short) ErrorCode.INVALID_TIMESTAMP.getNumber();
                    entry.refusals[i] = refusal(entry, i, admitted, config, stamp);
                }
            }
            GroupEntryFormat.stamp(entry.table, i, stamp, verdict);
        }
        return trx;
    }

    /** Why the leader refused batch {@code i} of an entry: the record outside the window, named. */
    private String refusal(StampedEntry entry, int i, BatchAdmission.Admitted admitted, TopicConfig config,
                           long stamp) {
        ByteBuffer batch = GroupEntryFormat.batches(entry.data).get(i);
        try {
            admissions.get().checkSendTimes(batch, admitted, config, stamp);
            throw new IllegalStateException("batch " + i + " was refused but its SendTimes fit");
        } catch (TidemarkException e) {
            return e.getMessage();
        }
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        ByteString data = entry.getStateMachineLogEntry().getLogData();
        ByteString reply = ByteString.EMPTY;
        if (!data.isEmpty()) {
            switch (GroupEntryFormat.type(data)) {
                case GroupEntryFormat.BATCHES -> reply = UnsafeByteOperations.unsafeWrap(applyBatches(data,
                        trx.getStateMachineContext() instanceof StampedEntry stamped ? stamped : null));
                case GroupEntryFormat.CHANGE -> reply = UnsafeByteOperations.unsafeWrap(applyChange(
                        GroupEntryFormat.readChange(data), entry.getIndex()).toByteArray());
                case GroupEntryFormat.COPY -> reply = UnsafeByteOperations.unsafeWrap(applyCopy(
                        data.asReadOnlyByteBuffer(), entry.getIndex()));
                default -> throw new IllegalStateException(getId() + ": entry " + entry.getIndex() + " has type "
                        + GroupEntryFormat.type(data) + ", which this broker does not know");
            }
        }
        if (!updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex())) {
            throw new IllegalStateException("applied index of " + getGroupId() + " would move back to "
                    + entry.getIndex());
        }
        return CompletableFuture.completedFuture(Message.valueOf(reply));
    }

    /**
     * Appends the batches of an entry to their partitions, as the leader's verdicts say.
     *
     * @param stamped the leader's context of the entry (it carries the refusals' words); null on followers and when
     *                replaying
     */
    private byte[] applyBatches(ByteString data, StampedEntry stamped) {
        ByteBuffer table = GroupEntryFormat.table(data);
        List<ByteBuffer> batches = GroupEntryFormat.batches(data);
        GroupEntryFormat.ReplyWriter reply = new GroupEntryFormat.ReplyWriter(batches.size());
        Set<HostedPartition> appendedTo = new LinkedHashSet<>();
        for (int i = 0; i < batches.size(); i++) {
            GroupEntryFormat.Slot slot = GroupEntryFormat.slot(table, i);
            HostedPartition partition = hosted.get(slot.partition());
            if (slot.verdict() != GroupEntryFormat.APPEND) {
                ErrorCode code = ErrorCode.forNumber(slot.verdict());
                reply.refused(code == null ? ErrorCode.INTERNAL_ERROR : code, stamped != null
                        && stamped.refusals[i] != null ? stamped.refusals[i] : "the partition's leader refused the "
                        + "batch (" + code + ")");
            } else if (partition == null) {
                reply.refused(ErrorCode.UNKNOWN_PARTITION, "Raft group " + getGroupId() + " does not host "
                        + slot.partition() + " (it was removed, or is not added yet); the batch was not appended");
            } else if (partition.state() != PartitionState.PARTITION_LIVE) {
                String where = partition.state() == PartitionState.PARTITION_SEALED ? "to other replicas"
                        : "into Raft group " + getGroupId();
                reply.refused(ErrorCode.NOT_AVAILABLE, partition.name() + " is moving " + where + "; the batch was "
                        + "not appended: retry, it goes to the partition's new replicas once the move completes");
            } else {
                try {
                    long receiveTimeMs = Math.max(slot.receiveTimeMs(), partition.log().lastReceiveTimeMs().orElse(0));
                    reply.appended(partition.log().append(batches.get(i), receiveTimeMs));
                    appendedTo.add(partition);
                } catch (TidemarkException e) {
                    reply.refused(e.code(), e.getMessage());
                }
            }
        }
        appendedTo.forEach(HostedPartition::signal);
        return reply.toBytes();
    }

    /**
     * Adds empty partitions (live, or importing), removes (closes and deletes) others, activates imported partitions
     * whose copy is whole and seals partitions that move out; what is already so is left as it is.
     */
    private GroupChangeReply applyChange(GroupChange change, long index) {
        Path partitionsDir = smDir.resolve(PartitionDirectories.PARTITIONS);
        GroupChangeReply.Builder reply = GroupChangeReply.newBuilder();
        metadataIndex = Math.max(metadataIndex, change.getMetadataIndex());
        try {
            for (GroupPartition partition : change.getRemoveList()) {
                HostedPartition removed = hosted.remove(PartitionKey.of(partition));
                if (removed != null) {
                    removed.log().close();
                    removed.signal();
                    setAside(partitionsDir, removed.partition(), index);
                    LOG.info("{}: removed {}", getId(), removed);
                }
            }
            for (GroupPartition partition : change.getAddList()) {
                addEmpty(partitionsDir, partition, PartitionState.PARTITION_LIVE);
            }
            for (GroupPartition partition : change.getImportList()) {
                addEmpty(partitionsDir, partition, PartitionState.PARTITION_IMPORTING);
            }
            DurableFiles.syncDirectory(partitionsDir);
        } catch (IOException e) {
            throw new IllegalStateException(getId() + ": applying a partition change failed: " + e.getMessage(), e);
        }
        for (PartitionEnd imported : change.getActivateList()) {
            HostedPartition partition = hosted.get(PartitionKey.of(imported.getPartition()));
            if (partition != null && partition.state() == PartitionState.PARTITION_IMPORTING
                    && partition.log().logEndOffset() == imported.getLogEndOffset()) {
                partition.state(PartitionState.PARTITION_LIVE);
                LOG.info("{}: {} moved in, its log ends at offset {}", getId(), partition,
                        imported.getLogEndOffset());
            }
        }
        for (GroupPartition sealed : change.getSealList()) {
            HostedPartition partition = hosted.get(PartitionKey.of(sealed));
            if (partition != null && partition.state() != PartitionState.PARTITION_IMPORTING) {
                if (partition.state() == PartitionState.PARTITION_LIVE) {
                    partition.state(PartitionState.PARTITION_SEALED);
                    LOG.info("{}: sealed {} at offset {} to move it out", getId(), partition,
                            partition.log().logEndOffset());
                }
                reply.addSealed(PartitionEnd.newBuilder().setPartition(partition.partition())
                        .setLogEndOffset(partition.log().logEndOffset()));
            }
        }
        return reply.build();
    }

    private void addEmpty(Path partitionsDir, GroupPartition partition, PartitionState state) throws IOException {
        PartitionKey key = PartitionKey.of(partition);
        if (!hosted.containsKey(key)) {
            PartitionLog log = PartitionLog.recreate(partitionsDir.resolve(PartitionDirectories.name(partition)),
                    configs.apply(partition.getOverridesMap()), 0, clock.millis());
            hosted.put(key, new HostedPartition(partition, log, state));
            LOG.info("{}: added {}", getId(), hosted.get(key));
        }
    }

    /**
     * Appends batches copied from the group a partition leaves, as they are (offsets, ReceiveTimes and CRCs kept):
     * only to a partition that is importing. Batches the log holds already (a copy submitted again) are skipped; when
     * the copied log's start is past this log's end (retention removed what the copy had not reached), the copy
     * starts again there, empty.
     */
    private byte[] applyCopy(ByteBuffer entry, long index) {
        GroupEntryFormat.Copy copy = GroupEntryFormat.readCopy(entry);
        HostedPartition partition = hosted.get(copy.partition());
        if (partition == null) {
            return GroupEntryFormat.copyReply(-1, new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "Raft group "
                    + getGroupId() + " does not host " + copy.partition() + "; the copied batches were not taken"));
        }
        if (partition.state() != PartitionState.PARTITION_IMPORTING) {
            return GroupEntryFormat.copyReply(partition.log().logEndOffset(), new TidemarkException(
                    ErrorCode.INVALID_REQUEST, partition + " is not moving in: it takes no copied batches"));
        }
        try {
            if (copy.logStartOffset() > partition.log().logEndOffset()) {
                partition = restartCopy(partition, copy.logStartOffset(), index);
            }
            PartitionLog log = partition.log();
            ByteBuffer batches = copy.batches();
            int at = batches.position();
            while (at < batches.limit()) {
                int size = batches.limit() - at < RecordBatchFormat.HEADER_SIZE_BYTES ? -1
                        : RecordBatchFormat.totalSize(batches, at);
                if (size < RecordBatchFormat.HEADER_SIZE_BYTES || at + size > batches.limit()) {
                    throw new TidemarkException(ErrorCode.CORRUPT_BATCH, "the copied batches of " + partition
                            + " do not split into whole batches at byte " + at);
                }
                ByteBuffer batch = batches.slice(at, size);
                if (RecordBatchFormat.lastOffset(batch, 0) >= log.logEndOffset()) {
                    log.appendStamped(batch);
                }
                at += size;
            }
        } catch (TidemarkException e) {
            return GroupEntryFormat.copyReply(partition.log().logEndOffset(), e);
        } catch (IOException e) {
            throw new IllegalStateException(getId() + ": restarting the copy of " + partition + " failed: "
                    + e.getMessage(), e);
        }
        partition.signal();
        return GroupEntryFormat.copyReply(partition.log().logEndOffset(), null);
    }

    /** An importing partition whose copy starts again, empty, at {@code logStartOffset}. */
    private HostedPartition restartCopy(HostedPartition partition, long logStartOffset, long index)
            throws IOException {
        long copiedEnd = partition.log().logEndOffset();
        partition.log().close();
        partition.signal();
        Path partitionsDir = smDir.resolve(PartitionDirectories.PARTITIONS);
        setAside(partitionsDir, partition.partition(), index);
        PartitionLog log = PartitionLog.recreate(
                partitionsDir.resolve(PartitionDirectories.name(partition.partition())),
                configs.apply(partition.partition().getOverridesMap()), logStartOffset, clock.millis());
        HostedPartition restarted = new HostedPartition(partition.partition(), log, PartitionState.PARTITION_IMPORTING);
        hosted.put(restarted.key(), restarted);
        LOG.info("{}: the copy of {} starts again at offset {}: the log it copies no longer holds offset {}", getId(),
                restarted, logStartOffset, copiedEnd);
        return restarted;
    }

    /**
     * The latest snapshot of this replica, each partition with its log's start offset now (at most the snapshot's
     * end), for a replica that catches up from it; empty before the first snapshot.
     */
    public Optional<GroupSnapshot> latestSnapshot() {
        GroupSnapshot snapshot = latestSnapshot;
        if (snapshot == null) {
            return Optional.empty();
        }
        GroupSnapshot.Builder now = snapshot.toBuilder().clearPartitions();
        for (PartitionSnapshot partition : snapshot.getPartitionsList()) {
            HostedPartition hostedNow = hosted.get(PartitionKey.of(partition.getPartition()));
            long start = hostedNow == null ? partition.getLogStartOffset() : hostedNow.log().logStartOffset();
            now.addPartitions(partition.toBuilder().setLogStartOffset(Math.min(start, partition.getLogEndOffset())));
        }
        return Optional.of(now.build());
    }

    /**
     * The log end offset of a partition in the latest snapshot: retention keeps its segments from there on, since a
     * restart cuts the log back to it and replays the Raft log; 0 before the partition's first snapshot.
     */
    public long snapshotLogEndOffset(PartitionKey key) {
        GroupSnapshot snapshot = latestSnapshot;
        if (snapshot == null) {
            return 0;
        }
        for (PartitionSnapshot partition : snapshot.getPartitionsList()) {
            if (PartitionKey.of(partition.getPartition()).equals(key)) {
                return partition.getLogEndOffset();
            }
        }
        return 0;
    }

    @Override
    public long takeSnapshot() throws IOException {
        TermIndex applied = getLastAppliedTermIndex();
        if (applied == null || applied.getIndex() < 0) {
            return -1;
        }
        long nowMs = clock.millis();
        GroupSnapshot.Builder snapshot = GroupSnapshot.newBuilder().setTerm(applied.getTerm())
                .setIndex(applied.getIndex()).setMetadataIndex(metadataIndex);
        List<HostedPartition> partitions = new ArrayList<>(hosted.values());
        partitions.sort(Comparator.comparing(p -> PartitionDirectories.name(p.partition())));
        for (HostedPartition partition : partitions) {
            partition.log().flush(nowMs);
            snapshot.addPartitions(PartitionSnapshot.newBuilder().setPartition(partition.partition())
                    .setLogStartOffset(partition.log().logStartOffset())
                    .setLogEndOffset(partition.log().logEndOffset()).setState(partition.state()));
        }
        recordSnapshot(snapshot.build());
        deleteSetAside(smDir.resolve(PartitionDirectories.PARTITIONS));
        return applied.getIndex();
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
        closeLogs();
        openPartitions();
    }

    private void closeLogs() throws IOException {
        running = false;
        List<HostedPartition> closing = new ArrayList<>(hosted.values());
        hosted.clear();
        for (HostedPartition partition : closing) {
            partition.log().close();
            partition.signal();
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.closed(getGroupId());
        closeLogs();
        super.close();
    }

    /** The group of a state machine Ratis built for it, as an id other code names it by. */
    public UUID groupUuid() {
        return getGroupId().getUuid();
    }
}
