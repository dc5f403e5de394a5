package io.tidemark.core.group;

import com.codahale.metrics.Counter;
import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.ManualClock;
import io.tidemark.core.config.BrokerConfig.GroupSettings;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.group.membership.Assignor;
import io.tidemark.core.group.membership.ConsumerGroup;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.partition.OneReplicaGroup;
import io.tidemark.replication.partition.ReplicatedPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two coordinators over one {@code __group_offsets} partition (the production partition, in a Raft group of one
 * replica), as two brokers' coordinators, taking turns as its leader: each carries on with the groups as the other
 * stored them, also when leadership comes back after the other changed them.
 */
class GroupCoordinatorTest {
    private static final long RETENTION_MS = 7 * 24 * 3_600_000L;
    private static final GroupSettings SETTINGS = new GroupSettings(45_000, 5_000, 1_000, 100, RETENTION_MS);

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private static final TopicPartition OFFSETS = new TopicPartition(GroupOffsetStore.TOPIC, 0);
    private static final UUID OFFSETS_ID = new UUID(0, 2);
    private final List<String> ids = new ArrayList<>(List.of("A", "B", "C", "D"));
    private OneReplicaGroup group;
    private ReplicatedPartition log;
    private Broker one;
    private Broker two;

    /** One broker: its coordinator, and whether it leads {@code __group_offsets}. */
    private final class Broker implements Topics {
        boolean leads;
        /** The max.batch.bytes of {@code __group_offsets}. */
        String maxBatchBytes = "1048576";
        final GroupOffsetStore store = GroupOffsetStore.over(log, clock, new Counter());
        final GroupCoordinator coordinator = new GroupCoordinator(this, store, SETTINGS, clock, () -> ids.remove(0));

        @Override
        public Topic topic(String name) {
            if (!name.equals(GroupOffsetStore.TOPIC)) {
                return ordersTopic();
            }
            if (!leads) {
                throw TidemarkException.notLeader("not the leader of " + GroupOffsetStore.TOPIC, -1, "");
            }
            return new Topic(GroupOffsetStore.TOPIC, OFFSETS_ID, 1, Map.of(),
                    TopicConfig.parse(Map.of("max.batch.bytes", maxBatchBytes)), List.of(log));
        }

        @Override
        public List<Topic> topics() {
            return List.of(ordersTopic());
        }

        @Override
        public Topic create(String name, int partitions, int replicationFactor, Map<String, String> overrides) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void delete(String name) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Topic alterConfig(String name, Map<String, String> set, Collection<String> remove) {
            throw new UnsupportedOperationException();
        }

        /** A member of {@code group} joining with a subscription to {@code topics}. */
        ConsumerGroup.Answer join(String group, Set<String> topics) throws Exception {
            GroupCoordinator.Heartbeated beat = coordinator.heartbeat(group, new ConsumerGroup.Heartbeat("",
                    ConsumerGroup.JOIN_EPOCH, null, "c", "10.0.0.1:40000", topics, null, Set.of()), "");
            beat.stored().get();
            return beat.answer();
        }

        ConsumerGroup.Answer beat(String memberId, int epoch, Set<TopicPartition> owned) throws Exception {
            GroupCoordinator.Heartbeated beat = coordinator.heartbeat("g", new ConsumerGroup.Heartbeat(memberId,
                    epoch, null, "c", "10.0.0.1:40000", epoch == ConsumerGroup.JOIN_EPOCH ? Set.of("orders") : null,
                    null, owned), "");
            beat.stored().get();
            return beat.answer();
        }
    }

    /** Topic orders: 4 partitions (their logs are not read here). */
    private Topic ordersTopic() {
        return new Topic("orders", new UUID(0, 1), 1, Map.of(), TopicConfig.parse(Map.of()),
                Collections.nCopies(4, log));
    }

    @BeforeEach
    void open() throws IOException {
        group = OneReplicaGroup.start(dir, clock);
        log = group.add(OFFSETS, OFFSETS_ID, GroupOffsetStore.TOPIC_CONFIG);
        one = new Broker();
        two = new Broker();
    }

    @AfterEach
    void close() throws IOException {
        group.close();
    }

    @Test
    void eachCoordinatorCarriesOnWithTheGroupAsTheOtherLeftIt() throws Exception {
        assertEquals(ErrorCode.NOT_LEADER, assertThrows(TidemarkException.class,
                () -> two.beat("", ConsumerGroup.JOIN_EPOCH, Set.of())).code(), "no broker leads yet");
        assertEquals(ErrorCode.NOT_LEADER, assertThrows(TidemarkException.class,
                () -> two.coordinator.checkCommit("g", "", -1, orders(0))).code(),
                "a commit without a member id too: only the coordinator knows whether the group has members");
        one.leads = true;
        ConsumerGroup.Answer a = one.beat("", ConsumerGroup.JOIN_EPOCH, Set.of());
        assertEquals(new ConsumerGroup.Answer("A", 1, orders(0, 1, 2, 3)), a);

        one.leads = false;
        two.leads = true;
        ConsumerGroup.Answer b = two.beat("", ConsumerGroup.JOIN_EPOCH, Set.of());
        assertEquals("B", b.memberId(), "two loaded A: B joins beside it");
        assertEquals(orders(0, 1), two.beat("A", 1, orders(0, 1, 2, 3)).assignment(), "A gives 2 and 3 up");

        two.leads = false;
        one.leads = true;
        ConsumerGroup.Answer released = one.beat("A", 1, orders(0, 1));
        assertEquals(new ConsumerGroup.Answer("A", 2, orders(0, 1)), released,
                "one, which never saw that it had lost the leadership, finds two's state stored after its own and "
                        + "loads it: A gave 2 and 3 up, which the group one knew had not asked of it");
        assertEquals(orders(2, 3), one.beat("B", b.memberEpoch(), Set.of()).assignment());
        assertEquals(List.of("A", "B"), one.coordinator.membership("g").members().stream()
                .map(ConsumerGroup.MemberView::memberId).toList());
    }

    /**
     * g's only member expires in the pass at retention - 1 ms: its membership change is stored then, and g is not
     * idle at the retention. Before, the pass read the log before that change was stored (an append completes after
     * the call on the production partition) and deleted g with old.
     */
    @Test
    void groupsWithoutMembersIdleForTheRetentionAreDeletedByTheCoordinator() throws Exception {
        one.leads = true;
        Map<TopicPartition, GroupOffsetStore.Committed> offset = Map.of(new TopicPartition("orders", 0),
                new GroupOffsetStore.Committed(5, "", 0));
        one.store.commit("old", offset);
        one.beat("", ConsumerGroup.JOIN_EPOCH, Set.of());
        one.store.commit("g", offset);
        clock.advance(RETENTION_MS - 1);
        one.store.commit("recent", offset);

        assertEquals(List.of(), one.coordinator.expireOffsets(), "old is a millisecond short of the retention; "
                + "g's member expired just now, a change of its membership");
        clock.advance(1);
        assertEquals(List.of(), two.coordinator.expireOffsets(), "two does not coordinate");
        assertEquals(List.of("old"), one.coordinator.expireOffsets());
        assertEquals(Map.of(), one.store.committed("old"));
        assertEquals(List.of("g", "recent"), List.copyOf(one.store.groups()));
        clock.advance(RETENTION_MS);
        assertEquals(List.of("g", "recent"), one.coordinator.expireOffsets());
        assertEquals(Map.of(), one.store.groupStates(), "g's stored membership went with its offsets");
    }

    /**
     * Offsets deleted while another broker's store had read them stay deleted when that broker coordinates two days
     * later, after compaction removed their tombstone: it loads from the log as it is then. Before, its store read on
     * from where it had stopped, past the tombstone compaction removed, and answered the deleted offsets again.
     */
    @Test
    void offsetsDeletedWhileAnotherBrokerHadReadThemStayDeletedWhenItCoordinatesAfterCompaction() throws Exception {
        Map<String, String> smallSegments = new HashMap<>(GroupOffsetStore.TOPIC_CONFIG);
        smallSegments.put("segment.bytes", "100");
        group.configure(OFFSETS, OFFSETS_ID, smallSegments);
        one.leads = true;
        one.store.commit("g", Map.of(new TopicPartition("orders", 0), new GroupOffsetStore.Committed(5, "", 0)));
        assertEquals(Set.of(new TopicPartition("orders", 0)), two.store.committed("g").keySet(), "two read it");
        assertEquals(List.of(new TopicPartition("orders", 0)), one.coordinator.whileEmpty("g", "deleting takes",
                () -> one.store.delete("g", List.of(new TopicPartition("orders", 0)))));
        one.store.commit("other", Map.of(new TopicPartition("orders", 1), new GroupOffsetStore.Committed(1, "", 0)));
        clock.advance(2 * GroupOffsetStore.TOMBSTONE_RETENTION_MS);
        group.snapshot(log);
        log.compact(clock.millis(), new LogCompactor(-1, new MetricRegistry()));

        one.leads = false;
        two.leads = true;
        assertEquals(ConsumerGroup.State.EMPTY, two.coordinator.membership("g").state());
        assertEquals(Map.of(), two.store.committed("g"), "the deletion holds on the new coordinator");
        assertEquals(List.of("other"), List.copyOf(two.store.groups()));
    }

    /**
     * A change that would make a group's state larger than a record of the topic takes fails the heartbeat that made
     * it, GROUP_TOO_LARGE, and leaves that group as it was stored; other groups carry on, and the coordinator loads
     * nothing again. Before, the append failed RECORD_TOO_LARGE and the coordinator forgot every group, to reload them
     * all on the next call, again and again.
     */
    @Test
    void aGroupThatWouldOutgrowARecordIsRefusedAloneAndStaysAsItWas() throws Exception {
        one.leads = true;
        one.maxBatchBytes = "700";
        ConsumerGroup.Answer a = one.join("g", Set.of("orders"));
        one.join("h", Set.of("orders"));
        String writer = one.store.lastGroupState().writerId();
        Set<String> many = new TreeSet<>();
        for (int t = 0; t < 40; t++) {
            many.add("a-topic-with-a-long-name-" + t);
        }

        ExecutionException refused = assertThrows(ExecutionException.class, () -> one.join("g", many));
        TidemarkException tooLarge = (TidemarkException) refused.getCause();
        assertEquals(ErrorCode.GROUP_TOO_LARGE, tooLarge.code());
        assertTrue(tooLarge.getMessage().startsWith("consumer group g would take "), tooLarge.getMessage());
        assertTrue(tooLarge.getMessage().endsWith(" bytes a record of __group_offsets takes (its max.batch.bytes): "
                + "the group stays as it was; have fewer members or subscribe to fewer topics, or raise the topic's "
                + "max.batch.bytes"), tooLarge.getMessage());
        assertEquals(List.of("A"), one.coordinator.membership("g").members().stream()
                .map(ConsumerGroup.MemberView::memberId).toList(), "the member that would not fit is not in");
        assertEquals(a, one.beat("A", a.memberEpoch(), a.assignment()), "g carries on as it was");
        one.join("h", Set.of("orders"));
        assertEquals(2, one.coordinator.membership("h").members().size());
        assertEquals(writer, one.store.lastGroupState().writerId(), "h's change was stored by the same load: no "
                + "group was loaded again");
    }

    @Test
    void aJoinBeyondTheMostMembersIsRefusedGroupTooLarge() throws Exception {
        one.leads = true;
        GroupCoordinator small = new GroupCoordinator(one, one.store, new GroupSettings(45_000, 5_000, 1, 100,
                RETENTION_MS), clock, () -> ids.remove(0));
        small.heartbeat("g", new ConsumerGroup.Heartbeat("", ConsumerGroup.JOIN_EPOCH, null, "c", "h:1",
                Set.of("orders"), null, Set.of()), "").stored().get();
        TidemarkException full = assertThrows(TidemarkException.class, () -> small.heartbeat("g",
                new ConsumerGroup.Heartbeat("", ConsumerGroup.JOIN_EPOCH, null, "c", "h:1", Set.of("orders"), null,
                        Set.of()), ""));
        assertEquals(ErrorCode.GROUP_TOO_LARGE, full.code());
        assertEquals("group g has 1 members, the most group.consumer.max.size allows", full.getMessage());
    }

    @Test
    void aJoinStartingAGroupBeyondTheMostGroupsIsRefused() throws Exception {
        one.leads = true;
        GroupCoordinator few = new GroupCoordinator(one, one.store, new GroupSettings(45_000, 5_000, 10, 1,
                RETENTION_MS), clock, () -> ids.remove(0));
        few.heartbeat("g", new ConsumerGroup.Heartbeat("", ConsumerGroup.JOIN_EPOCH, null, "c", "h:1",
                Set.of("orders"), null, Set.of()), "").stored().get();
        TidemarkException full = assertThrows(TidemarkException.class, () -> few.heartbeat("h",
                new ConsumerGroup.Heartbeat("", ConsumerGroup.JOIN_EPOCH, null, "c", "h:1", Set.of("orders"), null,
                        Set.of()), ""));
        assertEquals(ErrorCode.INVALID_REQUEST, full.code());
        assertEquals("group 'h' would be one more than the 1 the cluster keeps, the most group.max.count allows; "
                + "delete unused groups (tidemark groups delete) or raise it", full.getMessage());
        few.heartbeat("g", new ConsumerGroup.Heartbeat("", ConsumerGroup.JOIN_EPOCH, null, "d", "h:2",
                Set.of("orders"), null, Set.of()), "").stored().get();
        assertEquals(2, few.membership("g").members().size(), "a group it keeps takes members");
    }

    /**
     * A stored group naming an assignor this broker does not know (a newer broker's) loads with the default one,
     * members and partitions as they were, and so does every other group: the coordinator used to fail every call.
     */
    @Test
    void aStoredGroupNamingAnUnknownAssignorLoadsWithTheDefaultOne() throws Exception {
        one.leads = true;
        ConsumerGroup.Answer a = one.beat("", ConsumerGroup.JOIN_EPOCH, Set.of());
        one.store.writeGroupState("g", one.store.groupStates().get("g").toBuilder().setAssignor("sticky-v9")
                .setWriterId("a newer broker").build(), 1 << 20).get();

        one.leads = false;
        two.leads = true;
        GroupCoordinator.Membership loaded = two.coordinator.membership("g");
        assertEquals("uniform", loaded.assignor());
        assertEquals(List.of("A"), loaded.members().stream().map(ConsumerGroup.MemberView::memberId).toList());
        assertEquals(a, two.beat("A", a.memberEpoch(), a.assignment()), "A keeps its epoch and partitions");
    }

    private static Set<TopicPartition> orders(int... partitions) {
        Set<TopicPartition> set = new TreeSet<>(Assignor.PARTITION_ORDER);
        for (int p : partitions) {
            set.add(new TopicPartition("orders", p));
        }
        return set;
    }
}
