package io.tidemark.core.group.membership;

import io.tidemark.core.group.membership.ConsumerGroup.Answer;
import io.tidemark.core.group.membership.ConsumerGroup.Heartbeat;
import com.google.re2j.Pattern;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Scripted joins, heartbeats, leaves, expiries and subscription changes, with the assignment and epochs expected after
 * each step and the invariant that no partition has two owners checked after every one.
 */
class ConsumerGroupTest {
    private static final long SESSION_MS = 45_000;
    private static final Map<String, Integer> TOPICS = Map.of("orders", 6, "audit", 2);
    private static final String HOST = "10.0.0.1:40000";

    private final List<String> ids = new ArrayList<>(List.of("A", "B", "C", "D", "E", "F", "G", "H"));
    private final ConsumerGroup group = new ConsumerGroup("billing", new UniformAssignor(), SESSION_MS,
            () -> ids.remove(0));
    private long nowMs = 1_000;

    @Test
    void aPartitionMovesOnlyAfterItsOwnerReleasedIt() {
        Answer a = join(null, "orders");
        assertEquals(new Answer("A", 1, orders(0, 1, 2, 3, 4, 5)), a);

        Answer b = join(null, "orders");
        assertEquals(new Answer("B", 2, Set.of()), b, "B is at the new epoch but A still owns its share");

        assertEquals(new Answer("A", 1, orders(0, 1, 2)), beat("A", 1, orders(0, 1, 2, 3, 4, 5)),
                "A is asked to give up 3-5 and stays at epoch 1 until it has");
        assertEquals(new Answer("B", 2, Set.of()), beat("B", 2, Set.of()), "3-5 are still A's");

        assertEquals(new Answer("A", 2, orders(0, 1, 2)), beat("A", 1, orders(0, 1, 2)),
                "A released 3-5 and reaches the group's epoch");
        assertEquals(new Answer("B", 2, orders(3, 4, 5)), beat("B", 2, Set.of()));
        assertEquals(2, group.groupEpoch());
    }

    @Test
    void aMemberThatJoinsTakesItsShareFromEachAndMovesNoMore() {
        join(null, "orders");
        join(null, "orders");
        settle("A", "B");
        join(null, "orders");
        settle("A", "B", "C");
        assertEquals(Map.of("A", orders(0, 1), "B", orders(3, 4), "C", orders(2, 5)), assignments());
        assertEquals(3, group.groupEpoch());
        group.members().forEach(m -> assertEquals(3, m.memberEpoch(), m.memberId()));
    }

    @Test
    void aMemberThatLeavesOrExpiresHasItsPartitionsSpreadOverTheRest() {
        join(null, "orders");
        join(null, "orders");
        join(null, "orders");
        settle("A", "B", "C");

        assertEquals(new Answer("C", ConsumerGroup.LEAVE_EPOCH, Set.of()), beat("C", 3, ConsumerGroup.LEAVE_EPOCH));
        settle("A", "B");
        assertEquals(Map.of("A", orders(0, 1, 2), "B", orders(3, 4, 5)), assignments());

        nowMs += SESSION_MS - 1;
        beat("A", 4, orders(0, 1, 2));
        nowMs += 1;
        settle("A");
        assertEquals(Map.of("A", orders(0, 1, 2, 3, 4, 5)), assignments(), "B's session expired");
        TidemarkException expired = assertThrows(TidemarkException.class, () -> beat("B", 4, orders(3, 4, 5)));
        assertEquals(ErrorCode.UNKNOWN_MEMBER_ID, expired.code());
        assertEquals("group billing has no member B (it left, its session of 45000 ms expired, or a member with its "
                + "group.instance.id replaced it): join again with epoch 0", expired.getMessage());
    }

    @Test
    void commitsAreFencedByMemberEpochAndOwnership() {
        assertDoesNotThrow(() -> group.checkCommit("", -1, orders(0)), "no members: a standalone consumer commits");
        join(null, "orders");
        join(null, "orders");
        settle("A", "B");

        assertDoesNotThrow(() -> group.checkCommit("A", 2, orders(0, 1, 2)));
        TidemarkException zombie = assertThrows(TidemarkException.class, () -> group.checkCommit("A", 1, orders(0)));
        assertEquals(ErrorCode.STALE_MEMBER_EPOCH, zombie.code());
        assertEquals("member A of group billing sent epoch 1 but is at epoch 2", zombie.getMessage());
        TidemarkException notOwner = assertThrows(TidemarkException.class,
                () -> group.checkCommit("A", 2, orders(3)));
        assertEquals("member A of group billing does not own orders-3 (epoch 2): its commit is refused",
                notOwner.getMessage());
        assertEquals(ErrorCode.UNKNOWN_MEMBER_ID,
                assertThrows(TidemarkException.class, () -> group.checkCommit("Z", 2, orders(0))).code());
        TidemarkException standalone = assertThrows(TidemarkException.class,
                () -> group.checkCommit("", -1, orders(0)));
        assertEquals(ErrorCode.NON_EMPTY_GROUP, standalone.code());
        assertEquals("group billing has 2 member(s): a commit without a member id is taken only while the group has "
                + "none", standalone.getMessage());
    }

    @Test
    void describesStateMembersAndSubscribers() {
        assertEquals(ConsumerGroup.State.EMPTY, group.state());
        join(null, "orders");
        assertEquals(ConsumerGroup.State.STABLE, group.state(), "alone, A owns all six at once");
        join("i-2", "orders");
        assertEquals(ConsumerGroup.State.RECONCILING, group.state(), "A must give three up before B gets them");
        assertEquals(List.of(true, true, false), List.of(group.reconciling("A"), group.reconciling("B"),
                group.reconciling("Z")), "A has three to give up, B waits for them; Z is no member");
        settle("A", "B");
        assertEquals(ConsumerGroup.State.STABLE, group.state());
        assertEquals(List.of(false, false), List.of(group.reconciling("A"), group.reconciling("B")));
        assertEquals("uniform", group.assignorName());
        ConsumerGroup.MemberView b = group.members().get(1);
        assertEquals(new ConsumerGroup.MemberView("B", Optional.of("i-2"), "c", HOST, 2, Set.of("orders"),
                Optional.empty(), orders(3, 4, 5), Set.of(), nowMs), b);
        assertEquals(Optional.of("A"), group.subscriber("orders"));
        assertEquals(Optional.empty(), group.subscriber("audit"));
    }

    @Test
    void aMemberBeingRevokedMayStillCommitWhatItGivesUp() {
        join(null, "orders");
        join(null, "orders");
        beat("A", 1, orders(0, 1, 2, 3, 4, 5));
        assertDoesNotThrow(() -> group.checkCommit("A", 1, orders(5)), "the last chance to commit before release");
    }

    @Test
    void aStaticMemberComingBackWithinItsSessionKeepsItsPartitionsWithoutARebalance() {
        join("a-1", "orders");
        join("b-1", "orders");
        settle("A", "B");
        int epoch = group.groupEpoch();

        assertEquals(new Answer("B", ConsumerGroup.STATIC_LEAVE_EPOCH, Set.of()),
                beat("B", epoch, ConsumerGroup.STATIC_LEAVE_EPOCH));
        nowMs += SESSION_MS / 2;
        beat("A", epoch, orders(0, 1, 2));
        assertEquals(Map.of("A", orders(0, 1, 2), "B", orders(3, 4, 5)), assignments(), "B's stay B's meanwhile");

        Answer back = join("b-1", "orders");
        assertEquals(new Answer("C", epoch, orders(3, 4, 5)), back);
        assertEquals(epoch, group.groupEpoch(), "no rebalance");
        assertEquals(ErrorCode.UNKNOWN_MEMBER_ID,
                assertThrows(TidemarkException.class, () -> beat("B", epoch, orders(3, 4, 5))).code(),
                "the instance it replaced is fenced");
    }

    @Test
    void aStaticMemberThatDoesNotComeBackExpires() {
        join("a-1", "orders");
        join("b-1", "orders");
        settle("A", "B");
        beat("B", 2, ConsumerGroup.STATIC_LEAVE_EPOCH);
        nowMs += SESSION_MS / 2;
        beat("A", 2, orders(0, 1, 2));
        nowMs += SESSION_MS / 2;
        settle("A");
        assertEquals(Map.of("A", orders(0, 1, 2, 3, 4, 5)), assignments());
    }

    @Test
    void onlyAStaticMemberLeavesTemporarily() {
        join(null, "orders");
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> beat("A", 1, ConsumerGroup.STATIC_LEAVE_EPOCH));
        assertEquals("member A of group billing has no group.instance.id: only a static member leaves with epoch -2; "
                + "others leave with -1", e.getMessage());
    }

    @Test
    void aPatternSubscriptionTakesTopicsAsTheyAppear() {
        Answer a = group.heartbeat(new Heartbeat("", 0, null, "h", HOST, null, Pattern.compile("orders.*"), null),
                TOPICS, nowMs);
        assertEquals(new Answer("A", 1, orders(0, 1, 2, 3, 4, 5)), a);
        Map<String, Integer> topics = new HashMap<>(TOPICS);
        topics.put("orders-eu", 2);
        Answer grown = group.heartbeat(new Heartbeat("A", 1, null, "h", HOST, null, null, a.assignment()), topics,
                nowMs);
        assertEquals(2, grown.memberEpoch(), "a new matching topic moves the group epoch");
        assertTrue(grown.assignment().containsAll(Set.of(new TopicPartition("orders-eu", 0),
                new TopicPartition("orders-eu", 1))), grown.toString());
        assertEquals(8, grown.assignment().size(), "audit does not match");
    }

    @Test
    void aMemberWhoseAnswerWasLostIsTakenAtItsPreviousEpoch() {
        join(null, "orders");
        join(null, "orders");
        settle("A", "B");
        join(null, "orders");
        settle("A", "B", "C");
        Answer answered = beat("A", 3, assignments().get("A"));
        assertEquals(3, answered.memberEpoch());
        assertDoesNotThrow(() -> beat("A", 2, answered.assignment()),
                "A never saw epoch 3 and owns no more than it was given");
        assertEquals(ErrorCode.STALE_MEMBER_EPOCH,
                assertThrows(TidemarkException.class, () -> beat("A", 1, answered.assignment())).code());
    }

    @Test
    void noPartitionHasTwoOwnersWhateverTheOrderOfEvents() {
        Random random = new Random(7);
        ids.clear();
        for (int i = 0; i < 500; i++) {
            ids.add("m" + i);
        }
        Map<String, Integer> epochs = new HashMap<>();
        Map<String, Set<TopicPartition>> held = new HashMap<>();
        for (int step = 0; step < 3_000; step++) {
            nowMs += random.nextInt(5_000);
            int action = random.nextInt(10);
            List<String> live = new ArrayList<>(new TreeSet<>(epochs.keySet()));
            try {
                if (action == 0 || live.isEmpty()) {
                    Answer joined = join(null, random.nextBoolean() ? "orders" : "audit");
                    epochs.put(joined.memberId(), joined.memberEpoch());
                    held.put(joined.memberId(), joined.assignment());
                } else if (action == 1) {
                    String leaving = live.get(random.nextInt(live.size()));
                    beat(leaving, epochs.get(leaving), ConsumerGroup.LEAVE_EPOCH);
                    epochs.remove(leaving);
                } else {
                    String member = live.get(random.nextInt(live.size()));
                    Answer answer = beat(member, epochs.get(member), held.get(member));
                    epochs.put(member, answer.memberEpoch());
                    held.put(member, answer.assignment());
                }
            } catch (TidemarkException e) {
                assertEquals(ErrorCode.UNKNOWN_MEMBER_ID, e.code(), "only expiry loses a member: " + e.getMessage());
                epochs.keySet().retainAll(group.members().stream().map(ConsumerGroup.MemberView::memberId).toList());
            }
            assertNoPartitionOwnedTwice();
            assertEquals(group.stored(), ConsumerGroup.restore("billing", group.stored(), new UniformAssignor(),
                    SESSION_MS, () -> "unused", nowMs).stored(), "step " + step + ": stored and restored alike");
        }
    }

    @Test
    void aGroupRestoredMidRebalanceCarriesOnAsTheOriginalWouldAndCountsOnlyChanges() {
        join(null, "orders");
        Answer b = join(null, "orders");
        Answer revoking = beat("A", 1, orders(0, 1, 2, 3, 4, 5));
        assertEquals(orders(0, 1, 2), revoking.assignment(), "A is giving 3, 4 and 5 up for B");
        long changes = group.changes();
        beat("A", 1, orders(0, 1, 2, 3, 4, 5));
        assertEquals(changes, group.changes(), "a heartbeat that changes nothing is not a change");

        nowMs += 1_000;
        ConsumerGroup restored = ConsumerGroup.restore("billing", group.stored(), new UniformAssignor(), SESSION_MS,
                () -> "Z", nowMs);
        assertEquals(ConsumerGroup.State.RECONCILING, restored.state());
        assertEquals(List.of(nowMs, nowMs), restored.members().stream().map(ConsumerGroup.MemberView::lastHeartbeatMs)
                .toList(), "every member heard from at the restore");
        for (ConsumerGroup g : List.of(group, restored)) {
            Answer released = g.heartbeat(new Heartbeat("A", 1, null, "c", HOST, null, null, orders(0, 1, 2)), TOPICS,
                    nowMs);
            assertEquals(new Answer("A", 2, orders(0, 1, 2)), released);
            assertEquals(new Answer("B", 2, orders(3, 4, 5)), g.heartbeat(new Heartbeat("B", b.memberEpoch(), null,
                    "c", HOST, null, null, Set.of()), TOPICS, nowMs), "B gets what A gave up, with no rebalance");
        }
        assertEquals(group.stored(), restored.stored());
        restored.expire(nowMs + SESSION_MS);
        assertEquals(ConsumerGroup.State.EMPTY, restored.state(), "sessions count from the restore");
    }

    /**
     * A group of 200 members subscribing by a pattern that matches 300 topics stores what it must in a quarter of a
     * 1 MiB record: each member's matched topics are not stored (1.3 MB of names before, more than a record of
     * __group_offsets takes, so the group could never be stored), and a restored group finds them again, computing no
     * new target.
     */
    @Test
    void aGroupOfMembersMatchingManyTopicsStoresSmallAndRestoresWithoutANewTarget() {
        Map<String, Integer> topics = new TreeMap<>();
        for (int t = 0; t < 300; t++) {
            topics.put(String.format("events-%03d-of-the-fleet", t), 2);
        }
        ids.clear();
        for (int m = 0; m < 200; m++) {
            ids.add(String.format("member-%03d-%s", m, "x".repeat(20)));
        }
        Pattern events = Pattern.compile("events-.*");
        Map<String, Answer> answers = new TreeMap<>();
        for (int m = 0; m < 200; m++) {
            Answer joined = group.heartbeat(new Heartbeat("", ConsumerGroup.JOIN_EPOCH, null, "c", HOST, null, events,
                    Set.of()), topics, nowMs);
            answers.put(joined.memberId(), joined);
        }
        for (int round = 0; round < 3; round++) {
            for (Map.Entry<String, Answer> member : answers.entrySet()) {
                member.setValue(group.heartbeat(new Heartbeat(member.getKey(), member.getValue().memberEpoch(), null,
                        "c", HOST, null, null, member.getValue().assignment()), topics, nowMs));
            }
        }
        assertEquals(ConsumerGroup.State.STABLE, group.state());
        assertTrue(group.stored().getSerializedSize() < (1 << 20) / 4, group.stored().getSerializedSize() + " bytes");

        ConsumerGroup restored = ConsumerGroup.restore("billing", group.stored(), new UniformAssignor(), SESSION_MS,
                () -> "unused", nowMs);
        String first = answers.keySet().iterator().next();
        for (ConsumerGroup g : List.of(group, restored)) {
            g.heartbeat(new Heartbeat(first, answers.get(first).memberEpoch(), null, "c", HOST, null, null,
                    answers.get(first).assignment()), topics, nowMs);
        }
        assertEquals(group.groupEpoch(), restored.groupEpoch(), "the restored group computed no new target");
        assertEquals(group.stored(), restored.stored());
    }

    /**
     * A pattern that backtracks exponentially in Java's engine, against a topic name that makes it, matches in time
     * linear in the name (RE2/J): one member's subscription cannot stall the coordinator, whose lock every group's
     * heartbeat takes. Java's took 2^60 steps for this one.
     */
    @Test
    @Timeout(30)
    void aBacktrackingPatternMatchesInLinearTime() {
        Map<String, Integer> topics = Map.of("a".repeat(60), 1, "aaab", 1);
        Answer a = group.heartbeat(new Heartbeat("", ConsumerGroup.JOIN_EPOCH, null, "c", HOST, null,
                Pattern.compile("(a+)+b"), Set.of()), topics, nowMs);
        assertEquals(new Answer("A", 1, Set.of(new TopicPartition("aaab", 0))), a);
    }

    private Answer join(String instanceId, String topic) {
        Answer answer = group.heartbeat(new Heartbeat("", ConsumerGroup.JOIN_EPOCH, instanceId, "c", HOST,
                Set.of(topic), null, Set.of()), TOPICS, nowMs);
        assertNoPartitionOwnedTwice();
        return answer;
    }

    private Answer beat(String memberId, int epoch, Set<TopicPartition> owned) {
        Answer answer = group.heartbeat(new Heartbeat(memberId, epoch, null, "c", HOST, null, null, owned), TOPICS,
                nowMs);
        assertNoPartitionOwnedTwice();
        return answer;
    }

    private Answer beat(String memberId, int epoch, int leaveEpoch) {
        assertTrue(epoch >= 0);
        return group.heartbeat(new Heartbeat(memberId, leaveEpoch, null, "c", HOST, null, null, null), TOPICS,
                nowMs);
    }

    /** Heartbeats every member, each reporting what it was answered, until no answer changes. */
    private void settle(String... members) {
        Map<String, Answer> last = new HashMap<>();
        for (int round = 0; round < 10; round++) {
            boolean changed = false;
            for (String member : members) {
                Answer previous = last.get(member);
                Set<TopicPartition> owned = previous == null
                        ? ownedBy(member) : previous.assignment();
                int epoch = previous == null ? epochOf(member) : previous.memberEpoch();
                Answer answer = beat(member, epoch, owned);
                changed |= !answer.equals(previous);
                last.put(member, answer);
            }
            if (!changed) {
                return;
            }
        }
        throw new AssertionError("the group did not settle: " + last);
    }

    private Set<TopicPartition> ownedBy(String member) {
        return group.members().stream().filter(m -> m.memberId().equals(member)).findFirst()
                .map(m -> {
                    Set<TopicPartition> all = new HashSet<>(m.assignment());
                    all.addAll(m.revoking());
                    return all;
                }).orElse(Set.of());
    }

    private int epochOf(String member) {
        return group.members().stream().filter(m -> m.memberId().equals(member)).findFirst().orElseThrow()
                .memberEpoch();
    }

    private Map<String, Set<TopicPartition>> assignments() {
        Map<String, Set<TopicPartition>> assignments = new HashMap<>();
        group.members().forEach(m -> assignments.put(m.memberId(), m.assignment()));
        return assignments;
    }

    private void assertNoPartitionOwnedTwice() {
        group.owners().forEach((tp, owners) -> assertEquals(1, owners.size(), tp + " is owned by " + owners));
    }

    private static Set<TopicPartition> orders(int... partitions) {
        Set<TopicPartition> set = new TreeSet<>(Assignor.PARTITION_ORDER);
        for (int p : partitions) {
            set.add(new TopicPartition("orders", p));
        }
        return set;
    }
}
