package io.tidemark.replication.statemachine;

import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.segment.LogSegment;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.replication.raft.RaftLogCheck;
import io.tidemark.replication.raft.NettyRaftRpcType;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import io.tidemark.replication.snapshot.PartitionDirectories;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.exceptions.ChecksumException;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.CodedInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A partition group's replica restarted on a real Ratis server, one peer, after its files were damaged the ways a
 * crash, a bad disk or a hand deleting files damage them. The group hosts partition t-0 (segments of 200 bytes, so a
 * few batches each); its log holds the partition's add, 4 batches, a snapshot, 2 more batches, and what Ratis writes
 * itself.
 */
class GroupRestartTest {
    private static final long BASE_MS = 1_700_000_000_000L;
    private static final RaftGroupId GROUP = RaftGroupId.valueOf(new UUID(3, 4));
    private static final UUID TOPIC = new UUID(7, 8);
    private static final PartitionKey T0 = new PartitionKey(TOPIC, 0);
    private static final GroupPartition PARTITION = GroupPartition.newBuilder().setTopic("t")
            .setTopicId(TopicIds.toBytes(TOPIC)).setPartition(0).putOverrides("segment.bytes", "200").build();
    private static final ClientId CLIENT = ClientId.randomId();
    private static final Duration START_MAX = Duration.ofSeconds(60);
    /** What Ratis preallocates of an open Raft log segment by default: zeros a crash leaves after the entries. */
    private static final int PREALLOCATED_BYTES = 4 << 20;
    /** A Raft log segment starts with "RaftLog1". */
    private static final int HEADER_BYTES = 8;

    @TempDir
    Path dir;
    private final List<RaftServer> running = new ArrayList<>();
    private long callId;
    /** The entries of the written log's open segment, and where each starts in the file. */
    private final List<LogEntryProto> written = new ArrayList<>();
    private final List<Integer> startsAt = new ArrayList<>();
    private Path openSegment;
    private int segmentEnd;

    @AfterEach
    void stop() throws IOException {
        for (RaftServer server : running) {
            server.close();
        }
    }

    private static RaftProperties properties(Path storage) {
        return RaftSettings.server(storage, "127.0.0.1", 0, new BrokerConfig.RaftTuning(300, 600, 32 << 20, 1 << 20,
                10_000, true, 1), new NettyRaftRpcType());
    }

    private static RaftServer server(Path storage, RaftStorage.StartupOption option, RaftGroup group)
            throws IOException {
        return server(properties(storage), option, group);
    }

    private static RaftServer server(RaftProperties properties, RaftStorage.StartupOption option, RaftGroup group)
            throws IOException {
        RaftServer.Builder builder = RaftServer.newBuilder().setServerId(RaftPeerIds.of(1)).setProperties(properties)
                .setStateMachineRegistry(g -> new GroupStateMachine(TopicConfig::parse, ClientId.randomId(), null,
                        InstantSource.fixed(Instant.ofEpochMilli(BASE_MS)), changed -> { }, Runnable::run))
                .setOption(option);
        return (group == null ? builder : builder.setGroup(group)).build();
    }

    /** Starts the server on {@code storage} as a broker restarts: the Raft log check first. */
    private RaftServer restart(Path storage) throws IOException {
        RaftLogCheck.checkGroups(storage);
        RaftServer server = server(storage, RaftStorage.StartupOption.RECOVER, null);
        running.add(server);
        server.start();
        awaitLeader(server);
        return server;
    }

    private static void awaitLeader(RaftServer server) {
        await().atMost(START_MAX).until(() -> server.getDivision(GROUP).getInfo().isLeaderReady());
    }

    private RaftClientReply submit(RaftServer server, ByteString content) throws Exception {
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(CLIENT).setServerId(server.getId())
                .setGroupId(GROUP).setCallId(callId++).setMessage(Message.valueOf(content))
                .setType(RaftClientRequest.writeRequestType()).build();
        RaftClientReply reply = server.submitClientRequestAsync(request).get(30, TimeUnit.SECONDS);
        assertTrue(reply.isSuccess(), () -> "entry refused: " + reply.getException());
        return reply;
    }

    private void produce(RaftServer server, int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            ByteBuffer batch = new RecordBatchBuilder().append(BASE_MS, null, ("record " + i).getBytes()).build();
            submit(server, GroupEntryFormat.request(List.of(new GroupEntryFormat.Submitted(T0, batch, BASE_MS,
                    BASE_MS, false))));
        }
    }

    /**
     * Writes the log and stops as a crash does: without the snapshot Ratis takes when it stops (it would cover the
     * last entry, which a crash can tear only before it is flushed, so before any snapshot covers it).
     */
    @BeforeEach
    void writeTheLog() throws Exception {
        Path storage = dir.resolve("written");
        RaftProperties properties = properties(storage);
        RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(properties, false);
        RaftServer server = startedWithThePartition(properties);
        try {
            produce(server, 0, 4);
            assertTrue(server.snapshotManagement(SnapshotManagementRequest.newCreate(CLIENT, server.getId(), GROUP,
                    callId++, 30_000, 1)).isSuccess());
            produce(server, 4, 6);
        } finally {
            server.close();
        }
        readOpenSegment(storage);
    }

    /** A new group of one replica in {@code properties}' storage, led and hosting the partition; the caller closes it. */
    private RaftServer startedWithThePartition(RaftProperties properties) throws Exception {
        RaftServer server = server(properties, RaftStorage.StartupOption.FORMAT, RaftGroup.valueOf(GROUP,
                RaftPeer.newBuilder().setId(RaftPeerIds.of(1)).setAddress("127.0.0.1:0").build()));
        try {
            server.start();
            awaitLeader(server);
            submit(server, GroupEntryFormat.change(GroupChange.newBuilder().addAdd(PARTITION).build()));
            return server;
        } catch (Exception | AssertionError e) {
            server.close();
            throw e;
        }
    }

    /** The open segment of the group's Raft log in {@code storage}. */
    private static Path openSegmentOf(Path storage) throws IOException {
        try (Stream<Path> files = Files.list(groupDir(storage).resolve("current"))) {
            return files.filter(f -> f.getFileName().toString().startsWith("log_inprogress_")).findFirst()
                    .orElseThrow();
        }
    }

    /** Reads the entries of the written log's open segment with Ratis' protobuf reader. */
    private void readOpenSegment(Path storage) throws IOException {
        openSegment = openSegmentOf(storage);
        byte[] bytes = Files.readAllBytes(openSegment);
        segmentEnd = bytes.length;
        CodedInputStream in = CodedInputStream.newInstance(bytes, HEADER_BYTES,
                bytes.length - HEADER_BYTES);
        while (!in.isAtEnd()) {
            startsAt.add(HEADER_BYTES + in.getTotalBytesRead());
            written.add(LogEntryProto.parseFrom(in.readRawBytes(in.readRawVarint32())));
            in.readRawBytes(4);
        }
    }

    private static Path groupDir(Path storage) {
        return storage.resolve(GROUP.getUuid().toString());
    }

    /** A copy of the written storage, to damage. */
    private Path copyOfTheLog(String name) throws IOException {
        return copy(dir.resolve("written"), name);
    }

    private Path copy(Path from, String name) throws IOException {
        Path to = dir.resolve(name);
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : files.toList()) {
                Files.copy(file, to.resolve(from.relativize(file).toString()));
            }
        }
        return to;
    }

    /** The same file in another copy of the storage. */
    private Path in(Path storage, Path file) {
        return storage.resolve(dir.resolve("written").relativize(file).toString());
    }

    private static long batchEntries(List<LogEntryProto> entries) {
        return entries.stream().filter(e -> e.hasStateMachineLogEntry() && GroupEntryFormat.type(
                e.getStateMachineLogEntry().getLogData()) == GroupEntryFormat.BATCHES).count();
    }

    /**
     * Every entry before the torn last one is in the restarted log as written, and applied (a leader is ready once it
     * applied the first entry of its term, which takes the torn entry's index).
     */
    private void assertWholeEntriesKept(RaftServer server) throws IOException {
        List<LogEntryProto> whole = written.subList(0, written.size() - 1);
        for (LogEntryProto entry : whole) {
            assertEquals(entry, server.getDivision(GROUP).getRaftLog().get(entry.getIndex()));
        }
        LogEntryProto torn = written.get(written.size() - 1);
        assertTrue(server.getDivision(GROUP).getRaftLog().get(torn.getIndex()).getTerm() > torn.getTerm(),
                "the torn entry's index holds the restarted leader's entry");
        GroupStateMachine machine = (GroupStateMachine) server.getDivision(GROUP).getStateMachine();
        assertEquals(batchEntries(whole), machine.host().partition(T0).orElseThrow().log().logEndOffset(),
                "a record for each batch entry kept");
    }

    /**
     * Over Tidemark's Netty transport the Raft log holds the group's entries and none of Ratis' commit-index entries,
     * which by default follow every commit: a second log write and {@code fdatasync} per batch ({@link RaftSettings}).
     */
    @Test
    void theRaftLogHoldsEachBatchAndNoCommitIndexEntry() {
        assertEquals(6, batchEntries(written), "one entry per batch produced");
        assertEquals(List.of(), written.stream().filter(LogEntryProto::hasMetadataEntry).map(LogEntryProto::getIndex)
                .toList(), "commit-index entries");
    }

    @Test
    void aLastEntryCutShortByACrashIsDroppedAndEveryWholeEntryKept() throws Exception {
        Path storage = copyOfTheLog("cut");
        try (FileChannel channel = FileChannel.open(in(storage, openSegment), StandardOpenOption.WRITE)) {
            channel.truncate(segmentEnd - 3);
        }

        assertWholeEntriesKept(restart(storage));
    }

    @Test
    void aLastEntryTornInThePreallocatedZerosStopsRatisAloneButNotTheBroker() throws Exception {
        Path ratisAlone = copyOfTheLog("ratis-alone");
        Path checked = copyOfTheLog("checked");
        for (Path storage : List.of(ratisAlone, checked)) {
            try (FileChannel channel = FileChannel.open(in(storage, openSegment), StandardOpenOption.WRITE)) {
                channel.write(ByteBuffer.allocate(4096), segmentEnd - 4);
            }
        }

        RaftServer unchecked = server(ratisAlone, RaftStorage.StartupOption.RECOVER, null);
        running.add(unchecked);
        Throwable refused = assertThrows(Exception.class, unchecked::start);
        while (refused.getCause() != null) {
            refused = refused.getCause();
        }
        assertInstanceOf(ChecksumException.class, refused, "CorruptionPolicy.EXCEPTION refuses a torn write");

        assertWholeEntriesKept(restart(checked));
    }

    /**
     * A replica killed with an entry larger than half the largest entry (the appender's byte limit, 1 MiB here) in its
     * open Raft log segment, followed by the zeros Ratis preallocates (4 MiB; a clean stop cuts them): Ratis 3.2 alone
     * cannot read the segment back ("Resetting to invalid mark", RaftLogCheck says why), so the group never started
     * again; checked first, it restarts with the entry. Partition moves copy in entries of up to that size, and group
     * commit fills entries up to it under load.
     */
    @Test
    void anOpenSegmentEndingInALargeEntryAndPreallocatedZerosRestarts() throws Exception {
        Path written = dir.resolve("large");
        RaftServer server = startedWithThePartition(properties(written));
        try {
            ByteBuffer batch = new RecordBatchBuilder().append(BASE_MS, null, new byte[700_000]).build();
            submit(server, GroupEntryFormat.request(List.of(new GroupEntryFormat.Submitted(T0, batch, BASE_MS,
                    BASE_MS, false))));
        } finally {
            server.close();
        }
        try (FileChannel open = FileChannel.open(openSegmentOf(written), StandardOpenOption.WRITE)) {
            open.write(ByteBuffer.allocate(PREALLOCATED_BYTES), open.size());
        }
        Path ratisAlone = copy(written, "large-ratis-alone");

        RaftServer unchecked = server(ratisAlone, RaftStorage.StartupOption.RECOVER, null);
        running.add(unchecked);
        Throwable refused = assertThrows(Exception.class, unchecked::start);
        while (refused.getCause() != null) {
            refused = refused.getCause();
        }
        assertEquals("Resetting to invalid mark", refused.getMessage());

        RaftServer restarted = restart(written);
        GroupStateMachine machine = (GroupStateMachine) restarted.getDivision(GROUP).getStateMachine();
        assertEquals(1, machine.host().partition(T0).orElseThrow().log().logEndOffset(), "the large batch is there");
    }

    @Test
    void aDamagedEntryBelowTheLastOneRefusesTheStartNamingTheFile() throws IOException {
        Path storage = copyOfTheLog("flipped");
        Path segment = in(storage, openSegment);
        int damaged = written.size() - 3;
        int at = startsAt.get(damaged);
        int crcAt = startsAt.get(damaged + 1) - 4;
        byte[] bytes = Files.readAllBytes(segment);
        bytes[at + 6] ^= 0x01;
        Files.write(segment, bytes);
        CRC32C crc = new CRC32C();
        crc.update(bytes, at, crcAt - at);

        IOException refused = assertThrows(IOException.class, () -> restart(storage));

        assertEquals("Raft log segment " + segment + " has a damaged entry (index "
                + written.get(damaged).getIndex() + "): " + String.format("CRC32C stored 0x%08x, computed 0x%08x",
                ByteBuffer.wrap(bytes).getInt(crcAt), (int) crc.getValue()) + "; non-zero bytes follow it at byte "
                + (crcAt + 4) + ", so it is not a torn last write (at byte " + at + "). A damaged entry below the "
                + "log's end is never dropped: the broker does not start. Restore the file, or delete the group's "
                + "directory " + groupDir(storage) + " so that this replica copies the leader's log when it joins "
                + "the group again", refused.getMessage());
    }

    @Test
    void aPartitionLogShorterThanTheSnapshotSaysRefusesTheStartNamingItAndBothEndOffsets() throws Exception {
        Path storage = copyOfTheLog("deleted");
        Path partitionDir = groupDir(storage).resolve("sm").resolve(PartitionDirectories.PARTITIONS)
                .resolve(PartitionDirectories.name(PARTITION));
        List<Path> segments;
        try (Stream<Path> files = Files.list(partitionDir)) {
            segments = files.filter(f -> f.toString().endsWith(LogSegment.LOG_SUFFIX)).sorted().toList();
        }
        long snapshotEnd = 4;
        int holdingLast = 0;
        while (holdingLast + 1 < segments.size() && baseOffset(segments.get(holdingLast + 1)) < snapshotEnd) {
            holdingLast++;
        }
        assertTrue(holdingLast > 0, "segments of a few batches: " + segments);
        for (Path segment : segments.subList(holdingLast, segments.size())) {
            Files.delete(segment);
        }

        Throwable refused = assertThrows(Exception.class, () -> restart(storage));
        while (refused.getCause() != null) {
            refused = refused.getCause();
        }

        assertEquals("Raft group " + GROUP.getUuid() + " on n1 does not start: the log of partition "
                + PartitionDirectories.name(PARTITION) + " in " + partitionDir + " ends at offset "
                + baseOffset(segments.get(holdingLast)) + ", below " + snapshotEnd + " where the group's snapshot at "
                + "index " + snapshotIndex(storage) + " says it ends: its files were truncated or lost. Replaying the "
                + "group's entries onto it would give their batches other offsets than on the other replicas; "
                + "restore the files, or delete the group's directory " + groupDir(storage) + " so that this replica "
                + "copies the leader's logs when it joins the group again", refused.getMessage());
    }

    private static long baseOffset(Path segment) {
        return Long.parseLong(segment.getFileName().toString().substring(0, 20));
    }

    private static long snapshotIndex(Path storage) throws IOException {
        try (Stream<Path> files = Files.list(groupDir(storage).resolve("sm"))) {
            return files.map(f -> SimpleStateMachineStorage.SNAPSHOT_REGEX.matcher(f.getFileName().toString()))
                    .filter(Matcher::matches).mapToLong(m -> Long.parseLong(m.group(2))).max().orElseThrow();
        }
    }

    /**
     * Entries a broker never sends, submitted straight to the group as anything reaching the Raft port could, are each
     * refused with the reason and never appended; the group serves on, and a restart replays a log without them
     * (before, apply threw on them on every replica and closed the group, again at each restart).
     */
    @Test
    void malformedEntriesAreRefusedBeforeTheyAreAppendedAndTheGroupServesOn() throws Exception {
        RaftServer server = restart(copyOfTheLog("malformed"));
        ByteBuffer good = new RecordBatchBuilder().append(BASE_MS, null, "good".getBytes()).build();
        ByteString batches = GroupEntryFormat.request(List.of(new GroupEntryFormat.Submitted(T0, good, BASE_MS,
                BASE_MS, false)));
        byte[] negativePartition = batches.toByteArray();
        ByteBuffer.wrap(negativePartition).putInt(GroupEntryFormat.SLOTS_OFFSET + GroupEntryFormat.PARTITION_OFFSET, -1);
        byte[] stamped = batches.toByteArray();
        ByteBuffer.wrap(stamped).putLong(GroupEntryFormat.SLOTS_OFFSET + GroupEntryFormat.RECEIVE_TIME_OFFSET, 1);
        byte[] garbage = new byte[GroupEntryFormat.tableBytes(1) + good.remaining()];
        System.arraycopy(batches.toByteArray(), 0, garbage, 0, GroupEntryFormat.tableBytes(1));
        Map<String, ByteString> malformed = new LinkedHashMap<>();
        malformed.put("empty", ByteString.EMPTY);
        malformed.put("unknown type", ByteString.copyFrom(new byte[] {9, 0, 0}));
        malformed.put("more batches announced than held", ByteString.copyFrom(new byte[] {1, 0, 0, 0, 5, 0, 0}));
        malformed.put("negative partition", ByteString.copyFrom(negativePartition));
        malformed.put("stamped by its sender", ByteString.copyFrom(stamped));
        malformed.put("not a batch", ByteString.copyFrom(garbage));
        malformed.put("SendTimes the batch does not hold", GroupEntryFormat.request(List.of(
                new GroupEntryFormat.Submitted(T0, good, 0, 0, false))));
        malformed.put("change that is no GroupChange", ByteString.copyFrom(new byte[] {2, (byte) 0xff, 1}));
        malformed.put("change with a short topic id", GroupEntryFormat.change(GroupChange.newBuilder()
                .addRemove(PARTITION.toBuilder().setTopicId(com.google.protobuf.ByteString.copyFrom(new byte[3])))
                .build()));
        malformed.put("short copy", ByteString.copyFrom(new byte[] {3, 0, 0}));
        long end = server.getDivision(GROUP).getRaftLog().getNextIndex();
        for (Map.Entry<String, ByteString> entry : malformed.entrySet()) {
            RaftClientReply reply = server.submitClientRequestAsync(RaftClientRequest.newBuilder().setClientId(CLIENT)
                    .setServerId(server.getId()).setGroupId(GROUP).setCallId(callId++)
                    .setMessage(Message.valueOf(entry.getValue())).setType(RaftClientRequest.writeRequestType())
                    .build()).get(30, TimeUnit.SECONDS);
            assertNotNull(reply.getStateMachineException(), entry.getKey() + " is refused: " + reply);
        }
        assertEquals(end, server.getDivision(GROUP).getRaftLog().getNextIndex(), "nothing was appended");

        produce(server, 6, 7);
        GroupStateMachine machine = (GroupStateMachine) server.getDivision(GROUP).getStateMachine();
        assertEquals(7, machine.host().partition(T0).orElseThrow().log().logEndOffset(), "the group serves on");
        server.close();
        running.remove(server);
        GroupStateMachine restarted = (GroupStateMachine) restart(dir.resolve("malformed")).getDivision(GROUP)
                .getStateMachine();
        assertEquals(7, restarted.host().partition(T0).orElseThrow().log().logEndOffset());
    }
}
