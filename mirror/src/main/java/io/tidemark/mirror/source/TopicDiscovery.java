package io.tidemark.mirror.source;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorConfig;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.mirror.sink.StopReason;
import io.tidemark.mirror.sink.TargetTopics;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TopicSummary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Finds the source topics to copy and makes their target topics: every {@code discovery.interval} it lists the
 * source's topics (internal ones never), and for each new one whose whole name matches {@code --topics} it creates
 * the target topic ({@code --topic-prefix} + name) with the same partition count and the source topic's config
 * overrides when it is absent ({@link TargetTopics}), then hands each partition to {@link Listener#added}, with the
 * largest batch the target topic takes. A target topic that exists with fewer partitions takes partitions p to p as
 * far as it has them; the others are handed to {@link Listener#uncopyable} with the reason, and so is every partition
 * of a topic whose target topic is the dead-letter topic. A topic that disappeared from the source is handed to
 * {@link Listener#removed}, so it is picked up afresh if it comes back.
 *
 * <p>Not thread-safe: one scheduled task runs it.
 */
public final class TopicDiscovery {
    private static final Logger LOG = LoggerFactory.getLogger(TopicDiscovery.class);

    /** What to do with the partitions found. */
    public interface Listener {
        /** Copy {@code source} to the same partition of {@code targetTopic}, in batches of at most those bytes. */
        void added(TopicPartition source, String targetTopic, int maxBatchBytes);

        /** {@code source} cannot be copied to {@code targetTopic}: it is shown stopped, for {@code reason}. */
        void uncopyable(TopicPartition source, String targetTopic, StopReason reason);

        void removed(String sourceTopic);
    }

    private final TidemarkAdmin source;
    private final TargetTopics targets;
    private final MirrorConfig config;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final Listener listener;
    private final Set<String> copied = new HashSet<>();

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
        Set<String> listed = new HashSet<>();
        for (TopicSummary topic : topics) {
            listed.add(topic.getName());
            if (config.topics().matcher(topic.getName()).matches() && !copied.contains(topic.getName())) {
                add(topic.getName());
            }
        }
        for (String gone : Set.copyOf(copied)) {
            if (!listed.contains(gone)) {
                LOG.warn("Source topic {} is gone; its partitions are no longer copied", gone);
                copied.remove(gone);
                listener.removed(gone);
            }
        }
    }

    private void add(String name) {
        TopicDescription described = source.describeTopics(List.of(name)).get(0);
        String targetTopic = config.targetTopic(name);
        int partitions = described.getPartitionsCount();
        if (config.deadLetterTopic().equals(Optional.of(targetTopic))) {
            copied.add(name);
            uncopyable(name, 0, partitions, targetTopic, "target topic " + targetTopic + " is the mirror's "
                    + "dead-letter topic; rename the dead-letter topic or use --topic-prefix to copy " + name);
            return;
        }
        TargetTopics.Ensured target = targets.ensureLike(described, targetTopic);
        copied.add(name);
        int targetPartitions = target.topic().getPartitionsCount();
        int copiedPartitions = Math.min(partitions, targetPartitions);
        LOG.info("Copying source topic {} ({} partitions) to target topic {}", name, partitions, targetTopic);
        int maxBatchBytes = Math.min(config.maxBatchBytes(), target.maxBatchBytes(config.maxBatchBytes()));
        for (int p = 0; p < copiedPartitions; p++) {
            listener.added(new TopicPartition(name, p), targetTopic, maxBatchBytes);
        }
        if (copiedPartitions < partitions) {
            LOG.error("Target topic {} has {} partitions, fewer than the {} of source topic {}: partition p is copied "
                    + "to partition p, so partitions {} to {} are not copied", targetTopic, targetPartitions,
                    partitions, name, copiedPartitions, partitions - 1);
            uncopyable(name, copiedPartitions, partitions, targetTopic, "target topic " + targetTopic + " has "
                    + targetPartitions + " partitions, fewer than the " + partitions + " of source topic " + name
                    + "; partition p is copied to partition p");
        }
    }

    private void uncopyable(String name, int fromPartition, int toPartition, String targetTopic, String why) {
        for (int p = fromPartition; p < toPartition; p++) {
            listener.uncopyable(new TopicPartition(name, p), targetTopic,
                    StopReason.uncopyable(ErrorCode.UNKNOWN_PARTITION, why));
        }
    }
}
