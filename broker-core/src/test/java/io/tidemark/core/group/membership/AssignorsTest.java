package io.tidemark.core.group.membership;

import io.tidemark.core.partition.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.IntSummaryStatistics;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AssignorsTest {
    private final UniformAssignor uniform = new UniformAssignor();

    @Test
    void uniformGivesAJoiningMemberItsShareAndMovesNothingElse() {
        Map<String, Set<String>> three = subscribed("orders", "a", "b", "c");
        Map<String, Set<TopicPartition>> before = uniform.assign(three, Map.of("orders", 100), Map.of());
        assertCounts(before, 33, 34);

        Map<String, Set<TopicPartition>> after = uniform.assign(subscribed("orders", "a", "b", "c", "d"),
                Map.of("orders", 100), before);
        assertCounts(after, 25, 25);
        assertEquals(25, moved(before, after), "only d's share moved");
        assertTrue(before.get("a").containsAll(after.get("a")), "a kept what it keeps");
    }

    @Test
    void uniformSpreadsALeavingMembersPartitionsOverTheRest() {
        Map<String, Set<TopicPartition>> before = uniform.assign(subscribed("orders", "a", "b", "c", "d"),
                Map.of("orders", 100), Map.of());
        Map<String, Set<TopicPartition>> after = uniform.assign(subscribed("orders", "a", "b", "c"),
                Map.of("orders", 100), before);
        assertCounts(after, 33, 34);
        for (String member : Set.of("a", "b", "c")) {
            assertTrue(after.get(member).containsAll(before.get(member)), member + " lost nothing");
        }
    }

    @Test
    void uniformGivesEachTopicOnlyToItsSubscribers() {
        Map<String, Set<String>> subscriptions = new TreeMap<>();
        subscriptions.put("a", Set.of("orders"));
        subscriptions.put("b", Set.of("orders", "audit"));
        subscriptions.put("c", Set.of("audit"));
        Map<String, Set<TopicPartition>> assignment = uniform.assign(subscriptions, Map.of("orders", 4, "audit", 4),
                Map.of());
        assertEquals(8, assignment.values().stream().mapToInt(Set::size).sum(), "every partition once");
        assignment.forEach((member, tps) -> tps.forEach(tp ->
                assertTrue(subscriptions.get(member).contains(tp.topic()), member + " got " + tp)));
        assertCounts(assignment, 2, 3);
    }

    @Test
    void uniformDropsWhatAMemberNoLongerSubscribesToOrWhatNoLongerExists() {
        Map<String, Set<TopicPartition>> previous = Map.of("a", Set.of(new TopicPartition("orders", 0),
                new TopicPartition("orders", 7), new TopicPartition("gone", 0)));
        Map<String, Set<TopicPartition>> assignment = uniform.assign(subscribed("orders", "a"), Map.of("orders", 2),
                previous);
        assertEquals(Map.of("a", Set.of(new TopicPartition("orders", 0), new TopicPartition("orders", 1))),
                assignment);
    }

    @Test
    void rangeGivesContiguousRangesTheFirstMembersOneMore() {
        Map<String, Set<TopicPartition>> assignment = new RangeAssignor().assign(subscribed("orders", "m2", "m1"),
                Map.of("orders", 5), Map.of());
        assertEquals(Map.of("m1", partitions("orders", 0, 1, 2), "m2", partitions("orders", 3, 4)), assignment);
    }

    @Test
    void rangeGivesAMemberNothingOfATopicWithFewerPartitionsThanSubscribers() {
        Map<String, Set<TopicPartition>> assignment = new RangeAssignor().assign(subscribed("audit", "a", "b", "c"),
                Map.of("audit", 2), Map.of());
        assertEquals(Map.of("a", partitions("audit", 0), "b", partitions("audit", 1), "c", Set.of()), assignment);
    }

    private static Map<String, Set<String>> subscribed(String topic, String... members) {
        Map<String, Set<String>> subscriptions = new HashMap<>();
        for (String member : members) {
            subscriptions.put(member, Set.of(topic));
        }
        return subscriptions;
    }

    private static void assertCounts(Map<String, Set<TopicPartition>> assignment, int min, int max) {
        IntSummaryStatistics counts = assignment.values().stream().mapToInt(Set::size).summaryStatistics();
        assertEquals(min, counts.getMin(), assignment.toString());
        assertEquals(max, counts.getMax(), assignment.toString());
    }

    private static int moved(Map<String, Set<TopicPartition>> before, Map<String, Set<TopicPartition>> after) {
        int moved = 0;
        for (Map.Entry<String, Set<TopicPartition>> member : after.entrySet()) {
            Set<TopicPartition> gained = new HashSet<>(member.getValue());
            gained.removeAll(before.getOrDefault(member.getKey(), Set.of()));
            moved += gained.size();
        }
        return moved;
    }

    private static Set<TopicPartition> partitions(String topic, int... numbers) {
        Set<TopicPartition> set = new HashSet<>();
        for (int p : numbers) {
            set.add(new TopicPartition(topic, p));
        }
        return set;
    }
}
