package io.tidemark.client.api;

import java.util.Objects;

/**
 * One partition of a topic.
 *
 * @param topic     the topic's name, not blank
 * @param partition the partition's index, from 0
 */
public record TopicPartition(String topic, int partition) {
    public TopicPartition {
        Objects.requireNonNull(topic, "topic");
        if (topic.isBlank()) {
            throw new IllegalArgumentException("topic name is blank");
        }
        if (partition < 0) {
            throw new IllegalArgumentException("partition " + partition + " of " + topic + " is negative");
        }
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
