package io.tidemark.core.group.membership;

import io.tidemark.core.partition.TopicPartition;

import java.util.Comparator;
import java.util.Map;
import java.util.Set;

/**
 * Computes a consumer group's target assignment: which member should own which partition. The coordinator calls it
 * whenever the group's epoch moves (a member joined or left, a subscription or a subscribed topic's partition count
 * changed) and then hands the result out incrementally ({@link ConsumerGroup}).
 *
 * <p>Deterministic: the same arguments give the same assignment, on every broker and at every replay.
 */
public interface Assignor {
    /** Orders partitions by topic, then partition number: the order assignors walk them in. */
    Comparator<TopicPartition> PARTITION_ORDER = Comparator.comparing(TopicPartition::topic)
            .thenComparingInt(TopicPartition::partition);

    /** The name a group is created with (ConsumerGroupHeartbeatRequest.assignor). */
    String name();

    /**
     * @param subscriptions member id -> the topics it subscribes to (resolved: only topics that exist)
     * @param partitions    topic -> partition count, for every subscribed topic
     * @param previous      the target assignment before this change, member id -> partitions (members that left
     *                      are absent from {@code subscriptions}; their entries are ignored)
     * @return member id -> partitions, an entry (maybe empty) for every member of {@code subscriptions}; each
     *         partition of a subscribed topic goes to exactly one member subscribed to its topic
     */
    Map<String, Set<TopicPartition>> assign(Map<String, Set<String>> subscriptions, Map<String, Integer> partitions,
                                            Map<String, Set<TopicPartition>> previous);
}
