package io.tidemark.core.topic;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.partition.Partition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * A topic: its id, partitions and configuration.
 *
 * @param id        given at random when the topic was created and kept for its life; a topic deleted and created
 *                  again under the same name has another ({@link io.tidemark.proto.record.TopicIds})
 * @param overrides the config keys set on the topic itself; {@code config} is them over the broker's defaults
 */
public record Topic(String name, UUID id, int replicationFactor, Map<String, String> overrides, TopicConfig config,
                    List<Partition> partitions) {
    /** Prefix of internal topics' names, which users cannot create. */
    public static final String INTERNAL_PREFIX = "__";

    public Topic {
        Objects.requireNonNull(id, "id");
        overrides = Map.copyOf(overrides);
        partitions = List.copyOf(partitions);
    }

    public boolean internal() {
        return name.startsWith(INTERNAL_PREFIX);
    }

    /** @throws TidemarkException UNKNOWN_PARTITION naming the partitions the topic has */
    public Partition partition(int partition) {
        if (partition < 0 || partition >= partitions.size()) {
            throw new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "topic '" + name + "' has partitions 0 to "
                    + (partitions.size() - 1) + ", not " + partition);
        }
        return partitions.get(partition);
    }

    /**
     * Checks that this is the topic a reader pinned to {@code expected} means.
     *
     * @throws TidemarkException UNKNOWN_TOPIC_ID when the topic has another id: the one asked for was deleted and a
     *                           topic of the same name created since
     */
    public void checkId(UUID expected) {
        if (!id.equals(expected)) {
            throw new TidemarkException(ErrorCode.UNKNOWN_TOPIC_ID, "topic '" + name + "' with id " + expected
                    + " was deleted and created again: it has id " + id + " now, whose offsets start anew");
        }
    }

    public static TidemarkException unknown(String name) {
        return new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic '" + name + "' does not exist");
    }
}
