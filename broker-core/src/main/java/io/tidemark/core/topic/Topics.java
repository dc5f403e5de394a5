package io.tidemark.core.topic;

import io.tidemark.core.partition.Partition;

import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The topics the broker's services see. A cluster (of one broker or more) keeps them in its metadata group, and a
 * topic's partitions there may be led, or only known, by this broker.
 */
public interface Topics {
    /**
     * Creates a topic.
     *
     * @param replicationFactor 0 for the cluster's default
     */
    Topic create(String name, int partitions, int replicationFactor, Map<String, String> overrides) throws IOException;

    void delete(String name) throws IOException;

    /** Sets and removes config overrides; the partitions take the new configuration. */
    Topic alterConfig(String name, Map<String, String> set, Collection<String> remove) throws IOException;

    /** @throws io.tidemark.proto.error.TidemarkException UNKNOWN_TOPIC */
    Topic topic(String name);

    /** @throws io.tidemark.proto.error.TidemarkException UNKNOWN_TOPIC or UNKNOWN_PARTITION */
    default Partition partition(String topicName, int partition) {
        return topic(topicName).partition(partition);
    }

    /** Every topic, sorted by name. */
    List<Topic> topics();
}
