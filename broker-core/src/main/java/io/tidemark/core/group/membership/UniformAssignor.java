package io.tidemark.core.group.membership;

import io.tidemark.core.partition.TopicPartition;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Spreads partitions evenly and moves as few as it can (Kafka's "uniform" server-side assignor, sticky): every
 * member keeps what the previous assignment gave it while it still subscribes to the topic; partitions nobody keeps go,
 * in partition order, to the subscribed member that has fewest; then, while a member has at least two more partitions
 * than another member subscribed to one of them, it hands one over (its last, in partition order). With the same
 * subscriptions on every member, counts end at most one apart and a change moves only what balance needs: a member
 * that joins takes a share from the busiest, one that leaves has its partitions spread over the rest.
 *
 * <p>Each hand-over lowers the sum of squared counts, so the balancing ends. Stateless.
 */
public final class UniformAssignor implements Assignor {
    public static final String NAME = "uniform";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Map<String, Set<TopicPartition>> assign(Map<String, Set<String>> subscriptions,
                                                   Map<String, Integer> partitions,
                                                   Map<String, Set<TopicPartition>> previous) {
        Map<String, TreeSet<TopicPartition>> owned = new TreeMap<>();
        Set<TopicPartition> taken = new HashSet<>();
        new TreeMap<>(subscriptions).forEach((member, topics) -> {
            TreeSet<TopicPartition> kept = new TreeSet<>(PARTITION_ORDER);
            for (TopicPartition tp : previous.getOrDefault(member, Set.of())) {
                if (topics.contains(tp.topic()) && tp.partition() < partitions.getOrDefault(tp.topic(), 0)
                        && taken.add(tp)) {
                    kept.add(tp);
                }
            }
            owned.put(member, kept);
        });
        for (TopicPartition tp : allSubscribed(subscriptions, partitions)) {
            if (!taken.contains(tp)) {
                fewest(owned, subscriptions, tp.topic()).add(tp);
            }
        }
        boolean moved = true;
        while (moved) {
            moved = handOverOne(owned, subscriptions);
        }
        Map<String, Set<TopicPartition>> assignment = new TreeMap<>();
        owned.forEach((member, tps) -> assignment.put(member, Set.copyOf(tps)));
        return assignment;
    }

    private static List<TopicPartition> allSubscribed(Map<String, Set<String>> subscriptions,
                                                      Map<String, Integer> partitions) {
        Set<String> topics = new TreeSet<>();
        subscriptions.values().forEach(topics::addAll);
        List<TopicPartition> all = new ArrayList<>();
        for (String topic : topics) {
            for (int p = 0; p < partitions.getOrDefault(topic, 0); p++) {
                all.add(new TopicPartition(topic, p));
            }
        }
        return all;
    }

    /** The set of the member subscribed to {@code topic} that owns fewest partitions (the first by id on a tie). */
    private static TreeSet<TopicPartition> fewest(Map<String, TreeSet<TopicPartition>> owned,
                                                  Map<String, Set<String>> subscriptions, String topic) {
        TreeSet<TopicPartition> best = null;
        for (Map.Entry<String, TreeSet<TopicPartition>> member : owned.entrySet()) {
            if (subscriptions.get(member.getKey()).contains(topic)
                    && (best == null || member.getValue().size() < best.size())) {
                best = member.getValue();
            }
        }
        return best;
    }

    /**
     * Moves one partition from the busiest member that can give one to a subscriber of its topic owning at least two
     * fewer; false when no member can.
     */
    private static boolean handOverOne(Map<String, TreeSet<TopicPartition>> owned,
                                       Map<String, Set<String>> subscriptions) {
        List<String> busiestFirst = new ArrayList<>(owned.keySet());
        busiestFirst.sort(Comparator.comparingInt((String m) -> owned.get(m).size()).reversed());
        for (String giver : busiestFirst) {
            TreeSet<TopicPartition> from = owned.get(giver);
            for (TopicPartition tp : from.descendingSet()) {
                TreeSet<TopicPartition> to = fewest(owned, subscriptions, tp.topic());
                if (to.size() + 2 <= from.size()) {
                    from.remove(tp);
                    to.add(tp);
                    return true;
                }
            }
        }
        return false;
    }
}
