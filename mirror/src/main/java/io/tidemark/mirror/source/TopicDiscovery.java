package io.tidemark.mirror.source;

import com.google.protobuf.ByteString;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorConfig;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.mirror.sink.StopReason;
import io.tidemark.mirror.sink.TargetTopics;
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
import java.util.Optional;
import java.util.UUID;

/**
 * Finds the source topics to copy and makes their target topics: every {@code discovery.interval} it lists the
 * source's topics (internal ones never), and for each new one whose whole name matches {@code --topics} it creates
 * the target topic ({@code --topic-prefix} + name) with the same partition count and the source topic's config
 * overrides when it is absent ({@link TargetTopics}), then hands each partition to {@link Listener#added}, with the
 * largest batch the target topic takes. A target topic that exists with fewer partitions takes partitions p to p as
 * far as it has them; the others are handed to {@link Listener#uncopyable} with the reason, and so is every partition
 * of a topic whose target topic is the dead-letter topic. A topic that disappeared from the source is handed to
 * {@link Listener#removed}, so it is picked up afresh if it comes back. A topic is known by its id too: one listed
 * with another id than the one copied was deleted and created again under its name, and is removed then added, so its
 * partitions are copied as a new origin from the new topic's start ({@link SourceTopicChanges}).
 *
 * <p>Not thread-safe: one scheduled task runs it.
 */
public final class TopicDiscovery {
    private static final Logger LOG = LoggerFactory.getLogger(TopicDiscovery.class);

    /** What to do with the partitions found. */
    public interface Listener {
        /**
         * Copy {@code source}, of the source topic with id {@code sourceTopicId} only, to the same partition of
         * {@code targetTopic}, in batches of at most {@code maxBatchBytes}.
         */
        void added(TopicPartition source, UUID sourceTopicId, String targetTopic, int maxBatchBytes);

        /** {@code source} cannot be copied to {@code targetTopic}: it is shown stopped, for {@code reason}. */
        void uncopyable(TopicPartition source, UUID sourceTopicId, String targetTopic, StopReason reason);

        void removed(String sourceTopic);
    }

    private final TidemarkAdmin source;
    private final TargetTopics targets;
    private final MirrorConfig config;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final Listener listener;
    /** The topics copied: name, and the id of the topic copied. */
    private final Map<String, UUID> copied = new HashMap<>();

    public TopicDiscovery(TidemarkAdmin source, TargetTopics targets, MirrorConfig config, MirrorMetrics metrics,
                          Clock clock, Listener listener) {
        this.source = source;
        this.targets = targets;
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
        if (config.deadLetterTopic().equals(Optional.of(targetTopic))) {
            copied.put(name, id);
            uncopyable(name, id, 0, partitions, targetTopic, "target topic " + targetTopic + " is the mirror's "
                    + "dead-letter topic; rename the dead-letter topic or use --topic-prefix to copy " + name);
            return;
        }
        TargetTopics.Ensured target = targets.ensureLike(described, targetTopic);
        copied.put(name, id);
        int targetPartitions = target.topic().getPartitionsCount();
        int copiedPartitions = Math.min(partitions, targetPartitions);
        LOG.info("Copying source topic {} (id {}, {} partitions) to target topic {}", name, id, partitions,
                targetTopic);
        int maxBatchBytes = Math.min(config.maxBatchBytes(), target.maxBatchBytes(config.maxBatchBytes()));
        for (int p = 0; p < copiedPartitions; p++) {
            listener.added(new TopicPartition(name, p), id, targetTopic, maxBatchBytes);
        }
        if (copiedPartitions < partitions) {
            LOG.error("Target topic {} has {} partitions, fewer than the {} of source topic {}: partition p is copied "
                    + "to partition p, so partitions {} to {} are not copied", targetTopic, targetPartitions,
                    partitions, name, copiedPartitions, partitions - 1);
            uncopyable(name, id, copiedPartitions, partitions, targetTopic, "target topic " + targetTopic + " has "
                    + targetPartitions + " partitions, fewer than the " + partitions + " of source topic " + name
                    + "; partition p is copied to partition p");
        }
    }

    private void uncopyable(String name, UUID id, int fromPartition, int toPartition, String targetTopic,
                            String why) {
        for (int p = fromPartition; p < toPartition; p++) {
            listener.uncopyable(new TopicPartition(name, p), id, targetTopic,
                    StopReason.uncopyable(ErrorCode.UNKNOWN_PARTITION, why));
        }
    }
}
