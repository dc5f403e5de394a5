package io.tidemark.mirror.sink;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicDescription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Makes the topics a mirror writes to on the target: a source topic's target topic, with the source topic's partition
 * count and config overrides, when the mirror first copies the topic ({@code TopicDiscovery}) and again when it was
 * deleted while the mirror ran ({@link TargetTopicRecovery}); and the dead-letter topic.
 *
 * <p>Thread-safe (the admin clients are). Every call waits for the clusters' answers.
 */
public final class TargetTopics {
    private static final Logger LOG = LoggerFactory.getLogger(TargetTopics.class);
    static final String MAX_BATCH_BYTES = "max.batch.bytes";

    private final TidemarkAdmin source;
    private final TidemarkAdmin target;

    public TargetTopics(TidemarkAdmin source, TidemarkAdmin target) {
        this.source = source;
        this.target = target;
    }

    /**
     * A target topic as it is.
     *
     * @param created whether this call created it
     */
    public record Ensured(TopicDescription topic, boolean created) {
        /** Its max.batch.bytes; {@code fallback} when the description does not carry the key. */
        public int maxBatchBytes(int fallback) {
            String value = topic.getConfigsOrDefault(MAX_BATCH_BYTES, null);
            return value == null ? fallback : Integer.parseInt(value);
        }
    }

    /**
     * {@code targetTopic} as it is, after creating it like the source topic {@code described} when it is absent.
     *
     * @throws TidemarkException when a cluster refuses or does not answer
     */
    public Ensured ensureLike(TopicDescription described, String targetTopic) {
        Optional<TopicDescription> existing = describe(targetTopic);
        if (existing.isPresent()) {
            return new Ensured(existing.get(), false);
        }
        Map<String, String> overrides = new HashMap<>();
        for (String key : described.getOverriddenKeysList()) {
            overrides.put(key, described.getConfigsOrThrow(key));
        }
        return create(target, targetTopic, described.getPartitionsCount(), overrides);
    }

    /** {@link #ensureLike(TopicDescription, String)} of the source topic named {@code sourceTopic}. */
    public Ensured ensureLike(String sourceTopic, String targetTopic) {
        return ensureLike(source.describeTopics(List.of(sourceTopic)).get(0), targetTopic);
    }

    /** The target topic named {@code topic}; empty when the target has no such topic. */
    public Optional<TopicDescription> describe(String topic) {
        return describe(target, topic);
    }

    private static Optional<TopicDescription> describe(TidemarkAdmin cluster, String topic) {
        try {
            return Optional.of(cluster.describeTopics(List.of(topic)).get(0));
        } catch (TidemarkException e) {
            if (e.code() != ErrorCode.UNKNOWN_TOPIC) {
                throw e;
            }
            return Optional.empty();
        }
    }

    /**
     * The dead-letter topic, created when absent with what lets it hold any record a copy topic refused: one
     * partition (dead letters are few, and order across partitions does not matter), no SendTime window, the largest
     * max.batch.bytes the target takes ({@code largestBatchBytes}; the broker's default when 0, unknown), and no
     * retention limit: a dead letter is the only copy the target has of its record. An existing topic is used as it
     * is.
     *
     * @throws TidemarkException when the target refuses or does not answer
     */
    public static Ensured ensureDeadLetterTopic(TidemarkAdmin target, String topic, int largestBatchBytes) {
        Optional<TopicDescription> existing = describe(target, topic);
        if (existing.isPresent()) {
            LOG.info("Dead-letter topic {} exists: its config is used as it is ({})", topic,
                    existing.get().getConfigsMap());
            return new Ensured(existing.get(), false);
        }
        Map<String, String> config = new HashMap<>(Map.of("send.time.before.max.ms", "-1", "send.time.after.max.ms",
                "-1", "retention.ms", "-1"));
        if (largestBatchBytes > 0) {
            config.put(MAX_BATCH_BYTES, Integer.toString(largestBatchBytes));
        }
        return create(target, topic, 1, config);
    }

    private static Ensured create(TidemarkAdmin target, String topic, int partitions, Map<String, String> config) {
        try {
            TopicDescription created = target.createTopic(topic, partitions, 0, config);
            LOG.info("Created target topic {} with {} partitions and config {}", topic, partitions, config);
            return new Ensured(created, true);
        } catch (TidemarkException e) {
            if (e.code() != ErrorCode.TOPIC_EXISTS) {
                throw e;
            }
            return new Ensured(target.describeTopics(List.of(topic)).get(0), false);
        }
    }
}
