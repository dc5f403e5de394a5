package io.tidemark.mirror.source;

import com.google.protobuf.ByteString;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorConfig;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TopicSummary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Finds the source topics to copy and makes their target topics: every {@code discovery.interval} it lists the
 * source's topics (internal ones never), and for each new one whose whole name matches {@code --topics} it creates
 * the target topic ({@code --topic-prefix} + name) with the same partition count and the source topic's config
 * overrides when it is absent, then hands each partition to {@link Listener#added}. A target topic that exists with
 * fewer partitions cannot take partition p to p: the topic is skipped (logged) and looked at again next time. A
 * topic that disappeared from the source is handed to {@link Listener#removed}, so it is picked up afresh if it comes
 * back. A topic is known by its id too: one listed with another id than the one copied was deleted and created again
 * under its name, and is removed then added, so its partitions are copied as a new origin from the new topic's start
 * ({@link SourceTopicChanges}).
 *
 * <p>Not thread-safe: one scheduled task runs it.
 */
public final class TopicDiscovery {
    private static final Logger LOG = LoggerFactory.getLogger(TopicDiscovery.class);

    /** What to do with the partitions found. */
    public interface Listener {
        /** @param sourceTopicId the id of the source topic to copy: copy that topic only */
        void added(TopicPartition source, UUID sourceTopicId, String targetTopic);

        void removed(String sourceTopic);
    }

    private final TidemarkAdmin source;
    private final TidemarkAdmin target;
    private final MirrorConfig config;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final Listener listener;
    /** The topics copied: name, and the id of the topic copied. */
    private final Map<String, UUID> copied = new HashMap<>();

    public TopicDiscovery(TidemarkAdmin source, TidemarkAdmin target, MirrorConfig config, MirrorMetrics metrics,
                          Clock clock, Listener listener) {
        this.source = source;
        this.target = target;
        this.config = config;
        this.metrics = metrics;
        this.clock = clock;
        this.listener = listener;
    }

    /** Lists the source's topics once and acts on what changed. */
    public void discover() {
        List<TopicSummary> topics = source.listTopics(false);
        metrics.heardFromSource(clock.millis());
        Map<String, UUID> listed = new LinkedHashMap<>();
        for (TopicSummary topic : topics) {
            listed.put(topic.getName(), topicId(topic.getName(), topic.getTopicId()));
        }
        SourceTopicChanges changes = SourceTopicChanges.between(copied, listed, config.topics());
        for (SourceTopicChanges.Recreated recreated : changes.recreated()) {
            LOG.warn("Source topic {} was deleted and created again (id {}, copied until now, is {} now): the copies "
                    + "of the old topic stay; the new one is copied as a new origin", recreated.topic(),
                    recreated.copiedId(), recreated.listedId());
            copied.remove(recreated.topic());
            listener.removed(recreated.topic());
            add(recreated.topic());
        }
        changes.added().forEach(this::add);
        for (String gone : changes.removed()) {
            LOG.warn("Source topic {} is gone; its partitions are no longer copied", gone);
            copied.remove(gone);
            listener.removed(gone);
        }
    }

    private static UUID topicId(String topic, ByteString id) {
        try {
            return TopicIds.fromBytes(id);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("source topic " + topic + " has no usable id (" + e.getMessage()
                    + "): the source's brokers must give topics ids, as Tidemark brokers with topic ids do");
        }
    }

    private void add(String name) {
        TopicDescription described = source.describeTopics(List.of(name)).get(0);
        UUID id = topicId(name, described.getTopicId());
        String targetTopic = config.targetTopic(name);
        int partitions = described.getPartitionsCount();
        int targetPartitions = ensureTarget(described, targetTopic);
        if (targetPartitions < partitions) {
            LOG.error("Target topic {} has {} partitions, fewer than the {} of source topic {}: partition p is copied "
                    + "to partition p, so the topic is not copied", targetTopic, targetPartitions, partitions, name);
            return;
        }
        copied.put(name, id);
        LOG.info("Copying source topic {} (id {}, {} partitions) to target topic {}", name, id, partitions,
                targetTopic);
        for (int p = 0; p < partitions; p++) {
            listener.added(new TopicPartition(name, p), id, targetTopic);
        }
    }

    /** The target topic's partition count, after creating it like the source topic when it was absent. */
    private int ensureTarget(TopicDescription described, String targetTopic) {
        try {
            return target.describeTopics(List.of(targetTopic)).get(0).getPartitionsCount();
        } catch (TidemarkException e) {
            if (e.code() != ErrorCode.UNKNOWN_TOPIC) {
                throw e;
            }
        }
        Map<String, String> overrides = new HashMap<>();
        for (String key : described.getOverriddenKeysList()) {
            overrides.put(key, described.getConfigsOrThrow(key));
        }
        try {
            TopicDescription created = target.createTopic(targetTopic, described.getPartitionsCount(), 0, overrides);
            LOG.info("Created target topic {} with {} partitions and overrides {}", targetTopic,
                    described.getPartitionsCount(), overrides);
            return created.getPartitionsCount();
        } catch (TidemarkException e) {
            if (e.code() != ErrorCode.TOPIC_EXISTS) {
                throw e;
            }
            return target.describeTopics(List.of(targetTopic)).get(0).getPartitionsCount();
        }
    }
}
