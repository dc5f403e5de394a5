package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.segment.LogSegment;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupChangeReply;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.PartitionEnd;
import io.tidemark.proto.v1.PartitionState;
import io.tidemark.replication.snapshot.PartitionDirectories;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The state machine of a partition group, driven as Ratis drives it but without Ratis: the leader's path
 * (startTransaction, preAppendTransaction, the entry, applyTransaction) on one replica, and the same entries applied
 * on another replica as a follower. The group hosts partitions 0 and 1 of topic t.
 */
class GroupStateMachineTest {
    private static final long BASE_MS = 1_700_000_000_000L;
    private static final UUID TOPIC = new UUID(7, 8);
    private static final PartitionKey T0 = new PartitionKey(TOPIC, 0);
    private static final PartitionKey T1 = new PartitionKey(TOPIC, 1);
    private static final RaftGroupId GROUP = RaftGroupId.valueOf(new UUID(1, 1));

    @TempDir
    Path dir;
    private final List<GroupStateMachine> opened = new ArrayList<>();
    private final Map<GroupStateMachine, RaftStorage> storages = new HashMap<>();
    private final List<LogEntryProto> entries = new ArrayList<>();
    private final Map<GroupStateMachine, List<LogEntryProto>> entriesBy = new HashMap<>();
    private final AtomicLong leaderNowMs = new AtomicLong(BASE_MS);
    private long nextIndex = 1;
    /** Where replicas write their snapshots: at once, unless a test queues the writes. */
    private Executor snapshotWriter = Runnable::run;

    @AfterEach
    void close() throws IOException {
        for (GroupStateMachine machine : List.copyOf(opened)) {
            stop(machine);
        }
    }

    /** Stops a replica as a crash after its last write would: closes its logs and lets go of its storage. */
    private void stop(GroupStateMachine machine) throws IOException {
        machine.close();
        storages.remove(machine).close();
        opened.remove(machine);
    }

    /** A replica's state machine over {@code dir/name}, with these topic defaults under every partition's overrides. */
    private GroupStateMachine replica(String name, Map<String, String> defaults, InstantSource clock)
            throws IOException {
        RaftStorage storage = RaftFixtures.storage(dir.resolve(name));
        GroupStateMachine machine = new GroupStateMachine(overrides -> {
            Map<String, String> merged = new HashMap<>(defaults);
            merged.putAll(overrides);
            return TopicConfig.parse(merged);
        }, ClientId.randomId(), null, clock, group -> { }, snapshotWriter);
        machine.initialize(RaftFixtures.server(name), GROUP, storage);
        opened.add(machine);
        storages.put(machine, storage);
        return machine;
    }

    private GroupStateMachine leader() throws IOException {
        return leader(Map.of());
    }

    private GroupStateMachine leader(Map<String, String> defaults) throws IOException {
        return replica("leader", defaults, () -> Instant.ofEpochMilli(leaderNowMs.get()));
    }

    private static InstantSource fixed(long ms) {
        return InstantSource.fixed(Instant.ofEpochMilli(ms));
    }

    private static GroupPartition partition(int partition, Map<String, String> overrides) {
        return GroupPartition.newBuilder().setTopic("t").setTopicId(TopicIds.toBytes(TOPIC)).setPartition(partition)
                .putAllOverrides(overrides).build();
    }

    /** Submits a request on the leader's path, as Ratis does, and applies the entry; the reply. */
    private ByteBuffer lead(GroupStateMachine leader, ByteString request) {
        RaftClientRequest client = RaftClientRequest.newBuilder().setClientId(ClientId.randomId())
                .setServerId(RaftPeerId.valueOf("leader")).setGroupId(GROUP).setCallId(nextIndex)
                .setMessage(Message.valueOf(request)).setType(RaftClientRequest.writeRequestType()).build();
        TransactionContext trx = leader.preAppendTransaction(leader.startTransaction(client));
        LogEntryProto entry = trx.initLogEntry(1, nextIndex++);
        entries.add(entry);
        entriesBy.computeIfAbsent(leader, l -> new ArrayList<>()).add(entry);
        return leader.applyTransaction(trx).join().getContent().asReadOnlyByteBuffer();
    }

    /** Applies every entry the leader made, in order, as a follower. */
    private static void follow(GroupStateMachine follower, List<LogEntryProto> entries) {
        for (LogEntryProto entry : entries) {
            follower.applyTransaction(TransactionContext.newBuilder().setStateMachine(follower)
                    .setServerRole(RaftPeerRole.FOLLOWER).setLogEntry(entry).build()).join();
        }
    }

    private static ByteString add(GroupPartition... partitions) {
        return GroupEntryFormat.change(GroupChange.newBuilder().addAllAdd(List.of(partitions)).build());
    }

    /** A batch of one record with this SendTime and value. */
    private static GroupEntryFormat.Submitted batch(PartitionKey partition, long sendTimeMs, String value) {
        ByteBuffer batch = new RecordBatchBuilder().append(sendTimeMs, null, value.getBytes()).build();
        return new GroupEntryFormat.Submitted(partition, batch, sendTimeMs, sendTimeMs, false);
    }

    private static List<GroupEntryFormat.Outcome> outcomes(ByteBuffer reply, int count) {
        return GroupEntryFormat.readReply(reply, count);
    }

    /** Every batch of a hosted partition's log, as bytes. */
    private static List<ByteBuffer> batches(GroupStateMachine machine, PartitionKey key) {
        PartitionLog log = machine.host().partition(key).orElseThrow().log();
        List<ByteBuffer> batches = new ArrayList<>();
        for (long offset = log.logStartOffset(); offset < log.logEndOffset(); ) {
            LogReadResult read = log.read(offset, 1);
            ByteBuffer batch = read.batches();
            batches.add(batch);
            offset = RecordBatchFormat.lastOffset(batch, 0) + 1;
        }
        return batches;
    }

    @Test
    void eachLeaderChangeAndTheLeadersReadinessCompleteTheNextLeadershipEventAndArmAnother() throws IOException {
        GroupStateMachine machine = leader();
        CompletableFuture<Void> first = machine.nextLeadershipEvent();
        assertFalse(first.isDone());

        machine.notifyLeaderChanged(RaftGroupMemberId.valueOf(RaftPeerId.valueOf("leader"), GROUP), null);
        assertTrue(first.isDone());
        CompletableFuture<Void> second = machine.nextLeadershipEvent();
        assertNotSame(first, second);
        assertFalse(second.isDone());

        machine.notifyLeaderChanged(RaftGroupMemberId.valueOf(RaftPeerId.valueOf("leader"), GROUP),
                RaftPeerId.valueOf("leader"));
        assertTrue(second.isDone());
        CompletableFuture<Void> third = machine.nextLeadershipEvent();
        machine.notifyLeaderReady();
        assertTrue(third.isDone());
        assertFalse(machine.nextLeadershipEvent().isDone());
    }

    @Test
    void anEntryAppendsEachBatchToItsPartitionAndReplicasStoreTheSameBytes() throws IOException {
        GroupStateMachine leader = leader();
        lead(leader, add(partition(0, Map.of()), partition(1, Map.of())));
        List<GroupEntryFormat.Outcome> first = outcomes(lead(leader, GroupEntryFormat.request(List.of(
                batch(T0, BASE_MS, "a"), batch(T1, BASE_MS, "b"), batch(T0, BASE_MS, "c")))), 3);
        leaderNowMs.set(BASE_MS + 5);
        List<GroupEntryFormat.Outcome> second = outcomes(lead(leader, GroupEntryFormat.request(List.of(
                batch(T1, BASE_MS, "d")))), 1);

        assertEquals(List.of(0L, 0L, 1L), first.stream().map(o -> o.appended().baseOffset()).toList(),
                "offsets per partition");
        assertEquals(List.of(BASE_MS, BASE_MS, BASE_MS), first.stream().map(o -> o.appended().receiveTimeMs())
                .toList());
        assertEquals(1L, second.get(0).appended().baseOffset());
        assertEquals(BASE_MS + 5, second.get(0).appended().receiveTimeMs());

        GroupStateMachine follower = replica("follower", Map.of(), fixed(BASE_MS + 60_000));
        follow(follower, entries);
        assertEquals(batches(leader, T0), batches(follower, T0), "byte for byte, the leader's ReceiveTimes");
        assertEquals(batches(leader, T1), batches(follower, T1));
    }

    @Test
    void receiveTimeNeverDecreasesInAPartitionWhenTheLeadersClockStepsBack() throws IOException {
        GroupStateMachine leader = leader();
        lead(leader, add(partition(0, Map.of()), partition(1, Map.of())));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "a"))));
        leaderNowMs.set(BASE_MS - 30_000);
        List<GroupEntryFormat.Outcome> stepped = outcomes(lead(leader, GroupEntryFormat.request(List.of(
                batch(T0, BASE_MS - 30_000, "b"), batch(T1, BASE_MS - 30_000, "c")))), 2);

        assertEquals(BASE_MS, stepped.get(0).appended().receiveTimeMs(), "max(now, last of the partition)");
        assertEquals(BASE_MS - 30_000, stepped.get(1).appended().receiveTimeMs(),
                "another partition of the group keeps its own time");
    }

    /**
     * The leader decides the SendTime window with its config and the entry carries the decision: a follower whose
     * config (defaults, or an alter it applied at another moment) says otherwise stores the same bytes.
     */
    @Test
    void replicasFollowTheLeadersDecisionWhateverTheirOwnConfigSays() throws IOException {
        GroupStateMachine leader = leader(Map.of("send.time.before.max.ms", "60000"));
        lead(leader, add(partition(0, Map.of())));
        List<GroupEntryFormat.Outcome> outcomes = outcomes(lead(leader, GroupEntryFormat.request(List.of(
                batch(T0, BASE_MS - 120_000, "too old"), batch(T0, BASE_MS - 1_000, "fine")))), 2);

        assertEquals(ErrorCode.INVALID_TIMESTAMP, outcomes.get(0).refused().code());
        assertTrue(outcomes.get(0).refused().getMessage().startsWith("record 0 of the batch has SendTime "
                + (BASE_MS - 120_000)), outcomes.get(0).refused().getMessage());
        assertEquals(0L, outcomes.get(1).appended().baseOffset());

        GroupStateMachine lax = replica("lax", Map.of("send.time.before.max.ms", "-1"), fixed(BASE_MS));
        follow(lax, entries);
        assertEquals(batches(leader, T0), batches(lax, T0), "the old batch is not appended on any replica");

        leaderNowMs.set(BASE_MS + 1);
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS - 30_000, "late but allowed"))));
        GroupStateMachine strict = replica("strict", Map.of("send.time.before.max.ms", "0"), fixed(BASE_MS));
        follow(strict, entries);
        assertEquals(batches(leader, T0), batches(strict, T0), "nor refused by a stricter one");
        assertEquals(2, batches(strict, T0).size());
    }

    @Test
    void aBatchOfAPartitionTheGroupDoesNotHostIsRefusedAndARemovedPartitionIsDeleted() throws IOException {
        GroupStateMachine leader = leader();
        lead(leader, add(partition(0, Map.of())));
        List<GroupEntryFormat.Outcome> outcomes = outcomes(lead(leader, GroupEntryFormat.request(List.of(
                batch(T1, BASE_MS, "nowhere"), batch(T0, BASE_MS, "here")))), 2);
        assertEquals(ErrorCode.UNKNOWN_PARTITION, outcomes.get(0).refused().code());
        assertEquals(0L, outcomes.get(1).appended().baseOffset());

        Path partitionDir = dir.resolve("leader").resolve(RaftStorageLayout.SM).resolve(PartitionDirectories.PARTITIONS)
                .resolve(PartitionDirectories.name(partition(0, Map.of())));
        assertTrue(Files.isDirectory(partitionDir));
        lead(leader, GroupEntryFormat.change(GroupChange.newBuilder().addRemove(partition(0, Map.of())).build()));
        assertEquals(Set.of(), leader.host().hostedPartitions());
        assertFalse(Files.exists(partitionDir), "its directory is deleted");
        lead(leader, add(partition(0, Map.of())));
        assertEquals(0, leader.host().partition(T0).orElseThrow().log().logEndOffset(), "added again: empty");
    }

    @Test
    void aRestartCutsEachLogBackToItsSnapshotAndReplayAddsTheOthersAgain() throws IOException {
        GroupStateMachine leader = leader();
        lead(leader, add(partition(0, Map.of())));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "kept"))));
        leader.takeSnapshot();
        lead(leader, add(partition(1, Map.of())));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "after"), batch(T1, BASE_MS, "new"))));
        stop(leader);

        GroupStateMachine restarted = leader();
        assertEquals(Set.of(T0), restarted.host().hostedPartitions(), "orders-1 came after the snapshot");
        assertEquals(1, restarted.host().partition(T0).orElseThrow().log().logEndOffset(), "cut back to the snapshot");
        follow(restarted, entries.subList(2, entries.size()));
        assertEquals(2, restarted.host().partition(T0).orElseThrow().log().logEndOffset());
        assertEquals(1, restarted.host().partition(T1).orElseThrow().log().logEndOffset(), "replayed");
    }

    @Test
    void aLogShorterThanItsSnapshotRefusesTheStart() throws IOException {
        GroupStateMachine leader = leader();
        lead(leader, add(partition(0, Map.of())));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "one"))));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "two"))));
        leader.takeSnapshot();
        stop(leader);
        Path partitionDir = dir.resolve("leader").resolve(RaftStorageLayout.SM).resolve(PartitionDirectories.PARTITIONS)
                .resolve(PartitionDirectories.name(partition(0, Map.of())));
        Path segment;
        try (Stream<Path> files = Files.list(partitionDir)) {
            segment = files.filter(f -> f.toString().endsWith(LogSegment.LOG_SUFFIX)).findFirst().orElseThrow();
        }
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            channel.truncate(channel.size() - 10);
        }

        IOException refused = assertThrows(IOException.class, this::leader);
        assertEquals("Raft group " + GROUP.getUuid() + " on leader does not start: the log of partition "
                + PartitionDirectories.name(partition(0, Map.of())) + " in " + partitionDir + " ends at offset 1, "
                + "below 2 where the group's snapshot at index 3 says it ends: its files were truncated or lost. "
                + "Replaying the group's entries onto it would give their batches other offsets than on the other "
                + "replicas; restore the files, or delete the group's directory " + dir.resolve("leader") + " so that "
                + "this replica copies the leader's logs when it joins the group again", refused.getMessage());
    }

    private static ByteString remove(GroupPartition partition) {
        return GroupEntryFormat.change(GroupChange.newBuilder().addRemove(partition).build());
    }

    private Path partitionsDir() {
        return dir.resolve("leader").resolve(RaftStorageLayout.SM).resolve(PartitionDirectories.PARTITIONS);
    }

    private List<String> partitionDirs() throws IOException {
        try (Stream<Path> dirs = Files.list(partitionsDir())) {
            return dirs.map(d -> d.getFileName().toString()).sorted().toList();
        }
    }

    /**
     * A partition removed after the snapshot keeps its files until a snapshot no longer names it: a restart after a
     * crash opens it as the snapshot left it, and replaying the removal removes it again.
     */
    @Test
    void aPartitionRemovedAfterTheSnapshotReopensAsTheSnapshotLeftItAfterACrash() throws IOException {
        GroupStateMachine leader = leader();
        lead(leader, add(partition(0, Map.of())));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "one"))));
        leader.takeSnapshot();
        lead(leader, remove(partition(0, Map.of())));
        assertEquals(List.of(PartitionDirectories.name(partition(0, Map.of())) + ".before-3"), partitionDirs(),
                "set aside: the snapshot names it");
        stop(leader);

        GroupStateMachine restarted = leader();
        assertEquals(1, restarted.host().partition(T0).orElseThrow().log().logEndOffset());
        follow(restarted, entries.subList(2, entries.size()));
        assertEquals(Set.of(), restarted.host().hostedPartitions());
        restarted.takeSnapshot();
        assertEquals(List.of(), partitionDirs(), "deleted once a snapshot no longer names it");
    }

    /**
     * A snapshot's fsyncs and file are written off the apply thread, and Ratis hears of it (and may purge behind it)
     * only once its file is written. Entries apply meanwhile; a partition it names that an entry removes meanwhile is
     * set aside, not deleted, and stays so after it is recorded; a restart opens the state at its index.
     */
    @Test
    void aSnapshotIsWrittenOffTheApplyThreadAndToldToRatisOnceItsFileIsWritten() throws IOException {
        ArrayDeque<Runnable> writes = new ArrayDeque<>();
        snapshotWriter = writes::add;
        GroupStateMachine leader = leader();
        lead(leader, add(partition(0, Map.of())));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "one"))));
        assertEquals(-1, leader.takeSnapshot(), "the write is under way");
        lead(leader, remove(partition(0, Map.of())));
        String setAside = PartitionDirectories.name(partition(0, Map.of())) + ".before-3";
        assertEquals(List.of(setAside), partitionDirs(), "set aside: the snapshot being written names it");
        assertEquals(-1, leader.takeSnapshot(), "still under way");
        assertEquals(1, writes.size(), "one capture at a time");
        assertTrue(leader.host().latestSnapshot().isEmpty());

        writes.poll().run();
        assertNull(leader.getLatestSnapshot(), "Ratis sees it once told: it answers a snapshot request itself while "
                + "the latest it sees is recent, and would never ask for this one");
        assertEquals(2, leader.takeSnapshot(), "told once written: the index it was captured at");
        assertEquals(2, leader.getLatestSnapshot().getIndex());
        assertEquals(2, leader.host().latestSnapshot().orElseThrow().getIndex());
        assertEquals(List.of(setAside), partitionDirs(), "kept: removed after the snapshot, which names it");
        stop(leader);

        GroupStateMachine restarted = leader();
        assertEquals(1, restarted.host().partition(T0).orElseThrow().log().logEndOffset(), "as the snapshot left it");
        follow(restarted, entries.subList(2, entries.size()));
        assertEquals(Set.of(), restarted.host().hostedPartitions());
    }

    /** ... and so does one removed and added again, whose new log may be shorter than the one the snapshot names. */
    @Test
    void aPartitionRemovedAndAddedAgainAfterTheSnapshotReopensAsTheSnapshotLeftItAfterACrash() throws IOException {
        GroupStateMachine leader = leader();
        lead(leader, add(partition(0, Map.of())));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "one"), batch(T0, BASE_MS, "two"))));
        leader.takeSnapshot();
        List<ByteBuffer> snapshotted = batches(leader, T0);
        lead(leader, remove(partition(0, Map.of())));
        lead(leader, add(partition(0, Map.of())));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "new"))));
        List<ByteBuffer> latest = batches(leader, T0);
        stop(leader);

        GroupStateMachine restarted = leader();
        assertEquals(snapshotted, batches(restarted, T0));
        follow(restarted, entries.subList(2, entries.size()));
        assertEquals(latest, batches(restarted, T0));
        restarted.takeSnapshot();
        assertEquals(List.of(PartitionDirectories.name(partition(0, Map.of()))), partitionDirs());
    }

    /**
     * Without a snapshot a replica rebuilds its partitions from the whole Raft log; when the log was purged behind a
     * snapshot that is gone, it refuses to start and keeps its partition directories.
     */
    @Test
    void aReplicaWhoseSnapshotIsGoneAfterAPurgeRefusesTheStartAndKeepsItsPartitions() throws IOException {
        GroupStateMachine leader = leader();
        lead(leader, add(partition(0, Map.of())));
        lead(leader, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "one"))));
        leader.takeSnapshot();
        stop(leader);
        Path replicaDir = dir.resolve("leader");
        try (Stream<Path> files = Files.list(replicaDir.resolve(RaftStorageLayout.SM))) {
            for (Path snapshot : files.filter(f -> f.getFileName().toString().startsWith("snapshot.")).toList()) {
                Files.delete(snapshot);
            }
        }
        Files.write(replicaDir.resolve("current").resolve("log_3-9"), new byte[0]);

        IOException refused = assertThrows(IOException.class, this::leader);
        assertEquals("Raft group " + GROUP.getUuid() + " on leader does not start: it has no snapshot, but its Raft "
                + "log in " + replicaDir.resolve("current") + " starts at index 3, so the entries before were purged "
                + "behind a snapshot that is gone (deleted, or unreadable) and its state cannot be rebuilt. Restore "
                + "the snapshot, or delete the group's directory " + replicaDir + " so that this replica catches up "
                + "from the leader when it joins the group again", refused.getMessage());
        assertTrue(Files.isDirectory(replicaDir.resolve(RaftStorageLayout.SM).resolve(PartitionDirectories.PARTITIONS)
                .resolve(PartitionDirectories.name(partition(0, Map.of())))));
    }

    private static ByteString change(GroupChange.Builder change) {
        return GroupEntryFormat.change(change.build());
    }

    /** The leader's batches of a partition from {@code offset}, back to back, as a replica of its group reads them. */
    private static ByteBuffer batchesFrom(GroupStateMachine machine, PartitionKey key, long offset) {
        return machine.host().partition(key).orElseThrow().log().read(offset, 1 << 20).batches();
    }

    @Test
    void aPartitionMovesIntoAnotherGroupWithItsOffsetsAndReceiveTimes() throws IOException {
        GroupStateMachine from = leader();
        lead(from, add(partition(0, Map.of())));
        for (int i = 0; i < 3; i++) {
            leaderNowMs.set(BASE_MS + i);
            lead(from, GroupEntryFormat.request(List.of(batch(T0, BASE_MS, "before-" + i))));
        }
        GroupStateMachine into = replica("into", Map.of(), fixed(BASE_MS - 60_000));
        lead(into, change(GroupChange.newBuilder().addImport(partition(0, Map.of())).setMetadataIndex(7)));
        assertEquals(PartitionState.PARTITION_IMPORTING, into.host().partition(T0).orElseThrow().state());
        assertEquals(7, into.host().metadataIndex());

        GroupEntryFormat.Outcome whileImporting = outcomes(lead(into, GroupEntryFormat.request(List.of(
                batch(T0, BASE_MS, "produced too early")))), 1).get(0);
        assertEquals(ErrorCode.NOT_AVAILABLE, whileImporting.refused().code());
        GroupEntryFormat.CopyOutcome firstCopy = GroupEntryFormat.readCopyReply(lead(into, GroupEntryFormat.copy(T0,
                0, batchesFrom(from, T0, 0).limit(RecordBatchFormat.totalSize(batchesFrom(from, T0, 0), 0)))));
        assertEquals(new GroupEntryFormat.CopyOutcome(1, null), firstCopy);
        assertEquals(3, GroupEntryFormat.readCopyReply(lead(into, GroupEntryFormat.copy(T0, 0,
                batchesFrom(from, T0, 0)))).logEndOffset(), "a batch held already is skipped");

        GroupChangeReply sealed = GroupChangeReply.parseFrom(lead(from, change(GroupChange.newBuilder()
                .addSeal(partition(0, Map.of())))));
        assertEquals(3, sealed.getSealed(0).getLogEndOffset());
        GroupEntryFormat.Outcome whileSealed = outcomes(lead(from, GroupEntryFormat.request(List.of(
                batch(T0, BASE_MS, "produced to the old group")))), 1).get(0);
        assertEquals(ErrorCode.NOT_AVAILABLE, whileSealed.refused().code());
        assertEquals("t-0 is moving to other replicas; the batch was not appended: retry, it goes to the "
                + "partition's new replicas once the move completes", whileSealed.refused().getMessage());

        lead(into, change(GroupChange.newBuilder().addActivate(PartitionEnd.newBuilder()
                .setPartition(partition(0, Map.of())).setLogEndOffset(4))));
        assertEquals(PartitionState.PARTITION_IMPORTING, into.host().partition(T0).orElseThrow().state(),
                "its log does not end at 4: not activated");
        lead(into, change(GroupChange.newBuilder().addActivate(PartitionEnd.newBuilder()
                .setPartition(partition(0, Map.of())).setLogEndOffset(3))));
        assertEquals(PartitionState.PARTITION_LIVE, into.host().partition(T0).orElseThrow().state());
        GroupEntryFormat.Outcome after = outcomes(lead(into, GroupEntryFormat.request(List.of(
                batch(T0, BASE_MS - 60_000, "after the move")))), 1).get(0);
        assertEquals(new AppendResult(3, 3, BASE_MS + 2), after.appended(),
                "the next offset, and ReceiveTime held at the copied last although this leader's clock is behind");
        assertEquals(batches(from, T0), batches(into, T0).subList(0, 3), "the copy is byte for byte");

        GroupStateMachine follower = replica("into-follower", Map.of(), fixed(BASE_MS));
        follow(follower, entriesBy.get(into));
        assertEquals(batches(into, T0), batches(follower, T0), "the new group's replicas hold the same bytes");

        into.takeSnapshot();
        from.takeSnapshot();
        stop(into);
        stop(from);
        assertEquals(PartitionState.PARTITION_LIVE, replica("into", Map.of(), fixed(BASE_MS)).host().partition(T0)
                .orElseThrow().state(), "the states survive a restart from the snapshot");
        assertEquals(PartitionState.PARTITION_SEALED, leader().host().partition(T0).orElseThrow().state());
    }

    @Test
    void aCopyWhoseSourceStartsPastItStartsAgainThereAndOnlyAnImportingPartitionTakesCopies() throws IOException {
        GroupStateMachine into = leader();
        lead(into, change(GroupChange.newBuilder().addImport(partition(0, Map.of())).addAdd(partition(1, Map.of()))));
        ByteBuffer copied = new RecordBatchBuilder().append(BASE_MS, null, "at 0".getBytes()).build();
        RecordBatchFormat.stamp(new CRC32C(), copied, 0, 0, BASE_MS);
        assertEquals(1, GroupEntryFormat.readCopyReply(lead(into, GroupEntryFormat.copy(T0, 0, copied)))
                .logEndOffset());
        ByteBuffer later = new RecordBatchBuilder().append(BASE_MS, null, "at 40".getBytes()).build();
        RecordBatchFormat.stamp(new CRC32C(), later, 0, 40, BASE_MS + 1);
        assertEquals(41, GroupEntryFormat.readCopyReply(lead(into, GroupEntryFormat.copy(T0, 40, later)))
                .logEndOffset(), "retention at the source removed 1 to 39: the copy starts again at 40");
        assertEquals(40, into.host().partition(T0).orElseThrow().log().logStartOffset());

        GroupEntryFormat.CopyOutcome live = GroupEntryFormat.readCopyReply(lead(into, GroupEntryFormat.copy(T1, 0,
                copied)));
        assertEquals(ErrorCode.INVALID_REQUEST, live.refused().code());
        assertEquals(0, live.logEndOffset());
        assertEquals(-1, GroupEntryFormat.readCopyReply(lead(into, GroupEntryFormat.copy(new PartitionKey(TOPIC, 5),
                0, copied))).logEndOffset(), "not hosted");
    }

    /** Where Ratis keeps a group's state machine files under its storage directory. */
    private static final class RaftStorageLayout {
        static final String SM = "sm";
    }
}
