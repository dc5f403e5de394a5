package io.tidemark.replication.statemachine;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupChangeReply;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.PartitionEnd;
import io.tidemark.proto.v1.PartitionState;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The core of a partition group's replica, driven entry by entry: the same entries applied to replicas with different
 * local configs and histories (compaction on one only, restarts from snapshots at other points) leave the same logs
 * and give the same answers.
 */
class PartitionHostTest {
    private static final long BASE_MS = 1_700_000_000_000L;
    private static final UUID TOPIC = new UUID(7, 8);
    private static final PartitionKey T0 = new PartitionKey(TOPIC, 0);
    private static final long PRODUCER = 42;
    private static final long OTHER_PRODUCER = 43;

    @TempDir
    Path dir;
    /** The group's log: every entry as the leader stamped it, from index 1. */
    private final List<ByteString> entries = new ArrayList<>();
    private final Map<String, Map<String, String>> defaults = new HashMap<>();
    private final List<PartitionHost> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws IOException {
        for (PartitionHost host : opened) {
            host.close();
        }
    }

    /** A replica named {@code name}, with these topic defaults under every partition's overrides, opened empty. */
    private PartitionHost replica(String name, Map<String, String> topicDefaults) throws IOException {
        defaults.put(name, topicDefaults);
        return open(name, Optional.empty());
    }

    /** Opens the replica {@code name} over its directory, from a snapshot, as a restart does. */
    private PartitionHost open(String name, Optional<GroupSnapshot> snapshot) throws IOException {
        PartitionHost host = new PartitionHost(name, dir.resolve(name), overrides -> {
            Map<String, String> merged = new HashMap<>(defaults.get(name));
            merged.putAll(overrides);
            return TopicConfig.parse(merged);
        });
        host.open(snapshot, BASE_MS);
        opened.add(host);
        return host;
    }

    /** Stops a replica as a crash after its last write would, and opens it again from its latest snapshot. */
    private PartitionHost restart(String name, PartitionHost host, GroupSnapshot snapshot) throws IOException {
        host.close();
        opened.remove(host);
        return open(name, Optional.of(snapshot));
    }

    /** Takes a snapshot of a replica after the last entry it applied, as its state machine records one. */
    private static GroupSnapshot snapshot(PartitionHost host, long index) throws IOException {
        SnapshotCapture capture = host.captureSnapshot(1, index);
        capture.flush(BASE_MS);
        host.snapshotRecorded(capture);
        return capture.snapshot();
    }

    /**
     * The leader's path: stamps the request at {@code nowMs}, adds the entry to the group's log as it would be
     * written (flat bytes) and applies it on the leader; the reply.
     */
    private ByteBuffer lead(PartitionHost leader, ByteString request, long nowMs) {
        LeadingReplica.Led led = LeadingReplica.lead(leader, request, entries.size() + 1, nowMs);
        entries.add(led.entry());
        return led.reply();
    }

    /** A follower applies the entries from index {@code from} to the last; the replies, in order. */
    private List<ByteBuffer> follow(PartitionHost follower, int from) {
        List<ByteBuffer> replies = new ArrayList<>();
        for (int index = from; index <= entries.size(); index++) {
            replies.add(ByteBuffer.wrap(follower.apply(entries.get(index - 1), index, null, BASE_MS)));
        }
        return replies;
    }

    private static GroupPartition partition(Map<String, String> overrides) {
        return GroupPartition.newBuilder().setTopic("t").setTopicId(TopicIds.toBytes(TOPIC)).setPartition(0)
                .putAllOverrides(overrides).build();
    }

    private static ByteString change(GroupChange.Builder change) {
        return GroupEntryFormat.change(change.build());
    }

    /** A request of one batch of an idempotent producer: one record of this key. */
    private static ByteString produce(long producerId, int sequence, String key) {
        return produce(producerId, sequence, key, BASE_MS);
    }

    /** ... with this SendTime. */
    private static ByteString produce(long producerId, int sequence, String key, long sendTimeMs) {
        ByteBuffer batch = new RecordBatchBuilder().producer(producerId, (short) 0, sequence)
                .append(sendTimeMs, key.getBytes(StandardCharsets.UTF_8),
                        (key + "-" + sequence).getBytes(StandardCharsets.UTF_8)).build();
        return GroupEntryFormat.request(List.of(new GroupEntryFormat.Submitted(T0, batch, sendTimeMs, sendTimeMs,
                false)));
    }

    private static GroupEntryFormat.Outcome outcome(ByteBuffer reply) {
        return GroupEntryFormat.readReply(reply, 1).get(0);
    }

    /** What an outcome says, comparable: the offsets and ReceiveTime appended, or the error code refused with. */
    private static String said(ByteBuffer reply) {
        GroupEntryFormat.Outcome outcome = outcome(reply.duplicate());
        return outcome.appended() != null ? outcome.appended().toString() : outcome.refused().code().toString();
    }

    /** Every record of a replica's log of t-0 by offset: offset, ReceiveTime, SendTime, key, value, headers. */
    private static Map<Long, String> records(PartitionHost host) {
        PartitionLog log = host.partition(T0).orElseThrow().log();
        RecordBatchReader reader = new RecordBatchReader();
        Map<Long, String> records = new TreeMap<>();
        long offset = log.logStartOffset();
        while (offset < log.logEndOffset()) {
            LogReadResult read = log.read(offset, 1 << 20);
            ByteBuffer batches = read.batches();
            for (Record record : reader.records(batches.duplicate())) {
                records.put(record.offset(), record.receiveTimeMs() + " " + record.sendTimeMs() + " "
                        + HexFormat.of().formatHex(record.key()) + " " + HexFormat.of().formatHex(record.value())
                        + " " + record.headers());
            }
            int last = batches.limit();
            int at = batches.position();
            long next = offset;
            while (at < last) {
                next = RecordBatchFormat.lastOffset(batches, at) + 1;
                at += RecordBatchFormat.totalSize(batches, at);
            }
            offset = Math.max(next, offset + 1);
        }
        return records;
    }

    /**
     * Replica b compacts on its own (its segments are small, the topic compacts) and restarts from its snapshot; an
     * idempotent producer whose last batches b compacted away then resends one and goes on. Rebuilt from b's own
     * segments (before append states were kept), the producer's table had lost those batches: b stored the resend
     * again, a duplicate a did not store, and put every later batch one offset further than a did. Opened from the
     * snapshot's append state, b decides as a does.
     */
    @Test
    void aReplicaThatCompactedAndRestartedDecidesAsOneThatDidNot() throws IOException {
        Map<String, String> compacted = Map.of("cleanup.policy", "compact", "delete.retention.ms", "0");
        int batchBytes = GroupEntryFormat.batches(produce(PRODUCER, 0, "a")).get(0).remaining();
        PartitionHost a = replica("a", Map.of());
        PartitionHost b = replica("b", Map.of("segment.bytes", String.valueOf(3 * batchBytes)));
        lead(a, change(GroupChange.newBuilder().addAdd(partition(compacted))), BASE_MS);
        for (int sequence = 0; sequence < 5; sequence++) {
            lead(a, produce(PRODUCER, sequence, "a"), BASE_MS + sequence);
        }
        for (int i = 0; i < 4; i++) {
            lead(a, produce(OTHER_PRODUCER, i, "a"), BASE_MS + 10 + i);
        }
        follow(b, 1);
        long snapshotIndex = entries.size();
        GroupSnapshot snapshot = snapshot(b, snapshotIndex);
        PartitionLog bLog = b.partition(T0).orElseThrow().log();
        new LogCompactor(-1, new MetricRegistry()).compact(bLog, BASE_MS + 60_000, snapshot.getPartitions(0)
                .getLogEndOffset());
        assertTrue(records(b).size() < records(a).size(), "b compacted the producer's records away: " + records(b));
        b = restart("b", b, snapshot);

        List<String> resend = List.of(said(lead(a, produce(PRODUCER, 4, "a"), BASE_MS + 20)),
                said(lead(a, produce(PRODUCER, 5, "z"), BASE_MS + 21)));
        assertEquals(List.of("AppendResult[baseOffset=4, lastOffset=4, receiveTimeMs=" + (BASE_MS + 4) + "]",
                "AppendResult[baseOffset=9, lastOffset=9, receiveTimeMs=" + (BASE_MS + 21) + "]"), resend,
                "the resend is a duplicate, the next batch follows");
        assertEquals(resend, follow(b, (int) snapshotIndex + 1).stream().map(PartitionHostTest::said).toList(),
                "b answers both as a did");
        assertEquals(a.partition(T0).orElseThrow().log().logEndOffset(), b.partition(T0).orElseThrow().log()
                .logEndOffset());
        Map<Long, String> kept = records(b);
        Map<Long, String> all = records(a);
        kept.forEach((offset, record) -> assertEquals(all.get(offset), record, "offset " + offset));
        assertEquals(all.get(9L), kept.get(9L));
    }

    /**
     * How long producers are remembered is a decision of the group's log: every replica forgets a producer at the same
     * batch, also one restarted from a snapshot taken after the change.
     */
    @Test
    void everyReplicaForgetsASilentProducerAtTheSameBatch() throws IOException {
        PartitionHost a = replica("a", Map.of());
        PartitionHost b = replica("b", Map.of());
        lead(a, change(GroupChange.newBuilder().addAdd(partition(Map.of())).setProducerIdExpirationMs(1_000)),
                BASE_MS);
        lead(a, produce(PRODUCER, 0, "k"), BASE_MS);
        follow(b, 1);
        b = restart("b", b, snapshot(b, entries.size()));
        int restartedAt = entries.size() + 1;

        List<String> answers = List.of(said(lead(a, produce(PRODUCER, 7, "k"), BASE_MS + 1_000)),
                said(lead(a, produce(PRODUCER, 7, "k"), BASE_MS + 1_001)));
        assertEquals(List.of(ErrorCode.OUT_OF_ORDER_SEQUENCE.toString(),
                "AppendResult[baseOffset=1, lastOffset=1, receiveTimeMs=" + (BASE_MS + 1_001) + "]"), answers,
                "a second after its last batch the producer is remembered; a millisecond later it is not");
        assertEquals(answers, follow(b, restartedAt).stream().map(PartitionHostTest::said).toList());
        assertEquals(1_000, b.producerIdExpirationMs(), "kept in the snapshot");
    }

    /**
     * A topic's overrides reach the partition through the group's log: every replica takes them at the same entry and
     * keeps them over a restart from a snapshot taken after it, and one restarted from a snapshot before it takes them
     * again when it replays the entry.
     */
    @Test
    void overridesSetByTheGroupsLogSurviveRestartsOnEveryReplica() throws IOException {
        PartitionHost a = replica("a", Map.of());
        PartitionHost b = replica("b", Map.of("retention.ms", "5000"));
        lead(a, change(GroupChange.newBuilder().addAdd(partition(Map.of("retention.ms", "25000")))), BASE_MS);
        follow(b, 1);
        GroupSnapshot before = snapshot(b, entries.size());
        lead(a, change(GroupChange.newBuilder().addConfigure(partition(Map.of("retention.ms", "86400000",
                "segment.ms", "2000")))), BASE_MS);
        follow(b, entries.size());
        for (PartitionHost host : List.of(a, b)) {
            assertEquals(Map.of("retention.ms", "86400000", "segment.ms", "2000"),
                    host.partition(T0).orElseThrow().partition().getOverridesMap());
            assertEquals(86_400_000, host.partition(T0).orElseThrow().log().config().retentionMs());
        }
        GroupSnapshot after = snapshot(b, entries.size());
        b = restart("b", b, after);
        assertEquals(86_400_000, b.partition(T0).orElseThrow().log().config().retentionMs(), "from the snapshot");
        assertEquals(2_000, b.partition(T0).orElseThrow().log().config().segmentMs());

        b = restart("b", b, before);
        assertEquals(25_000, b.partition(T0).orElseThrow().log().config().retentionMs(), "as the snapshot had it");
        follow(b, (int) before.getIndex() + 1);
        assertEquals(86_400_000, b.partition(T0).orElseThrow().log().config().retentionMs(), "replayed");
    }

    /**
     * Overrides this broker cannot read (a key a newer broker knows) never fail an entry: the replica keeps its
     * defaults for that partition and the entry is applied as on the others.
     */
    @Test
    void overridesThisReplicaCannotReadLeaveItsDefaultsAndTheEntryApplied() throws IOException {
        PartitionHost a = replica("a", Map.of());
        ByteBuffer reply = lead(a, change(GroupChange.newBuilder().addAdd(partition(Map.of("retention.ms", "5000",
                "a.key.of.a.later.version", "1")))), BASE_MS);
        assertEquals(0, reply.remaining(), "an empty GroupChangeReply");
        assertEquals(TopicConfig.parse(Map.of()), a.partition(T0).orElseThrow().log().config());
        assertEquals("AppendResult[baseOffset=0, lastOffset=0, receiveTimeMs=" + BASE_MS + "]",
                said(lead(a, produce(PRODUCER, 0, "k"), BASE_MS)));
    }

    /**
     * A partition moving in from a group whose log ends in offsets compaction removed goes live at the sealed end, so
     * the first record produced after the move takes an offset the partition never gave. It went live where the copy
     * ended (the mover activated with the copy's own end), and gave those offsets again.
     */
    @Test
    void aPartitionMovingInFromALogEndingInACompactionGapGoesLiveAtTheSealedEnd() throws IOException {
        PartitionHost from = replica("from", Map.of());
        lead(from, change(GroupChange.newBuilder().addAdd(partition(Map.of()))), BASE_MS);
        for (int sequence = 0; sequence < 5; sequence++) {
            lead(from, produce(PRODUCER, sequence, "k" + sequence), BASE_MS + sequence);
        }
        PartitionLog source = from.partition(T0).orElseThrow().log();
        source.skipTo(8);
        ByteBuffer copied = source.read(0, 1 << 20).batches();
        entries.clear();
        PartitionHost into = replica("into", Map.of());
        lead(into, change(GroupChange.newBuilder().addImport(partition(Map.of()))), BASE_MS);
        lead(into, GroupEntryFormat.copy(T0, 0, copied), BASE_MS);
        assertEquals(5, into.partition(T0).orElseThrow().log().logEndOffset());

        lead(into, activate(4, 8), BASE_MS);
        assertEquals(PartitionState.PARTITION_IMPORTING, into.partition(T0).orElseThrow().state(),
                "a copy that does not end where the mover found the source to end stays importing");
        lead(into, activate(5, 8), BASE_MS);
        assertEquals(PartitionState.PARTITION_LIVE, into.partition(T0).orElseThrow().state());
        assertEquals("AppendResult[baseOffset=8, lastOffset=8, receiveTimeMs=" + (BASE_MS + 10) + "]",
                said(lead(into, produce(OTHER_PRODUCER, 0, "after"), BASE_MS + 10)));
    }

    /**
     * A leader that refuses a batch under its own config (here its SendTime window) answers a resend of a batch an
     * earlier leader stored with where it is stored, on every replica: the producer heard a refusal, split the batch
     * and got its records refused as out of sequence (DifferentConfigsIT, with brokers of different windows).
     */
    @Test
    void aResendARefusingLeaderWouldRefuseIsAnsweredWithWhereAnEarlierLeaderStoredIt() throws IOException {
        PartitionHost wide = replica("wide", Map.of());
        PartitionHost narrow = replica("narrow", Map.of("send.time.after.max.ms", "1000"));
        lead(wide, change(GroupChange.newBuilder().addAdd(partition(Map.of()))), BASE_MS);
        long future = BASE_MS + 60_000;
        ByteBuffer batch = new RecordBatchBuilder().producer(PRODUCER, (short) 0, 0)
                .append(future, "k".getBytes(StandardCharsets.UTF_8), "ahead".getBytes(StandardCharsets.UTF_8)).build();
        ByteString request = GroupEntryFormat.request(List.of(new GroupEntryFormat.Submitted(T0, batch, future,
                future, false)));
        assertEquals("AppendResult[baseOffset=0, lastOffset=0, receiveTimeMs=" + BASE_MS + "]",
                said(lead(wide, request, BASE_MS)));
        follow(narrow, 1);

        ByteBuffer resent = lead(narrow, request, BASE_MS + 10);
        assertEquals("AppendResult[baseOffset=0, lastOffset=0, receiveTimeMs=" + BASE_MS + "]", said(resent));
        assertEquals(said(resent), said(follow(wide, entries.size()).get(0)));
        assertEquals("INVALID_TIMESTAMP", said(lead(narrow, produce(OTHER_PRODUCER, 0, "new", future), BASE_MS + 20)),
                "a batch no leader stored is still refused");
        assertEquals(records(wide), records(narrow));
    }

    /**
     * A capture reads only the partitions that changed since the latest snapshot: one with the same end keeps its
     * snapshot entry and is not fsynced again, but a partition removed and added again is another one, also when its
     * new log happens to end where the old one did.
     */
    @Test
    void aCaptureReadsAndFsyncsOnlyThePartitionsThatChangedAPartitionAddedAgainIncluded() throws IOException {
        PartitionHost leader = replica("leader", Map.of());
        lead(leader, change(GroupChange.newBuilder().addAdd(partition(Map.of()))), BASE_MS);
        lead(leader, produce(PRODUCER, 0, "a"), BASE_MS);
        snapshot(leader, entries.size());
        SnapshotCapture unchanged = leader.captureSnapshot(1, entries.size());
        assertEquals(List.of(), unchanged.changed());
        assertEquals(PRODUCER, unchanged.snapshot().getPartitions(0).getAppendState().getProducers(0).getProducerId());
        leader.snapshotAbandoned();

        lead(leader, change(GroupChange.newBuilder().addRemove(partition(Map.of()))), BASE_MS);
        lead(leader, change(GroupChange.newBuilder().addAdd(partition(Map.of()))), BASE_MS);
        lead(leader, produce(OTHER_PRODUCER, 0, "b"), BASE_MS);
        SnapshotCapture again = leader.captureSnapshot(1, entries.size());
        assertEquals(List.of(leader.partition(T0).orElseThrow().log()), again.changed(), "ends at 1 as before");
        assertEquals(OTHER_PRODUCER, again.snapshot().getPartitions(0).getAppendState().getProducers(0).getProducerId());
    }

    /**
     * A partition moving out goes live, sealed, released, and the group's log decides which of an unseal (its move did
     * not finish in time) and a release (the group it moves into may activate it) takes: an unsealed partition takes
     * batches again and is not released at the end it was sealed at; a released one is never unsealed and takes no
     * batch, so the two groups never both take its batches. A follower ends in the same state.
     */
    @Test
    void aSealedPartitionIsEitherUnsealedOrReleasedNeverBoth() throws IOException {
        PartitionHost leader = replica("leader", Map.of());
        lead(leader, change(GroupChange.newBuilder().addAdd(partition(Map.of()))), BASE_MS);
        lead(leader, produce(PRODUCER, 0, "a"), BASE_MS);
        assertEquals(List.of(end(1)), changed(leader, GroupChange.newBuilder().addSeal(partition(Map.of())))
                .getSealedList());
        assertEquals("NOT_AVAILABLE", said(lead(leader, produce(PRODUCER, 1, "b"), BASE_MS)));

        changed(leader, GroupChange.newBuilder().addUnseal(partition(Map.of())));
        assertEquals(PartitionState.PARTITION_LIVE, leader.partition(T0).orElseThrow().state());
        assertEquals("AppendResult[baseOffset=1, lastOffset=1, receiveTimeMs=" + BASE_MS + "]",
                said(lead(leader, produce(PRODUCER, 1, "b"), BASE_MS)));
        assertEquals(List.of(), changed(leader, GroupChange.newBuilder().addRelease(end(1))).getReleasedList(),
                "unsealed: not released");

        changed(leader, GroupChange.newBuilder().addSeal(partition(Map.of())));
        assertEquals(List.of(), changed(leader, GroupChange.newBuilder().addRelease(end(1))).getReleasedList(),
                "sealed again at 2: a release at the first seal's end is refused");
        assertEquals(PartitionState.PARTITION_SEALED, leader.partition(T0).orElseThrow().state());
        assertEquals(List.of(end(2)), changed(leader, GroupChange.newBuilder().addRelease(end(2))).getReleasedList());
        assertEquals(List.of(end(2)), changed(leader, GroupChange.newBuilder().addRelease(end(2))).getReleasedList(),
                "released again: the same answer, for a mover that did not hear the first");
        changed(leader, GroupChange.newBuilder().addUnseal(partition(Map.of())));
        assertEquals(PartitionState.PARTITION_RELEASED, leader.partition(T0).orElseThrow().state(), "never unsealed");
        assertEquals("NOT_AVAILABLE", said(lead(leader, produce(PRODUCER, 2, "c"), BASE_MS)));
        assertEquals(List.of(end(2)), changed(leader, GroupChange.newBuilder().addSeal(partition(Map.of())))
                .getSealedList(), "a seal of a released partition names its end and changes nothing");
        assertEquals(PartitionState.PARTITION_RELEASED, leader.partition(T0).orElseThrow().state());

        PartitionHost follower = replica("follower", Map.of());
        follow(follower, 1);
        assertEquals(PartitionState.PARTITION_RELEASED, follower.partition(T0).orElseThrow().state());
        assertEquals(records(leader), records(follower));
    }

    /**
     * An all-or-none entry (a transaction ending in one entry: the coordinator's state record and the markers) is
     * stored whole or not at all, on every replica: a marker the partition refuses (its producer epoch is older than
     * the one it saw) refuses the state record beside it, and nothing of the entry is in any log; the same entry with
     * a valid marker stores both, and the transaction is no longer open.
     */
    @Test
    void anAllOrNoneEntryIsStoredWholeOrNotAtAllOnEveryReplica() throws IOException {
        PartitionHost leader = replica("leader", Map.of());
        PartitionKey t1 = new PartitionKey(TOPIC, 1);
        lead(leader, change(GroupChange.newBuilder().addAdd(partition(Map.of())).addAdd(partition(Map.of()).toBuilder()
                .setPartition(1))), BASE_MS);
        ByteBuffer data = new RecordBatchBuilder().producer(PRODUCER, (short) 1, 0).transactional()
                .append(BASE_MS, "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8)).build();
        said(lead(leader, GroupEntryFormat.request(List.of(new GroupEntryFormat.Submitted(t1, data, BASE_MS, BASE_MS,
                false))), BASE_MS));
        ByteBuffer state = new RecordBatchBuilder().append(BASE_MS, "id".getBytes(StandardCharsets.UTF_8),
                "EMPTY".getBytes(StandardCharsets.UTF_8)).build();

        ByteBuffer reply = lead(leader, endInOneEntry(t1, state, TransactionMarker.build(PRODUCER, (short) 0, true, 1,
                BASE_MS)), BASE_MS + 1);
        List<GroupEntryFormat.Outcome> refused = GroupEntryFormat.readReply(reply, 2);
        for (GroupEntryFormat.Outcome outcome : refused) {
            assertEquals(ErrorCode.INVALID_PRODUCER_EPOCH, outcome.refused().code());
            assertTrue(outcome.refused().getMessage().startsWith("nothing of the all-or-none entry was appended: its "
                    + "batch 1 to t-1 was refused: a transaction marker of producer 42 carries epoch 0, older than "
                    + "epoch 1"), outcome.refused().getMessage());
        }
        PartitionLog log0 = leader.partition(T0).orElseThrow().log();
        PartitionLog log1 = leader.partition(t1).orElseThrow().log();
        assertEquals(List.of(0L, 1L, 0L), List.of(log0.logEndOffset(), log1.logEndOffset(), log1.lastStableOffset()),
                "nothing appended; the transaction still open in t-1");

        reply = lead(leader, endInOneEntry(t1, state, TransactionMarker.build(PRODUCER, (short) 1, true, 1,
                BASE_MS)), BASE_MS + 2);
        assertEquals("[AppendResult[baseOffset=0, lastOffset=0, receiveTimeMs=" + (BASE_MS + 2) + "], "
                + "AppendResult[baseOffset=1, lastOffset=1, receiveTimeMs=" + (BASE_MS + 2) + "]]",
                GroupEntryFormat.readReply(reply, 2).stream().map(GroupEntryFormat.Outcome::appended).toList()
                        .toString());
        assertEquals(List.of(1L, 2L, 2L), List.of(log0.logEndOffset(), log1.logEndOffset(), log1.lastStableOffset()));

        PartitionHost follower = replica("follower", Map.of());
        List<ByteBuffer> followed = follow(follower, 1);
        assertEquals(refused.toString(), GroupEntryFormat.readReply(followed.get(2), 2).toString());
        for (PartitionKey key : List.of(T0, t1)) {
            assertEquals(stored(leader, key), stored(follower, key), key.toString());
        }
    }

    /** A partition's log, byte for byte. */
    private static ByteBuffer stored(PartitionHost host, PartitionKey key) {
        return host.partition(key).orElseThrow().log().read(0, 1 << 20).batches();
    }

    /** An all-or-none request: {@code state} to T0, {@code marker} to {@code markerPartition}. */
    private static ByteString endInOneEntry(PartitionKey markerPartition, ByteBuffer state, ByteBuffer marker) {
        return GroupEntryFormat.allOrNone(List.of(
                new GroupEntryFormat.Submitted(T0, state.duplicate(), BASE_MS, BASE_MS, false),
                new GroupEntryFormat.Submitted(markerPartition, marker, BASE_MS, BASE_MS, true)));
    }

    private static PartitionEnd end(long logEndOffset) {
        return PartitionEnd.newBuilder().setPartition(partition(Map.of())).setLogEndOffset(logEndOffset).build();
    }

    /** Applies a change on the leader; its reply. */
    private GroupChangeReply changed(PartitionHost leader, GroupChange.Builder change) throws IOException {
        ByteBuffer reply = lead(leader, change(change), BASE_MS);
        return GroupChangeReply.parseFrom(reply);
    }

    private static ByteString activate(long copiedEnd, long sealedEnd) {
        return change(GroupChange.newBuilder().addActivate(PartitionEnd.newBuilder().setPartition(partition(Map.of()))
                .setLogEndOffset(sealedEnd).setCopiedEndOffset(copiedEnd)));
    }
}
