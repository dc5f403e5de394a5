package io.tidemark.core.group.membership;

import io.tidemark.core.partition.TopicPartition;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Kafka's range assignment: per topic, its subscribers in member-id order each take a contiguous range of
 * partitions, the first {@code partitions % subscribers} one more than the rest. Members subscribed to the same
 * topics get the same partition numbers of each (useful to join co-partitioned topics); the load of several topics
 * can pile up on the first members. Ignores the previous assignment.
 *
 * <p>Stateless.
 */
public final class RangeAssignor implements Assignor {
    public static final String NAME = "range";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Map<String, Set<TopicPartition>> assign(Map<String, Set<String>> subscriptions,
                                                   Map<String, Integer> partitions,
                                                   Map<String, Set<TopicPartition>> previous) {
        Map<String, Set<TopicPartition>> assignment = new TreeMap<>();
        Map<String, List<String>> subscribers = new TreeMap<>();
        new TreeMap<>(subscriptions).forEach((member, topics) -> {
            assignment.put(member, new HashSet<>());
            topics.forEach(topic -> subscribers.computeIfAbsent(topic, t -> new ArrayList<>()).add(member));
        });
        subscribers.forEach((topic, members) -> {
            int count = partitions.getOrDefault(topic, 0);
            int each = count / members.size();
            int extra = count % members.size();
            int next = 0;
            for (int i = 0; i < members.size(); i++) {
                int take = each + (i < extra ? 1 : 0);
                for (int p = next; p < next + take; p++) {
                    assignment.get(members.get(i)).add(new TopicPartition(topic, p));
                }
                next += take;
            }
        });
        return assignment;
    }
}
