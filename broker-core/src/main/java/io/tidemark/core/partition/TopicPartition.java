package io.tidemark.core.partition;

import java.util.Objects;

/** A partition of a topic. */
public record TopicPartition(String topic, int partition) {
    public TopicPartition {
        Objects.requireNonNull(topic, "topic");
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
