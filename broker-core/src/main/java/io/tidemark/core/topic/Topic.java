package io.tidemark.core.topic;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.partition.Partition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.List;
import java.util.Map;

/**
 * A topic: its partitions and configuration.
 *
 * @param overrides the config keys set on the topic itself; {@code config} is them over the broker's defaults
 */
public record Topic(String name, int replicationFactor, Map<String, String> overrides, TopicConfig config,
                    List<Partition> partitions) {
    /** Prefix of internal topics' names, which users cannot create. */
    public static final String INTERNAL_PREFIX = "__";

    public Topic {
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

    public static TidemarkException unknown(String name) {
        return new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic '" + name + "' does not exist");
    }
}
