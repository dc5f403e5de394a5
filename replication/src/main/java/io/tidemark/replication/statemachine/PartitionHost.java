package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.log.AppendState;
import io.tidemark.core.log.BatchAdmission;
import io.tidemark.core.log.DurableFiles;
import io.tidemark.core.log.LogTooShortException;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupChangeReply;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.PartitionEnd;
import io.tidemark.proto.v1.PartitionSnapshot;
import io.tidemark.proto.v1.PartitionState;
import io.tidemark.replication.snapshot.AppendStateSnapshots;
import io.tidemark.replication.snapshot.PartitionDirectories;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The partitions a partition group hosts on one replica, and what each entry of the group's log does to them: the
 * deterministic core of {@link GroupStateMachine}, which adapts it to Ratis. It knows no Ratis server, reads no clock
 * (every call that needs "now" takes it) and is driven entry by entry, so tests apply the same entries to several
 * cores and compare what they hold.
 *
 * <p>What an entry does depends only on the entries before it and the snapshot the replica started from, never on
 * what else the replica holds or is configured with, so every replica decides the same:
 * <ul>
 *   <li>which partitions are hosted, in which state ({@link PartitionState}), with which topic overrides: decided by
 *       partition change entries ({@link GroupChange}: added, removed, imported, activated, sealed, released,
 *       unsealed, configured);</li>
 *   <li>each batch's ReceiveTime and SendTime verdict: stamped by the leader into the entry ({@link #stamp});</li>
 *   <li>each batch's offsets, its deduplication and origin checks: the partition's {@link AppendState} (end, last
 *       ReceiveTime, producers, origins), which changes only by appends and is carried over restarts in the group's
 *       snapshot ({@link #captureSnapshot}, {@link #open}). Compaction and retention, which run on each replica on its
 *       own schedule and settings, remove batches but never change it; a log's own config (this broker's defaults under
 *       the topic's overrides) shapes its segments, never an apply decision;</li>
 *   <li>how long producers are remembered ({@code producer.id.expiration.ms}): set by change entries, in the
 *       snapshot.</li>
 * </ul>
 *
 * <p>Files: each partition's log in {@code partitions/TOPIC-PARTITION-TOPICID/} of the state machine directory
 * ({@link PartitionDirectories}). At {@link #open} each partition of the snapshot is cut back to its log end offset,
 * and the directories of partitions it does not name are deleted: replaying the entries after it adds them again. A
 * partition removed (or whose copy starts again) while the latest snapshot names it is set aside, not deleted, so a
 * restart takes it back before replaying the removal.
 *
 * <p>Threading: entries are applied, snapshots captured, recorded and abandoned, and the core opened and closed on
 * one thread at a time (Ratis' updater; a capture's fsyncs run elsewhere, {@link SnapshotCapture}); {@link #stamp}
 * runs on the leader's request path, in log order; readers use the hosted partitions' logs, which are safe to read
 * concurrently.
 */
public final class PartitionHost {
    /** Kafka's default producer.id.expiration.ms, until a change entry sets the group's. */
    static final long DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000L;
    private static final Logger LOG = LoggerFactory.getLogger(PartitionHost.class);

    private final String name;
    private final Path partitionsDir;
    private final Function<Map<String, String>, TopicConfig> configs;
    private final Map<PartitionKey, HostedPartition> hosted = new ConcurrentHashMap<>();
    private final ThreadLocal<BatchAdmission> admissions = ThreadLocal.withInitial(BatchAdmission::new);
    /** The leader's last stamp per partition: only {@link #stamp} uses it, in log order. */
    private final Map<PartitionKey, Long> lastStampedMs = new HashMap<>();
    private volatile boolean running;
    /** Why this replica stopped for good in this process (a disk error: {@link #stopOnDiskError}), or null. */
    private volatile String diskError;
    private volatile RecordedSnapshot latestSnapshot;
    /** The partitions of the snapshot captured and not yet recorded or abandoned; written on the apply thread. */
    private volatile Set<PartitionKey> capturing = Set.of();
    private volatile long metadataIndex;
    private volatile long producerIdExpirationMs = DEFAULT_PRODUCER_ID_EXPIRATION_MS;

    /**
     * @param name    the replica, as messages name it (its node and group)
     * @param smDir   the group's state machine directory on this replica
     * @param configs a topic's config from the overrides the group's log gives it, over this broker's defaults: how
     *                this replica's logs roll, flush, retain and compact, and the window the leader holds SendTimes to
     */
    public PartitionHost(String name, Path smDir, Function<Map<String, String>, TopicConfig> configs) {
        this.name = name;
        this.partitionsDir = smDir.resolve(PartitionDirectories.PARTITIONS);
        this.configs = configs;
    }

    /**
     * Opens the partition logs as {@code snapshot} left them (empty: as no entry left them, the Raft log then replays
     * from its start): each cut back to its log end offset with the snapshot's append state, the files a later entry
     * set aside taken back first, and the directories of partitions the snapshot does not name deleted.
     *
     * @throws IOException when a log is shorter than its snapshot says (its files were truncated or lost: replaying
     *                     the entries after the snapshot would give their batches other offsets than on the other
     *                     replicas); the message names it, both offsets and how to recover
     */
    public void open(Optional<GroupSnapshot> snapshot, long nowMs) throws IOException {
        Files.createDirectories(partitionsDir);
        GroupSnapshot opened = snapshot.orElse(GroupSnapshot.getDefaultInstance());
        producerIdExpirationMs = opened.getProducerIdExpirationMs() > 0 ? opened.getProducerIdExpirationMs()
                : DEFAULT_PRODUCER_ID_EXPIRATION_MS;
        Set<String> kept = new HashSet<>();
        for (PartitionSnapshot partition : opened.getPartitionsList()) {
            String dirName = PartitionDirectories.name(partition.getPartition());
            kept.add(dirName);
            takeBackSetAside(dirName, opened.getIndex());
            PartitionLog log = openLog(partition, opened, nowMs);
            log.producerIdExpirationMs(producerIdExpirationMs);
            hosted.put(PartitionKey.of(partition.getPartition()), new HostedPartition(partition.getPartition(), log,
                    partition.getState()));
        }
        deleteOthers(kept);
        latestSnapshot = snapshot.map(s -> RecordedSnapshot.of(s, hosted)).orElse(null);
        capturing = Set.of();
        metadataIndex = opened.getMetadataIndex();
        running = true;
        LOG.info("{}: {} partition logs opened in {} (snapshot {})", name, hosted.size(), partitionsDir,
                snapshot.map(s -> "at term " + s.getTerm() + " index " + s.getIndex()).orElse("none"));
    }

    private PartitionLog openLog(PartitionSnapshot partition, GroupSnapshot snapshot, long nowMs)
            throws IOException {
        String dirName = PartitionDirectories.name(partition.getPartition());
        Path dir = partitionsDir.resolve(dirName);
        TopicConfig config = configOf(partition.getPartition());
        try {
            if (partition.hasAppendState()) {
                return PartitionLog.openAt(dir, config, AppendStateSnapshots.fromProto(partition.getLogEndOffset(),
                        partition.getAppendState()), nowMs);
            }
            LOG.warn("{}: the snapshot at index {} keeps no append state of {} (a broker before it was kept wrote "
                    + "it): its producers and origin offsets are rebuilt from this replica's segments", name,
                    snapshot.getIndex(), dirName);
            PartitionLog log = PartitionLog.open(dir, config, nowMs);
            log.requireEndAtLeast(partition.getLogEndOffset());
            log.truncateTo(partition.getLogEndOffset());
            return log;
        } catch (LogTooShortException e) {
            throw new IOException(name + " does not start: the log of partition " + dirName + " in " + dir
                    + " ends at offset " + e.logEndOffset() + ", below " + e.expectedEndOffset() + " where the "
                    + "group's snapshot at index " + snapshot.getIndex() + " says it ends: its files were truncated "
                    + "or lost. Replaying the group's entries onto it would give their batches other offsets than on "
                    + "the other replicas; restore the files, or delete the group's directory "
                    + partitionsDir.getParent().getParent() + " so that this replica copies the leader's logs when it "
                    + "joins the group again");
        }
    }

    /**
     * The config this replica makes of a partition's overrides; this broker's defaults alone, said loudly, when it
     * cannot read them (a key a newer broker knows): an entry must never fail on one replica and not another, and the
     * config shapes only this replica's segments.
     */
    private TopicConfig configOf(GroupPartition partition) {
        try {
            return configs.apply(partition.getOverridesMap());
        } catch (TidemarkException e) {
            LOG.error("{}: the overrides {} of {}-{} are not a config this broker takes ({}); its log uses this "
                    + "broker's defaults until they change", name, partition.getOverridesMap(), partition.getTopic(),
                    partition.getPartition(), e.getMessage());
            return configs.apply(Map.of());
        }
    }

    /**
     * Puts back the files a partition had at the snapshot when an entry after it set them aside (a removal, a copy
     * that started again): those of the first such entry, over whatever the entries after it left in their place.
     */
    private void takeBackSetAside(String dirName, long snapshotIndex) throws IOException {
        Optional<Path> setAside;
        try (Stream<Path> dirs = Files.list(partitionsDir)) {
            setAside = dirs.filter(d -> PartitionDirectories.setAsideIndex(d, dirName).orElse(-1) > snapshotIndex)
                    .min(Comparator.comparingLong(d -> PartitionDirectories.setAsideIndex(d, dirName).orElseThrow()));
        }
        if (setAside.isPresent()) {
            Path dir = partitionsDir.resolve(dirName);
            DurableFiles.deleteTree(dir);
            DurableFiles.move(setAside.get(), dir);
            LOG.info("{}: took back {}, the files of {} at the snapshot", name, setAside.get().getFileName(), dirName);
        }
    }

    /** Deletes the partition directories the snapshot does not name: replay adds those partitions again. */
    private void deleteOthers(Set<String> kept) throws IOException {
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
                    + "again", name, others.size());
        }
    }

    /**
     * Keeps the files of a partition an entry at {@code index} removes or replaces while the latest snapshot names
     * the partition: a restart opens the partition as the snapshot left it and replays the entries after it, this one
     * included. They are deleted once a snapshot no longer names them; files no snapshot names are deleted at once.
     */
    private void setAside(GroupPartition partition, long index) throws IOException {
        Path dir = partitionsDir.resolve(PartitionDirectories.name(partition));
        PartitionKey key = PartitionKey.of(partition);
        if (snapshotEntry(key).isPresent() || capturing.contains(key)) {
            DurableFiles.move(dir, PartitionDirectories.setAside(dir, index));
        } else {
            DurableFiles.deleteTree(dir);
            DurableFiles.syncDirectory(partitionsDir);
        }
    }

    /**
     * Deletes the files set aside by entries up to {@code index}, which the snapshot there no longer names; those set
     * aside after it stay until a later snapshot.
     */
    private void deleteSetAside(long index) throws IOException {
        List<Path> setAside;
        try (Stream<Path> dirs = Files.list(partitionsDir)) {
            setAside = dirs.filter(dir -> PartitionDirectories.setAsideIndex(dir).orElse(Long.MAX_VALUE) <= index)
                    .toList();
        }
        for (Path dir : setAside) {
            DurableFiles.deleteTree(dir);
        }
        if (!setAside.isEmpty()) {
            DurableFiles.syncDirectory(partitionsDir);
        }
    }

    /**
     * Checks a request before the leader makes it an entry, so that no entry can fail apply on any replica
     * ({@link GroupEntryFormat#checkRequest}: its structure). The batches of a request this broker did not admit
     * itself (forwarded by another broker, or sent by anything else that reaches the Raft port) are admitted here as
     * a produced batch is, under the partition's config on this replica, and their slots must say what the batches
     * hold: a slot's SendTimes decide the leader's verdict.
     *
     * @param admitted whether this broker admitted the batches before submitting them (its own group commit)
     * @throws TidemarkException INVALID_REQUEST, CORRUPT_BATCH or RECORD_TOO_LARGE naming what is wrong
     */
    void checkRequest(ByteString request, boolean admitted) {
        GroupEntryFormat.checkRequest(request);
        if (admitted || !GroupEntryFormat.ofBatches(request)) {
            return;
        }
        ByteBuffer table = GroupEntryFormat.table(request);
        List<ByteBuffer> batches = GroupEntryFormat.batches(request);
        for (int i = 0; i < batches.size(); i++) {
            GroupEntryFormat.Slot slot = GroupEntryFormat.slot(table, i);
            HostedPartition partition = hosted.get(slot.partition());
            TopicConfig config = partition == null ? configs.apply(Map.of()) : partition.log().config();
            BatchAdmission.Admitted found = admissions.get().admit(batches.get(i), config, Integer.MAX_VALUE);
            if (found.mirrored() != slot.mirrored() || found.minSendTimeMs() != slot.minSendTimeMs()
                    || found.maxSendTimeMs() != slot.maxSendTimeMs()) {
                throw new TidemarkException(ErrorCode.INVALID_REQUEST, "batch " + i + "'s slot says SendTimes ["
                        + slot.minSendTimeMs() + ", " + slot.maxSendTimeMs() + "]" + (slot.mirrored() ? ", mirrored"
                        : "") + ", but the batch holds [" + found.minSendTimeMs() + ", " + found.maxSendTimeMs()
                        + "]" + (found.mirrored() ? ", mirrored" : "") + "; nothing was appended");
            }
        }
    }

    /**
     * Stamps each batch of an entry on its way through the leader, in log order: its ReceiveTime
     * {@code max(now, last stamped for the partition, last in its log)}, so ReceiveTime never decreases in a partition
     * across leaders whose clocks disagree, and the verdict on its SendTimes against its topic's window around that
     * time (this replica's config of the topic: the leader decides, the others follow its verdict).
     */
    void stamp(StampedEntry entry, long nowMs) {
        ByteBuffer table = ByteBuffer.wrap(entry.table());
        for (int i = 0; i < entry.count(); i++) {
            GroupEntryFormat.Slot slot = GroupEntryFormat.slot(table, i);
            HostedPartition partition = hosted.get(slot.partition());
            long last = Math.max(lastStampedMs.getOrDefault(slot.partition(), 0L),
                    partition == null ? 0 : partition.log().lastReceiveTimeMs().orElse(0));
            long stamp = Math.max(nowMs, last);
            lastStampedMs.put(slot.partition(), stamp);
            short verdict = GroupEntryFormat.APPEND;
            if (partition != null) {
                TopicConfig config = partition.log().config();
                BatchAdmission.Admitted admitted = new BatchAdmission.Admitted(slot.mirrored(), slot.minSendTimeMs(),
                        slot.maxSendTimeMs());
                if (!BatchAdmission.sendTimesAllowed(admitted, config, stamp)) {
                    verdict = (short) ErrorCode.INVALID_TIMESTAMP.getNumber();
                    entry.refused(i, refusal(entry, i, admitted, config, stamp));
                }
            }
            GroupEntryFormat.stamp(entry.table(), i, stamp, verdict);
        }
    }

    /** Why the leader refused batch {@code i} of an entry: the record outside the window, named. */
    private String refusal(StampedEntry entry, int i, BatchAdmission.Admitted admitted, TopicConfig config,
                           long stamp) {
        ByteBuffer batch = GroupEntryFormat.batches(entry.data()).get(i);
        try {
            admissions.get().checkSendTimes(batch, admitted, config, stamp);
            throw new IllegalStateException("batch " + i + " was refused but its SendTimes fit");
        } catch (TidemarkException e) {
            return e.getMessage();
        }
    }

    /**
     * Applies the entry at Raft index {@code index}; its reply ({@link GroupEntryFormat}).
     *
     * @param stamped the leader's context of an entry of batches (it carries the refusals' words); null on followers
     *                and when replaying
     * @param nowMs   this replica's time, for what only it sees (when a new log last flushed)
     */
    byte[] apply(ByteString data, long index, StampedEntry stamped, long nowMs) {
        if (data.isEmpty()) {
            return new byte[0];
        }
        return switch (GroupEntryFormat.type(data)) {
            case GroupEntryFormat.BATCHES -> applyBatches(data, stamped);
            case GroupEntryFormat.ALL_OR_NONE -> applyAllOrNone(data, stamped);
            case GroupEntryFormat.CHANGE -> applyChange(GroupEntryFormat.readChange(data), index, nowMs)
                    .toByteArray();
            case GroupEntryFormat.COPY -> applyCopy(data.asReadOnlyByteBuffer(), index, nowMs);
            default -> throw new IllegalStateException(name + ": entry " + index + " has type "
                    + GroupEntryFormat.type(data) + ", which this broker does not know");
        };
    }

    /** Appends the batches of an entry to their partitions, as the leader's verdicts say. */
    private byte[] applyBatches(ByteString data, StampedEntry stamped) {
        ByteBuffer table = GroupEntryFormat.table(data);
        List<ByteBuffer> batches = GroupEntryFormat.batches(data);
        GroupEntryFormat.ReplyWriter reply = new GroupEntryFormat.ReplyWriter(batches.size());
        Set<HostedPartition> appendedTo = new LinkedHashSet<>();
        for (int i = 0; i < batches.size(); i++) {
            GroupEntryFormat.Slot slot = GroupEntryFormat.slot(table, i);
            HostedPartition partition = hosted.get(slot.partition());
            // A resend the leader refused under its own config that another leader stored: where it is stored.
            Optional<AppendResult> stored = slot.verdict() != GroupEntryFormat.APPEND && partition != null
                    && partition.state() == PartitionState.PARTITION_LIVE
                    ? partition.log().storedAs(batches.get(i)) : Optional.empty();
            TidemarkException refused = stored.isPresent() ? null : refusal(slot, partition, stamped, i);
            if (stored.isPresent()) {
                reply.appended(stored.get());
            } else if (refused != null) {
                reply.refused(refused.code(), refused.getMessage());
            } else {
                try {
                    reply.appended(append(partition, slot, batches.get(i)));
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
     * Appends the batches of an all-or-none entry to their partitions when none would be refused; otherwise refuses
     * every one with the first refusal's reason. Its batches are markers and batches without a producer id, one per
     * partition ({@link GroupEntryFormat#ALL_OR_NONE}), so each check made here still holds at its append.
     */
    private byte[] applyAllOrNone(ByteString data, StampedEntry stamped) {
        ByteBuffer table = GroupEntryFormat.table(data);
        List<ByteBuffer> batches = GroupEntryFormat.batches(data);
        for (int i = 0; i < batches.size(); i++) {
            GroupEntryFormat.Slot slot = GroupEntryFormat.slot(table, i);
            HostedPartition partition = hosted.get(slot.partition());
            TidemarkException refused = refusal(slot, partition, stamped, i);
            if (refused == null && RecordBatchFormat.control(batches.get(i), batches.get(i).position())) {
                try {
                    partition.log().checkMarker(batches.get(i));
                } catch (TidemarkException e) {
                    refused = e;
                }
            }
            if (refused != null) {
                GroupEntryFormat.ReplyWriter reply = new GroupEntryFormat.ReplyWriter(batches.size());
                String reason = "nothing of the all-or-none entry was appended: its batch " + i + " to "
                        + (partition == null ? slot.partition() : partition.name()) + " was refused: "
                        + refused.getMessage();
                for (int j = 0; j < batches.size(); j++) {
                    reply.refused(refused.code(), reason);
                }
                return reply.toBytes();
            }
        }
        return applyBatches(data, stamped);
    }

    /** Why a batch of an entry cannot be appended before its log is asked: null when nothing stands in its way. */
    private TidemarkException refusal(GroupEntryFormat.Slot slot, HostedPartition partition, StampedEntry stamped,
                                      int i) {
        if (slot.verdict() != GroupEntryFormat.APPEND) {
            ErrorCode code = ErrorCode.forNumber(slot.verdict());
            String said = stamped == null ? null : stamped.refusal(i);
            return new TidemarkException(code == null ? ErrorCode.INTERNAL_ERROR : code, said != null ? said
                    : "the partition's leader refused the batch (" + code + ")");
        }
        if (partition == null) {
            return new TidemarkException(ErrorCode.UNKNOWN_PARTITION, name + " does not host " + slot.partition()
                    + " (it was removed, or is not added yet); the batch was not appended");
        }
        if (partition.state() != PartitionState.PARTITION_LIVE) {
            String where = partition.state() == PartitionState.PARTITION_IMPORTING ? "into this group"
                    : "to other replicas";
            return new TidemarkException(ErrorCode.NOT_AVAILABLE, partition.name() + " is moving " + where
                    + "; the batch was not appended: retry, it goes to the partition's new replicas once the move "
                    + "completes");
        }
        return null;
    }

    private static AppendResult append(HostedPartition partition, GroupEntryFormat.Slot slot, ByteBuffer batch) {
        long receiveTimeMs = Math.max(slot.receiveTimeMs(), partition.log().lastReceiveTimeMs().orElse(0));
        return partition.log().append(batch, receiveTimeMs);
    }

    /**
     * Adds empty partitions (live, or importing), removes (closes and deletes) others, activates imported partitions
     * whose copy is whole, seals partitions that move out, releases sealed ones to the group they move into or unseals
     * them, and gives partitions new overrides; what is already so is left as it is. A partition moving out goes
     * live, sealed, released: once released it never takes a batch here again, and only a released partition may be
     * activated in the group it moves into ({@code PartitionMove}), so the two groups never both take its batches.
     */
    private GroupChangeReply applyChange(GroupChange change, long index, long nowMs) {
        GroupChangeReply.Builder reply = GroupChangeReply.newBuilder();
        metadataIndex = Math.max(metadataIndex, change.getMetadataIndex());
        if (change.getProducerIdExpirationMs() > 0 && change.getProducerIdExpirationMs() != producerIdExpirationMs) {
            producerIdExpirationMs = change.getProducerIdExpirationMs();
            hosted.values().forEach(p -> p.log().producerIdExpirationMs(producerIdExpirationMs));
            LOG.info("{}: producers are forgotten {} ms after their last batch", name, producerIdExpirationMs);
        }
        try {
            for (GroupPartition partition : change.getRemoveList()) {
                HostedPartition removed = hosted.remove(PartitionKey.of(partition));
                if (removed != null) {
                    removed.log().close();
                    removed.signal();
                    setAside(removed.partition(), index);
                    LOG.info("{}: removed {}", name, removed);
                }
            }
            for (GroupPartition partition : change.getAddList()) {
                addEmpty(partition, PartitionState.PARTITION_LIVE, nowMs);
            }
            for (GroupPartition partition : change.getImportList()) {
                addEmpty(partition, PartitionState.PARTITION_IMPORTING, nowMs);
            }
            DurableFiles.syncDirectory(partitionsDir);
        } catch (IOException e) {
            throw new IllegalStateException(name + ": applying a partition change failed: " + e.getMessage(), e);
        }
        for (GroupPartition configured : change.getConfigureList()) {
            HostedPartition partition = hosted.get(PartitionKey.of(configured));
            if (partition != null && !partition.partition().getOverridesMap().equals(configured.getOverridesMap())) {
                GroupPartition overridden = partition.partition().toBuilder().clearOverrides()
                        .putAllOverrides(configured.getOverridesMap()).build();
                partition.reconfigure(overridden, configOf(overridden));
                LOG.info("{}: {} takes the overrides {}", name, partition, configured.getOverridesMap());
            }
        }
        for (PartitionEnd imported : change.getActivateList()) {
            activate(imported);
        }
        for (GroupPartition sealed : change.getSealList()) {
            HostedPartition partition = hosted.get(PartitionKey.of(sealed));
            if (partition != null && partition.state() != PartitionState.PARTITION_IMPORTING) {
                if (partition.state() == PartitionState.PARTITION_LIVE) {
                    partition.state(PartitionState.PARTITION_SEALED);
                    LOG.info("{}: sealed {} at offset {} to move it out", name, partition,
                            partition.log().logEndOffset());
                }
                reply.addSealed(PartitionEnd.newBuilder().setPartition(partition.partition())
                        .setLogEndOffset(partition.log().logEndOffset()));
            }
        }
        for (PartitionEnd released : change.getReleaseList()) {
            HostedPartition partition = hosted.get(PartitionKey.of(released.getPartition()));
            if (partition == null || partition.log().logEndOffset() != released.getLogEndOffset()) {
                continue;
            }
            if (partition.state() == PartitionState.PARTITION_SEALED) {
                partition.state(PartitionState.PARTITION_RELEASED);
                LOG.info("{}: released {} at offset {} to the group it moves into", name, partition,
                        released.getLogEndOffset());
            }
            if (partition.state() == PartitionState.PARTITION_RELEASED) {
                reply.addReleased(released);
            }
        }
        for (GroupPartition unsealed : change.getUnsealList()) {
            HostedPartition partition = hosted.get(PartitionKey.of(unsealed));
            if (partition != null && partition.state() == PartitionState.PARTITION_SEALED) {
                partition.state(PartitionState.PARTITION_LIVE);
                LOG.warn("{}: unsealed {} at offset {}: its move did not finish in time; it takes batches here again",
                        name, partition, partition.log().logEndOffset());
            }
        }
        return reply.build();
    }

    /**
     * Makes an imported partition live when its copy ends where the mover found the sealed source to end: at the
     * sealed end, or before it where the source's last offsets were compacted away, which the copy then skips too.
     * Otherwise (a copy that moved on since, a copy short of what the source holds) it stays importing.
     */
    private void activate(PartitionEnd imported) {
        HostedPartition partition = hosted.get(PartitionKey.of(imported.getPartition()));
        long sealedEnd = imported.getLogEndOffset();
        long copiedEnd = imported.hasCopiedEndOffset() ? imported.getCopiedEndOffset() : sealedEnd;
        if (partition == null || partition.state() != PartitionState.PARTITION_IMPORTING
                || partition.log().logEndOffset() != copiedEnd || copiedEnd > sealedEnd) {
            return;
        }
        partition.log().skipTo(sealedEnd);
        partition.state(PartitionState.PARTITION_LIVE);
        LOG.info("{}: {} moved in, its log ends at offset {}{}", name, partition, sealedEnd, copiedEnd < sealedEnd
                ? " (the source's offsets from " + copiedEnd + " on were compacted away)" : "");
    }

    private void addEmpty(GroupPartition partition, PartitionState state, long nowMs) throws IOException {
        PartitionKey key = PartitionKey.of(partition);
        if (!hosted.containsKey(key)) {
            hosted.put(key, new HostedPartition(partition, newLog(partition, 0, nowMs), state));
            LOG.info("{}: added {}", name, hosted.get(key));
        }
    }

    /** An empty log of a partition at {@code logStartOffset}, in place of whatever its directory held. */
    private PartitionLog newLog(GroupPartition partition, long logStartOffset, long nowMs) throws IOException {
        PartitionLog log = PartitionLog.recreate(partitionsDir.resolve(PartitionDirectories.name(partition)),
                configOf(partition), logStartOffset, nowMs);
        log.producerIdExpirationMs(producerIdExpirationMs);
        return log;
    }

    /**
     * Appends batches copied from the group a partition leaves, as they are (offsets, ReceiveTimes and CRCs kept):
     * only to a partition that is importing. Batches the log holds already (a copy submitted again) are skipped; when
     * the copied log's start is past this log's end (retention removed what the copy had not reached), the copy
     * starts again there, empty.
     */
    private byte[] applyCopy(ByteBuffer entry, long index, long nowMs) {
        GroupEntryFormat.Copy copy = GroupEntryFormat.readCopy(entry);
        HostedPartition partition = hosted.get(copy.partition());
        if (partition == null) {
            return GroupEntryFormat.copyReply(-1, new TidemarkException(ErrorCode.UNKNOWN_PARTITION, name
                    + " does not host " + copy.partition() + "; the copied batches were not taken"));
        }
        if (partition.state() != PartitionState.PARTITION_IMPORTING) {
            return GroupEntryFormat.copyReply(partition.log().logEndOffset(), new TidemarkException(
                    ErrorCode.INVALID_REQUEST, partition + " is not moving in: it takes no copied batches"));
        }
        try {
            if (copy.logStartOffset() > partition.log().logEndOffset()) {
                partition = restartCopy(partition, copy.logStartOffset(), index, nowMs);
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
            throw new IllegalStateException(name + ": restarting the copy of " + partition + " failed: "
                    + e.getMessage(), e);
        }
        partition.signal();
        return GroupEntryFormat.copyReply(partition.log().logEndOffset(), null);
    }

    /** An importing partition whose copy starts again, empty, at {@code logStartOffset}. */
    private HostedPartition restartCopy(HostedPartition partition, long logStartOffset, long index, long nowMs)
            throws IOException {
        long copiedEnd = partition.log().logEndOffset();
        partition.log().close();
        partition.signal();
        setAside(partition.partition(), index);
        HostedPartition restarted = new HostedPartition(partition.partition(),
                newLog(partition.partition(), logStartOffset, nowMs), PartitionState.PARTITION_IMPORTING);
        hosted.put(restarted.key(), restarted);
        LOG.info("{}: the copy of {} starts again at offset {}: the log it copies no longer holds offset {}", name,
                restarted, logStartOffset, copiedEnd);
        return restarted;
    }

    /**
     * Captures the state after the entry ({@code term}, {@code index}), the last applied: each hosted partition with
     * its log's start and end offsets, state, overrides and append state, and the logs that changed since the latest
     * snapshot, which {@link SnapshotCapture#flush} must fsync before a snapshot file names them. A partition that did
     * not change (the same hosted partition, with the same end: only appends change its append state) keeps its
     * append state from the latest snapshot, unread. Until the capture is {@link #snapshotRecorded recorded} or
     * {@link #snapshotAbandoned abandoned}, the files of a partition it names that an entry removes are set aside, as
     * for the latest snapshot's.
     */
    SnapshotCapture captureSnapshot(long term, long index) {
        GroupSnapshot.Builder snapshot = GroupSnapshot.newBuilder().setTerm(term).setIndex(index)
                .setMetadataIndex(metadataIndex).setProducerIdExpirationMs(producerIdExpirationMs);
        // By directory name, each made once: a comparator making two per comparison sorted 3,334 partitions in 10-70 ms
        // on an idle machine, once each in 2-7 ms.
        Map<String, HostedPartition> partitions = new TreeMap<>();
        hosted.values().forEach(p -> partitions.put(PartitionDirectories.name(p.partition()), p));
        RecordedSnapshot latest = latestSnapshot;
        List<PartitionLog> changed = new ArrayList<>();
        Map<PartitionKey, HostedPartition> captured = new HashMap<>();
        for (HostedPartition partition : partitions.values()) {
            PartitionSnapshot before = latest == null ? null : latest.partitions().get(partition.key());
            PartitionSnapshot.Builder entry;
            if (before != null && latest.captured().get(partition.key()) == partition
                    && before.getLogEndOffset() == partition.log().logEndOffset()) {
                entry = before.toBuilder();
            } else {
                AppendState state = partition.log().appendState();
                changed.add(partition.log());
                entry = PartitionSnapshot.newBuilder().setLogEndOffset(state.logEndOffset())
                        .setAppendState(AppendStateSnapshots.toProto(state));
            }
            captured.put(partition.key(), partition);
            snapshot.addPartitions(entry.setPartition(partition.partition())
                    .setLogStartOffset(partition.log().logStartOffset()).setState(partition.state()));
        }
        capturing = captured.keySet();
        return new SnapshotCapture(snapshot.build(), changed, captured);
    }

    /**
     * A captured snapshot is durable where Ratis finds it: it is the latest now, and the files set aside by entries
     * up to it are deleted.
     */
    void snapshotRecorded(SnapshotCapture capture) throws IOException {
        latestSnapshot = RecordedSnapshot.of(capture.snapshot(), capture.captured());
        capturing = Set.of();
        deleteSetAside(capture.snapshot().getIndex());
    }

    /** A captured snapshot will not be recorded (its fsyncs failed). */
    void snapshotAbandoned() {
        capturing = Set.of();
    }

    /**
     * The latest snapshot, each partition with its log's start offset now (at most the snapshot's end), for a replica
     * that catches up from it; empty before the first snapshot.
     */
    public Optional<GroupSnapshot> latestSnapshot() {
        RecordedSnapshot recorded = latestSnapshot;
        if (recorded == null) {
            return Optional.empty();
        }
        GroupSnapshot snapshot = recorded.snapshot();
        GroupSnapshot.Builder now = snapshot.toBuilder().clearPartitions();
        for (PartitionSnapshot partition : snapshot.getPartitionsList()) {
            HostedPartition hostedNow = hosted.get(PartitionKey.of(partition.getPartition()));
            long start = hostedNow == null ? partition.getLogStartOffset() : hostedNow.log().logStartOffset();
            now.addPartitions(partition.toBuilder().setLogStartOffset(Math.min(start, partition.getLogEndOffset())));
        }
        return Optional.of(now.build());
    }

    /**
     * The log end offset of a partition in the latest snapshot: retention and compaction keep its segments from there
     * on, since a restart cuts the log back to it and replays the Raft log; 0 before the partition's first snapshot.
     */
    public long snapshotLogEndOffset(PartitionKey key) {
        return snapshotEntry(key).map(PartitionSnapshot::getLogEndOffset).orElse(0L);
    }

    private Optional<PartitionSnapshot> snapshotEntry(PartitionKey key) {
        RecordedSnapshot recorded = latestSnapshot;
        return recorded == null ? Optional.empty() : Optional.ofNullable(recorded.partitions().get(key));
    }

    /**
     * A snapshot recorded, with its partitions by key (retention asks for a partition's entry and a capture for each
     * hosted partition's, and a scan of the list for each was quadratic in the partitions), and the hosted partitions
     * it was captured from: a partition removed and added again since is another object.
     */
    private record RecordedSnapshot(GroupSnapshot snapshot, Map<PartitionKey, PartitionSnapshot> partitions,
                                    Map<PartitionKey, HostedPartition> captured) {
        /** @param captured the partitions hosted when it was captured (or opened from it) */
        static RecordedSnapshot of(GroupSnapshot snapshot, Map<PartitionKey, HostedPartition> captured) {
            Map<PartitionKey, PartitionSnapshot> partitions = new HashMap<>();
            snapshot.getPartitionsList().forEach(p -> partitions.put(PartitionKey.of(p.getPartition()), p));
            return new RecordedSnapshot(snapshot, Map.copyOf(partitions), Map.copyOf(captured));
        }
    }

    /** Marks the replica stopped on a disk error, so that whoever asks for its partitions learns why. */
    void stopOnDiskError(String error) {
        if (diskError == null) {
            diskError = error;
        }
    }

    /**
     * A hosted partition; empty when the group does not host it (yet: a partition change that adds it may be on its
     * way).
     *
     * @throws TidemarkException NOT_AVAILABLE (retriable) while the replica is starting or reloading its logs
     */
    public Optional<HostedPartition> partition(PartitionKey key) {
        String stoppedBy = diskError;
        if (stoppedBy != null) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the replica " + name + " stopped on a disk error ("
                    + stoppedBy + "); its partitions are served by their other replicas; restart this broker once its "
                    + "disk is repaired");
        }
        if (!running) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the replica " + name + " is starting or reloading "
                    + "its partition logs");
        }
        return Optional.ofNullable(hosted.get(key));
    }

    /** The partitions hosted now. */
    public Set<PartitionKey> hostedPartitions() {
        return Set.copyOf(hosted.keySet());
    }

    /**
     * The largest metadata index of the partition changes applied: a broker changes the group only from a view of the
     * metadata at least this new.
     */
    public long metadataIndex() {
        return metadataIndex;
    }

    /** The group's producer.id.expiration.ms as its entries set it. */
    public long producerIdExpirationMs() {
        return producerIdExpirationMs;
    }

    /** Closes every log (cleanly: a restart trusts their files) and stops serving until {@link #open}. */
    void close() throws IOException {
        running = false;
        List<HostedPartition> closing = new ArrayList<>(hosted.values());
        hosted.clear();
        for (HostedPartition partition : closing) {
            partition.log().close();
            partition.signal();
        }
    }
}
