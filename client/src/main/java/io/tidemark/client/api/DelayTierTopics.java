package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicSummary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Makes a runtime's delay tier topics that are missing, shaped as its retry topic (partitions, replication factor). */
final class DelayTierTopics {
    private static final Logger LOG = LoggerFactory.getLogger(DelayTierTopics.class);

    private DelayTierTopics() {
    }

    /**
     * @throws IllegalArgumentException when the retry topic does not exist
     * @throws TidemarkException        when a tier could not be made
     */
    static void ensure(TidemarkAdmin admin, String retryTopic, DelayTiers tiers) {
        Map<String, TopicSummary> topics = admin.listTopics(false).stream()
                .collect(Collectors.toMap(TopicSummary::getName, Function.identity()));
        TopicSummary retry = topics.get(retryTopic);
        if (retry == null) {
            throw new IllegalArgumentException("retry topic " + retryTopic + " does not exist; its delay tiers are "
                    + "made like it, so create it first");
        }
        for (String tier : tiers.topics()) {
            if (topics.containsKey(tier)) {
                continue;
            }
            try {
                admin.createTopic(tier, retry.getPartitions(), retry.getReplicationFactor(), Map.of());
                LOG.info("Created delay tier {} with {} partitions, replication factor {}", tier,
                        retry.getPartitions(), retry.getReplicationFactor());
            } catch (TidemarkException e) {
                if (e.code() != ErrorCode.TOPIC_EXISTS) {
                    throw e;
                }
            }
        }
    }
}
