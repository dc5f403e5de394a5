package io.tidemark.mirror.source;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorConfig;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TopicSummary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Finds the source topics to copy and makes their target topics: every {@code discovery.interval} it lists the
 * source's topics (internal ones never), and for each new one whose whole name matches {@code --topics} it creates
 * the target topic ({@code --topic-prefix} + name) with the same partition count and the source topic's config
 * overrides when it is absent, then hands each partition to {@link Listener#added}. A target topic that exists with
 * fewer partitions cannot take partition p to p: the topic is skipped (logged) and looked at again next time. A
 * topic that disappeared from the source is handed to {@link Listener#removed}, so it is picked up afresh if it comes
 * back.
 *
 * <p>Not thread-safe: one scheduled task runs it.
 */
public final class TopicDiscovery {
    private static final Logger LOG = LoggerFactory.getLogger(TopicDiscovery.class);

    /** What to do with the partitions found. */
    public interface Listener {
        void added(TopicPartition source, String targetTopic);

        void removed(String sourceTopic);
    }

    private final TidemarkAdmin source;
    private final TidemarkAdmin target;
    private final MirrorConfig config;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final Listener listener;
    private final Set<String> copied = new HashSet<>();

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
        int targetPartitions = ensureTarget(described, targetTopic);
        if (targetPartitions < partitions) {
            LOG.error("Target topic {} has {} partitions, fewer than the {} of source topic {}: partition p is copied "
                    + "to partition p, so the topic is not copied", targetTopic, targetPartitions, partitions, name);
            return;
        }
        copied.add(name);
        LOG.info("Copying source topic {} ({} partitions) to target topic {}", name, partitions, targetTopic);
        for (int p = 0; p < partitions; p++) {
            listener.added(new TopicPartition(name, p), targetTopic);
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
