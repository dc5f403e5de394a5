package io.tidemark.replication.statemachine;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclChange;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclPatternType;
import io.tidemark.proto.v1.AclPermission;
import io.tidemark.proto.v1.AclResourceType;
import io.tidemark.proto.v1.AlterClientQuotasRequest;
import io.tidemark.proto.v1.ClientQuota;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.MetadataReply;
import io.tidemark.proto.v1.PartitionAssignment;
import io.tidemark.proto.v1.PartitionGroupRecord;
import io.tidemark.proto.v1.PartitionReassignment;
import io.tidemark.proto.v1.TopicAssignment;
import io.tidemark.replication.raft.RaftGroups;
import org.apache.ratis.proto.RaftProtos.FollowerInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The topic and reassignment commands of the metadata group, applied as every member applies them; its snapshots,
 * restored at a restart and installed from the leader.
 */
class MetadataStateMachineTest {
    private static final UUID INVOICES_ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");

    @TempDir
    Path dir;
    private final List<String> changes = new ArrayList<>();
    private final MetadataStateMachine machine = newMachine();
    /** Every command applied to {@link #machine}, at its log index. */
    private final List<MetadataCommand> log = new ArrayList<>();
    private final List<RaftStorage> storages = new ArrayList<>();

    @AfterEach
    void closeStorages() throws IOException {
        for (RaftStorage storage : storages) {
            storage.close();
        }
    }

    private MetadataStateMachine newMachine() {
        return newMachine(changes, node -> CompletableFuture.failedFuture(new IllegalStateException("no install")));
    }

    /** A machine that tells {@code changes} of every change, and fetches a leader's snapshot from {@code leaders}. */
    private static MetadataStateMachine newMachine(List<String> changes, MetadataStateMachine.SnapshotSource leaders) {
        return new MetadataStateMachine(new MetadataStateMachine.Listener() {
            @Override
            public void topicCreated(TopicAssignment topic) {
                changes.add("created " + topic.getName());
            }

            @Override
            public void topicAltered(TopicAssignment topic) {
                changes.add("altered " + topic.getName());
            }

            @Override
            public void topicDeleted(TopicAssignment topic) {
                changes.add("deleted " + topic.getName());
            }

            @Override
            public void partitionReassigned(TopicAssignment topic, PartitionAssignment before) {
                PartitionAssignment after = topic.getPartitions(before.getPartition());
                changes.add(topic.getName() + "-" + before.getPartition() + " " + before.getReplicaNodeIdsList()
                        + before.getTargetReplicaNodeIdsList() + " -> " + after.getReplicaNodeIdsList()
                        + after.getTargetReplicaNodeIdsList());
            }
        }, leaders);
    }

    /** Starts {@code machine} as Ratis does, on the storage in {@code dir/name}. */
    private MetadataStateMachine start(MetadataStateMachine machine, String name) throws IOException {
        RaftStorage storage = RaftFixtures.storage(dir.resolve(name));
        storages.add(storage);
        machine.initialize(RaftFixtures.server("n1", machine::takeSnapshot), RaftGroups.METADATA, storage);
        return machine;
    }

    /** Lets go of the storage of the machine started last, as a broker that stops. */
    private void stopLast() throws IOException {
        storages.remove(storages.size() - 1).close();
    }

    /** Applies {@code command} at the next log index (from 0). */
    private MetadataReply apply(MetadataCommand command) throws InvalidProtocolBufferException {
        log.add(command);
        return apply(machine, log.size() - 1, command);
    }

    private static MetadataReply apply(MetadataStateMachine to, long index, MetadataCommand command)
            throws InvalidProtocolBufferException {
        LogEntryProto entry = LogEntryProto.newBuilder().setTerm(1).setIndex(index)
                .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder()
                        .setLogData(ByteString.copyFrom(command.toByteArray()))).build();
        TransactionContext trx = TransactionContext.newBuilder().setStateMachine(to).setLogEntry(entry).build();
        return MetadataReply.parseFrom(to.applyTransaction(trx).join().getContent().toByteArray());
    }

    private static MetadataCommand create(String topic, UUID id) {
        return MetadataCommand.newBuilder().setCreateTopic(TopicAssignment.newBuilder().setName(topic)
                .setTopicId(TopicIds.toBytes(id)).setReplicationFactor(1).addPartitions(PartitionAssignment
                        .newBuilder().setPartition(0).addReplicaNodeIds(1))).build();
    }

    private UUID idOf(String topic) {
        return TopicIds.fromBytes(machine.topics().stream().filter(t -> t.getName().equals(topic)).findFirst()
                .orElseThrow().getTopicId());
    }

    private static MetadataCommand begin(String topic, int partition, Integer... replicas) {
        return MetadataCommand.newBuilder().setBeginReassignment(reassignment(topic, partition, replicas)).build();
    }

    private static MetadataCommand complete(String topic, int partition, Integer... replicas) {
        return MetadataCommand.newBuilder().setCompleteReassignment(reassignment(topic, partition, replicas)).build();
    }

    private static PartitionReassignment reassignment(String topic, int partition, Integer... replicas) {
        return PartitionReassignment.newBuilder().setTopic(topic).setPartition(partition)
                .addAllReplicaNodeIds(List.of(replicas)).build();
    }

    private static String error(MetadataReply reply) {
        return reply.getError().getCode() + ": " + reply.getError().getMessage();
    }

    /** A create as brokers wrote it before topic ids, at log index 0. */
    @BeforeEach
    void topicOnNodesOneAndTwo() throws InvalidProtocolBufferException {
        apply(MetadataCommand.newBuilder().setCreateTopic(TopicAssignment.newBuilder().setName("orders")
                .setReplicationFactor(2).addPartitions(PartitionAssignment.newBuilder().setPartition(0)
                        .addAllReplicaNodeIds(List.of(1, 2)))).build());
        changes.clear();
    }

    @Test
    void aTopicKeepsTheIdItsCreateCarriesThroughAlterAndReassignment() throws InvalidProtocolBufferException {
        assertEquals(MetadataReply.getDefaultInstance(), apply(create("invoices", INVOICES_ID)));
        TopicAssignment created = machine.topics().get(0);
        apply(MetadataCommand.newBuilder().setAlterTopic(created.toBuilder().clearTopicId()
                .putOverrides("retention.ms", "1000")).build());
        apply(MetadataCommand.newBuilder().setAlterTopic(created.toBuilder()
                .setTopicId(TopicIds.toBytes(new UUID(0, 9)))).build());
        apply(begin("invoices", 0, 2));
        assertEquals(INVOICES_ID, idOf("invoices"), "alter and reassignment keep the id");
        assertEquals(List.of("created invoices", "altered invoices", "altered invoices", "invoices-0 [1][] -> [1][2]"),
                changes);
    }

    @Test
    void aCreateWrittenBeforeTopicIdsGetsAnIdFromTheNameAndTheLogIndexTheSameAtEveryReplay() throws Exception {
        UUID legacy = UUID.nameUUIDFromBytes("orders@0".getBytes(StandardCharsets.UTF_8));
        assertEquals(legacy, idOf("orders"));
        apply(MetadataCommand.newBuilder().setDeleteTopic("orders").build());
        apply(log.get(0));
        UUID again = UUID.nameUUIDFromBytes("orders@2".getBytes(StandardCharsets.UTF_8));
        assertEquals(again, idOf("orders"), "created again: another id");
        assertNotEquals(legacy, again);

        MetadataStateMachine replayed = newMachine();
        for (int i = 0; i < log.size(); i++) {
            apply(replayed, i, log.get(i));
        }
        assertEquals(machine.topics(), replayed.topics());
    }

    @Test
    void aCreateWithAnIdOfAnotherLengthIsRefused() throws InvalidProtocolBufferException {
        MetadataCommand shortId = MetadataCommand.newBuilder().setCreateTopic(create("invoices", INVOICES_ID)
                .getCreateTopic().toBuilder().setTopicId(com.google.protobuf.ByteString.copyFrom(new byte[5])).build()).build();
        assertEquals("INVALID_REQUEST: create of topic 'invoices': 16 bytes of topic id expected, not 5",
                error(apply(shortId)));
        assertEquals(List.of("orders"), machine.topics().stream().map(TopicAssignment::getName).toList());
    }

    @Test
    void aReassignmentRecordsItsTargetThenMakesItTheReplicas() throws InvalidProtocolBufferException {
        assertEquals(MetadataReply.getDefaultInstance(), apply(begin("orders", 0, 2, 3)));
        assertEquals(List.of(1, 2), machine.topics().get(0).getPartitions(0).getReplicaNodeIdsList());
        assertEquals(List.of(2, 3), machine.topics().get(0).getPartitions(0).getTargetReplicaNodeIdsList());
        assertEquals(MetadataReply.getDefaultInstance(), apply(begin("orders", 0, 2, 3)), "the same target again");
        assertEquals(MetadataReply.getDefaultInstance(), apply(complete("orders", 0, 2, 3)));
        assertEquals(MetadataReply.getDefaultInstance(), apply(complete("orders", 0, 2, 3)), "completed again");
        assertEquals(List.of("orders-0 [1, 2][] -> [1, 2][2, 3]", "orders-0 [1, 2][2, 3] -> [2, 3][]"), changes,
                "repeated commands change nothing");
        assertEquals(PartitionAssignment.newBuilder().setPartition(0).addAllReplicaNodeIds(List.of(2, 3))
                .setGroupId(TopicIds.toBytes(groupId(1, 0))).build(), machine.topics().get(0).getPartitions(0),
                "the group the first begin (log index 1) created for [2, 3]");
        assertEquals(List.of(List.of(2, 3)), machine.groups().stream()
                .map(PartitionGroupRecord::getReplicaNodeIdsList).toList(), "[1, 2]'s group hosts nothing: gone");
    }

    /** The id of the {@code n}th group the entry at {@code index} created. */
    private static UUID groupId(long index, int n) {
        return UUID.nameUUIDFromBytes(("partition-group@" + index + "/" + n).getBytes(StandardCharsets.UTF_8));
    }

    private static MetadataCommand createOnThree(String topic, int partitions, int groupsPerReplicaSet) {
        TopicAssignment.Builder create = TopicAssignment.newBuilder().setName(topic).setReplicationFactor(3)
                .setTopicId(TopicIds.toBytes(UUID.nameUUIDFromBytes(topic.getBytes(StandardCharsets.UTF_8))))
                .setGroupsPerReplicaSet(groupsPerReplicaSet);
        for (int p = 0; p < partitions; p++) {
            create.addPartitions(PartitionAssignment.newBuilder().setPartition(p)
                    .addAllReplicaNodeIds(List.of(1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3)));
        }
        return MetadataCommand.newBuilder().setCreateTopic(create).build();
    }

    private List<UUID> groupsOf(String topic) {
        return machine.topic(topic).orElseThrow().getPartitionsList().stream()
                .map(p -> TopicIds.fromBytes(p.getGroupId())).toList();
    }

    @Test
    void thePartitionsOfAReplicaListShareItsGroupsAndLaterTopicsJoinThem() throws InvalidProtocolBufferException {
        UUID orders = groupId(0, 0);
        assertEquals(List.of(orders), groupsOf("orders"), "the create at index 0 made [1, 2]'s group");
        apply(createOnThree("events", 6, 1));
        UUID first = groupId(1, 0);
        UUID second = groupId(1, 1);
        UUID third = groupId(1, 2);
        assertEquals(List.of(first, second, third, first, second, third), groupsOf("events"),
                "one group per replica list: [1, 2, 3], [2, 3, 1], [3, 1, 2]");
        apply(createOnThree("audit", 3, 1));
        assertEquals(List.of(first, second, third), groupsOf("audit"), "a later topic joins the groups");
        assertEquals(List.of(PartitionGroupRecord.newBuilder().setGroupId(TopicIds.toBytes(orders))
                        .addAllReplicaNodeIds(List.of(1, 2)).build(),
                PartitionGroupRecord.newBuilder().setGroupId(TopicIds.toBytes(first))
                        .addAllReplicaNodeIds(List.of(1, 2, 3)).build(),
                PartitionGroupRecord.newBuilder().setGroupId(TopicIds.toBytes(second))
                        .addAllReplicaNodeIds(List.of(2, 3, 1)).build(),
                PartitionGroupRecord.newBuilder().setGroupId(TopicIds.toBytes(third))
                        .addAllReplicaNodeIds(List.of(3, 1, 2)).build()), machine.groups());

        apply(MetadataCommand.newBuilder().setDeleteTopic("events").build());
        assertEquals(4, machine.groups().size(), "audit still names the three");
        apply(MetadataCommand.newBuilder().setDeleteTopic("audit").build());
        assertEquals(List.of(orders), machine.groups().stream().map(g -> TopicIds.fromBytes(g.getGroupId()))
                .toList(), "no partition names them: forgotten");
        apply(createOnThree("events", 3, 1));
        assertEquals(List.of(groupId(5, 0), groupId(5, 1), groupId(5, 2)), groupsOf("events"),
                "groups for the same lists again get new ids: a replica never meets a group it deleted");
    }

    @Test
    void theGroupsPerReplicaSetTakeTheListsPartitionsInTurn() throws InvalidProtocolBufferException {
        apply(createOnThree("events", 9, 2));
        List<UUID> groups = groupsOf("events");
        assertEquals(List.of(groupId(1, 0), groupId(1, 1), groupId(1, 2), groupId(1, 3), groupId(1, 4),
                groupId(1, 5), groupId(1, 0), groupId(1, 1), groupId(1, 2)), groups,
                "partitions 0, 3, 6 of [1, 2, 3] go to slots 0, 1, 0");
        assertEquals(List.of(0, 1), machine.groups().stream().filter(g -> g.getReplicaNodeIdsList()
                .equals(List.of(1, 2, 3))).map(PartitionGroupRecord::getSlot).toList());
    }

    @Test
    void aMoveTargetsAGroupOfTheTargetListAndAnAlterChangesOnlyOverrides() throws InvalidProtocolBufferException {
        apply(createOnThree("events", 3, 1));
        apply(MetadataCommand.newBuilder().setBeginReassignment(reassignment("events", 1, 1, 2, 3)
                .toBuilder().setGroupsPerReplicaSet(1)).build());
        PartitionAssignment moving = machine.topic("events").orElseThrow().getPartitions(1);
        assertEquals(groupId(1, 0), TopicIds.fromBytes(moving.getTargetGroupId()), "[1, 2, 3] has a group: it");
        TopicAssignment stale = machine.topic("events").orElseThrow().toBuilder().clearPartitions()
                .addPartitions(PartitionAssignment.newBuilder().setPartition(0).addReplicaNodeIds(9)).build();
        apply(MetadataCommand.newBuilder().setAlterTopic(stale.toBuilder().putOverrides("retention.ms", "5"))
                .build());
        TopicAssignment altered = machine.topic("events").orElseThrow();
        assertEquals("5", altered.getOverridesOrThrow("retention.ms"));
        assertEquals(moving, altered.getPartitions(1), "the partitions the alter carried are not taken");
        apply(complete("events", 1, 1, 2, 3));
        assertEquals(List.of(groupId(1, 0), groupId(1, 0), groupId(1, 2)), groupsOf("events"));
        assertEquals(3, machine.groups().size(), "[2, 3, 1]'s group hosted only events-1: gone");
    }

    @Test
    void aMoveElsewhereWhileOneIsUnderWayAndACompleteWithoutABeginAreRefused() throws Exception {
        apply(begin("orders", 0, 2, 3));
        assertEquals("INVALID_REQUEST: a reassignment of orders-0 to [2, 3] is under way; finish it by asking for "
                + "[2, 3] again before moving the partition elsewhere", error(apply(begin("orders", 0, 3, 1))));
        assertEquals("INVALID_REQUEST: no reassignment of orders-0 to [3, 1] is under way (its replicas are [1, 2], "
                + "its target [2, 3])", error(apply(complete("orders", 0, 3, 1))));
        assertEquals(List.of("orders-0 [1, 2][] -> [1, 2][2, 3]"), changes);
    }

    @Test
    void anUnknownTopicOrPartitionIsNamed() throws InvalidProtocolBufferException {
        assertEquals(ErrorCode.UNKNOWN_TOPIC, apply(begin("invoices", 0, 1)).getError().getCode());
        assertEquals("UNKNOWN_PARTITION: topic 'orders' has partitions 0 to 0, not 4",
                error(apply(begin("orders", 4, 1))));
        assertEquals(List.of(), changes);
    }

    /** orders (from the first entry), events, gone created then deleted, orders-0 moving to [2, 3]: entries 1 to 4. */
    private void buildAState() throws InvalidProtocolBufferException {
        apply(createOnThree("events", 3, 1));
        apply(create("gone", new UUID(5, 5)));
        apply(MetadataCommand.newBuilder().setDeleteTopic("gone").build());
        apply(begin("orders", 0, 2, 3));
    }

    @Test
    void aRestartFromASnapshotRestoresEveryTopicAndGroupAndTellsTheListenerAsAReplayWould() throws IOException {
        start(machine, "member");
        buildAState();
        assertEquals(4, machine.takeSnapshot());
        stopLast();

        List<String> restoredChanges = new ArrayList<>();
        MetadataStateMachine restarted = start(newMachine(restoredChanges, node -> CompletableFuture.failedFuture(
                new IllegalStateException("no install"))), "member");
        assertEquals(List.of("created events", "created orders"), restoredChanges, "by name");
        assertEquals(machine.topics(), restarted.topics());
        assertEquals(machine.groups(), restarted.groups());
        assertEquals(TermIndex.valueOf(1, 4), restarted.getLastAppliedTermIndex());
        assertEquals(machine.latestSnapshot(), restarted.latestSnapshot());

        MetadataCommand next = createOnThree("audit", 3, 1);
        apply(next);
        apply(restarted, 5, next);
        assertEquals(machine.topics(), restarted.topics(), "the entries after the snapshot apply the same");
        assertEquals(machine.groups(), restarted.groups());
    }

    @Test
    void aclsAndQuotasAreChangedAndKeptThroughASnapshot() throws IOException {
        start(machine, "member");
        AclBinding readOrders = acl("orders", AclOperation.READ);
        AclBinding writeOrders = acl("orders", AclOperation.WRITE);
        AclBinding readEvents = acl("events", AclOperation.READ);
        apply(MetadataCommand.newBuilder().setCreateAcls(AclChange.newBuilder().addBindings(readOrders)
                .addBindings(writeOrders)).build());
        apply(MetadataCommand.newBuilder().setCreateAcls(AclChange.newBuilder().addBindings(readOrders)
                .addBindings(readEvents)).build());
        apply(MetadataCommand.newBuilder().setDeleteAcls(AclChange.newBuilder().addBindings(writeOrders)
                .addBindings(acl("gone", AclOperation.READ))).build());
        assertEquals(List.of(readEvents, readOrders), machine.acls().bindings(), "each once, sorted; a binding not "
                + "held is not removed twice");
        ClientQuota alice = ClientQuota.newBuilder().setPrincipal("User:alice").setProduceBytesPerSecond(100).build();
        ClientQuota bob = ClientQuota.newBuilder().setPrincipal("User:bob").setFetchBytesPerSecond(-1).build();
        apply(MetadataCommand.newBuilder().setAlterQuotas(AlterClientQuotasRequest.newBuilder().addQuotas(bob)
                .addQuotas(alice)).build());
        apply(MetadataCommand.newBuilder().setAlterQuotas(AlterClientQuotasRequest.newBuilder()
                .addQuotas(ClientQuota.newBuilder().setPrincipal("User:bob"))).build());
        assertEquals(List.of(alice), List.copyOf(machine.quotas().values()), "bob's removed by rates of 0");
        assertEquals(5, machine.takeSnapshot());
        stopLast();

        MetadataStateMachine restarted = start(newMachine(new ArrayList<>(), node -> CompletableFuture.failedFuture(
                new IllegalStateException("no install"))), "member");
        assertEquals(List.of(readEvents, readOrders), restarted.acls().bindings());
        assertEquals(machine.quotas(), restarted.quotas());
    }

    private static AclBinding acl(String topic, AclOperation operation) {
        return AclBinding.newBuilder().setResourceType(AclResourceType.TOPIC).setResourceName(topic)
                .setPatternType(AclPatternType.LITERAL).setPrincipal("User:alice").setHost("*")
                .setOperation(operation).setPermission(AclPermission.ALLOW).build();
    }

    @Test
    void aMemberWithoutASnapshotWhoseLogWasPurgedRefusesToStart() throws IOException {
        Path member = dir.resolve("member");
        start(newMachine(), "member");
        stopLast();
        Files.write(member.resolve("current").resolve("log_5-9"), new byte[0]);

        IOException refused = assertThrows(IOException.class, () -> start(newMachine(), "member"));
        assertEquals("The metadata group on n1 does not start: it has no snapshot, but its Raft log in "
                + member.resolve("current") + " starts at index 5, so the entries before were purged behind a "
                + "snapshot that is gone (deleted, or unreadable) and its state cannot be rebuilt. Restore the "
                + "snapshot, or delete the group's directory " + member + " so that this replica catches up from the "
                + "leader when it joins the group again", refused.getMessage());
    }

    /** Ratis' notice to a member of the group that node 1 leads and whose log starts at {@code firstIndex}. */
    private static CompletableFuture<TermIndex> notice(MetadataStateMachine member, long firstIndex) {
        RoleInfoProto role = RoleInfoProto.newBuilder().setFollowerInfo(FollowerInfoProto.newBuilder()
                .setLeaderInfo(ServerRpcProto.newBuilder().setId(RaftPeerProto.newBuilder()
                        .setId(ByteString.copyFromUtf8("n1"))))).build();
        return member.notifyInstallSnapshotFromLeader(role, TermIndex.valueOf(1, firstIndex));
    }

    /**
     * A member that applied the first 3 entries installs the leader's snapshot at entry 6: the reload tells the
     * listener what changed since, as replaying entries 3 to 6 would.
     */
    @Test
    void aMemberBehindThePurgeInstallsTheLeadersSnapshotAndTheReloadTellsWhatChanged() throws Exception {
        start(machine, "leader");
        buildAState();
        apply(MetadataCommand.newBuilder().setAlterTopic(machine.topic("events").orElseThrow().toBuilder()
                .putOverrides("retention.ms", "5")).build());
        apply(create("gone", new UUID(6, 6)));
        assertEquals(6, machine.takeSnapshot());
        List<String> memberChanges = new ArrayList<>();
        MetadataStateMachine member = start(newMachine(memberChanges, node -> node == 1
                ? CompletableFuture.completedFuture(machine.latestSnapshot().orElseThrow())
                : CompletableFuture.failedFuture(new IllegalStateException("node " + node))), "member");
        for (int i = 0; i < 3; i++) {
            apply(member, i, log.get(i));
        }
        memberChanges.clear();

        assertEquals(TermIndex.valueOf(1, 6), notice(member, 7).join());
        assertNull(member.getLatestSnapshot(), "Ratis sees the snapshot only once it reloads from it");
        assertEquals(Optional.empty(), member.latestSnapshot());
        member.pause();
        member.reinitialize();
        assertEquals(TermIndex.valueOf(1, 6), member.getLatestSnapshot().getTermIndex());

        assertEquals(List.of("deleted gone", "altered events", "created gone", "orders-0 [1, 2][] -> [1, 2][2, 3]"),
                memberChanges, "gone was created again under another id");
        assertEquals(machine.topics(), member.topics());
        assertEquals(machine.groups(), member.groups());
        assertEquals(TermIndex.valueOf(1, 6), member.getLastAppliedTermIndex());
        assertEquals(machine.latestSnapshot(), member.latestSnapshot(), "it serves the snapshot it installed");
        assertEquals(null, notice(member, 0).join(), "a leader holding its whole log sends the entries");
    }

    /**
     * A member that holds and applied what the leader's log starts with, whom the leader takes for one further behind
     * (its view after the member restarted), answers at once: none yet, while it takes a snapshot of its own at its
     * applied index; the leader's next notice gets that snapshot, so the leader sends entries from there. It answered
     * "none needed" before, and Ratis asked again forever.
     */
    @Test
    void aMemberThatAppliedWhatTheLeadersLogStartsWithAnswersWithASnapshotOfItsOwn() throws Exception {
        MetadataStateMachine member = memberThatAppliedTheLog();
        TermIndex applied = member.getLastAppliedTermIndex();

        assertAnsweredAtOnce(null, notice(member, applied.getIndex() - 1));
        await().atMost(Duration.ofSeconds(10)).until(() -> member.latestSnapshot().isPresent());
        assertEquals(applied, member.latestSnapshot().map(s -> TermIndex.valueOf(s.getTerm(), s.getIndex()))
                .orElseThrow());
        assertAnsweredAtOnce(applied, notice(member, applied.getIndex() - 1));
        member.pause();
        member.reinitialize();
        assertEquals(machine.topics(), member.topics());
        assertEquals(applied, member.getLastAppliedTermIndex());
    }

    /**
     * A member that committed every entry before the leader's log, and none of it (a leader purged its log up to
     * this member's commit index, and this member holds entries after it that a former leader wrote and never
     * committed), needs no copy: it answers at once, with a snapshot of its own at the entry before the leader's
     * first. It copied before, and Ratis, which takes such an answer only at the leader's next notice, never got one.
     */
    @Test
    void aMemberThatCommittedEveryEntryTheLeaderPurgedAnswersAtOnceWithoutACopy() throws Exception {
        MetadataStateMachine member = memberThatAppliedTheLog();
        TermIndex applied = member.getLastAppliedTermIndex();

        assertAnsweredAtOnce(null, notice(member, applied.getIndex() + 1));
        await().atMost(Duration.ofSeconds(10)).until(() -> member.latestSnapshot().isPresent());
        assertAnsweredAtOnce(applied, notice(member, applied.getIndex() + 1));
    }

    /** A member that applied all of {@link #buildAState}'s log, which copies no leader's snapshot. */
    private MetadataStateMachine memberThatAppliedTheLog() throws Exception {
        start(machine, "leader");
        buildAState();
        MetadataStateMachine member = start(newMachine(new ArrayList<>(), node -> CompletableFuture.failedFuture(
                new IllegalStateException("no copy from node " + node))), "member");
        for (int i = 0; i < log.size(); i++) {
            apply(member, i, log.get(i));
        }
        return member;
    }

    /** Ratis takes an answer that is not complete when the notice returns only at the leader's next notice. */
    private static void assertAnsweredAtOnce(TermIndex expected, CompletableFuture<TermIndex> answer) {
        assertTrue(answer.isDone(), "answered at once");
        assertEquals(expected, answer.join());
    }

    @Test
    void aLeaderSnapshotThatDoesNotReachItsLogIsNotInstalled() throws Exception {
        start(machine, "leader");
        buildAState();
        machine.takeSnapshot();
        MetadataStateMachine member = start(newMachine(new ArrayList<>(), node -> CompletableFuture.completedFuture(
                machine.latestSnapshot().orElseThrow())), "member");

        ExecutionException refused = assertThrows(ExecutionException.class, () -> notice(member, 9).get());
        assertEquals("the metadata snapshot of node 1 ends at index 4, but its Raft log starts at 9: the entries "
                + "between are missing", refused.getCause().getMessage());
        assertEquals(Optional.empty(), member.latestSnapshot());
    }
}
