package io.tidemark.mirror;

import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.tls.TlsSettings;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * What a mirror copies, from where to where, and how often it does its periodic work. Checked when built: a bad
 * value fails with an {@link IllegalArgumentException} naming it and what is allowed.
 *
 * @param sourceBootstrap      host:port,... of the source cluster
 * @param sourceName           the source cluster's name: written into provenance, checked by the loop rule, and
 *                             checked against the source's own name ({@link ClusterNames})
 * @param targetBootstrap      host:port,... of the target cluster
 * @param targetName           the target cluster's name as given; empty to take the target's own name
 *                             ({@link ClusterNames})
 * @param topics               source topics to copy (the whole name must match); internal topics never are
 * @param groups               source consumer groups to checkpoint (the whole name must match)
 * @param topicPrefix          prepended to a source topic's name to make the target topic's ("" for the same name)
 * @param checkpointIntervalMs how often committed offsets are read and checkpointed ({@code checkpoint.interval})
 * @param heartbeatIntervalMs  how often the mirror records on the target that it heard from the source
 * @param discoveryIntervalMs  how often the source's topics are listed, to pick up new ones
 * @param maxBatchBytes        largest batch of several records the mirror writes, provenance included (a larger
 *                             single record goes alone); a target topic's smaller max.batch.bytes lowers it for
 *                             that topic
 * @param maxBacklogBytes      fetched bytes a partition may hold before it is paused at the source
 * @param maxBytesPerSecond    most bytes of records read from the source per second, on average over the polls
 *                             ({@code --max-bytes-per-second}); 0 for no limit
 * @param deadLetterTopic      the target topic records the target refuses go to ({@code --dead-letter-topic});
 *                             empty to stop a partition at such a record instead
 * @param sourceTls            how the mirror reaches the source in TLS ({@code --source-command-config}); empty for
 *                             plain text
 * @param targetTls            the same for the target ({@code --target-command-config})
 */
public record MirrorConfig(String sourceBootstrap, String sourceName, String targetBootstrap,
                           Optional<String> targetName, Pattern topics, Pattern groups, String topicPrefix,
                           long checkpointIntervalMs, long heartbeatIntervalMs, long discoveryIntervalMs,
                           int maxBatchBytes, int maxBacklogBytes, long maxBytesPerSecond,
                           Optional<String> deadLetterTopic, Optional<TlsSettings> sourceTls,
                           Optional<TlsSettings> targetTls) {
    public static final String ALL = ".*";
    public static final long DEFAULT_CHECKPOINT_INTERVAL_MS = 5_000;
    public static final long DEFAULT_HEARTBEAT_INTERVAL_MS = 1_000;
    public static final long DEFAULT_DISCOVERY_INTERVAL_MS = 5_000;
    /**
     * 1 MiB: a target topic's default max.batch.bytes. Measured when a partition had one batch in flight, each batch
     * a Raft round on the target: copying a backlog of 1M x 1 KiB between two one-broker clusters went from 23,358 /
     * 27,780 records/s with 256 KiB to 29,463 / 35,114 with 512 KiB, and from 33,774-37,928 with 512 KiB to 44,123 /
     * 50,561 with 1 MiB; 1.5 and 2 MiB gained nothing more (docs/benchmarks.md). Not re-measured with several in
     * flight.
     */
    public static final int DEFAULT_MAX_BATCH_BYTES = 1024 * 1024;
    /** 4 MiB: four fetches' worth ahead of the target, per partition. */
    public static final int DEFAULT_MAX_BACKLOG_BYTES = 4 * 1024 * 1024;
    private static final long MAX_INTERVAL_MS = 86_400_000;
    private static final long MIN_BYTES_PER_SECOND = 1024;
    /** Kafka's longest topic name, so a dead-letter topic can also be copied into Kafka by other tools. */
    private static final int MAX_TOPIC_NAME_LENGTH = 249;

    public MirrorConfig {
        requireText("--source", sourceBootstrap);
        requireText("--target", targetBootstrap);
        OriginPartition.checkClusterName(sourceName);
        Objects.requireNonNull(targetName, "targetName")
                .ifPresent(name -> ClusterNames.checkDifferent(sourceName, name));
        Objects.requireNonNull(topics, "topics");
        Objects.requireNonNull(groups, "groups");
        Objects.requireNonNull(topicPrefix, "topicPrefix");
        if (!topicPrefix.matches("[a-zA-Z0-9._-]*") || topicPrefix.startsWith("__")) {
            throw new IllegalArgumentException("--topic-prefix '" + topicPrefix + "' is not allowed: use characters "
                    + "from a-z A-Z 0-9 . _ -, not starting with '__'");
        }
        Objects.requireNonNull(deadLetterTopic, "deadLetterTopic").ifPresent(MirrorConfig::checkDeadLetterTopic);
        Objects.requireNonNull(sourceTls, "sourceTls");
        Objects.requireNonNull(targetTls, "targetTls");
        checkInterval("checkpoint interval", checkpointIntervalMs);
        checkInterval("heartbeat interval", heartbeatIntervalMs);
        checkInterval("discovery interval", discoveryIntervalMs);
        if (maxBatchBytes < 1024 || maxBatchBytes > 16 * 1024 * 1024) {
            throw new IllegalArgumentException("max batch bytes " + maxBatchBytes + " is not allowed: 1024 to 16 MiB");
        }
        if (maxBacklogBytes < maxBatchBytes) {
            throw new IllegalArgumentException("max backlog bytes " + maxBacklogBytes + " is below the max batch bytes "
                    + maxBatchBytes);
        }
        if (maxBytesPerSecond != 0 && maxBytesPerSecond < MIN_BYTES_PER_SECOND) {
            throw new IllegalArgumentException("--max-bytes-per-second " + maxBytesPerSecond + " is not allowed: 0 "
                    + "(no limit) or at least " + MIN_BYTES_PER_SECOND);
        }
    }

    /** A config with the defaults for everything but the clusters, their names and the patterns; no rate limit. */
    public static MirrorConfig of(String sourceBootstrap, String sourceName, String targetBootstrap,
                                  Optional<String> targetName, String topics, String groups, String topicPrefix) {
        return new MirrorConfig(sourceBootstrap, sourceName, targetBootstrap, targetName, pattern("--topics", topics),
                pattern("--groups", groups), topicPrefix, DEFAULT_CHECKPOINT_INTERVAL_MS,
                DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_DISCOVERY_INTERVAL_MS, DEFAULT_MAX_BATCH_BYTES,
                DEFAULT_MAX_BACKLOG_BYTES, 0, Optional.empty(), Optional.empty(), Optional.empty());
    }

    public MirrorConfig withIntervals(long checkpointMs, long heartbeatMs, long discoveryMs) {
        return new MirrorConfig(sourceBootstrap, sourceName, targetBootstrap, targetName, topics, groups, topicPrefix,
                checkpointMs, heartbeatMs, discoveryMs, maxBatchBytes, maxBacklogBytes, maxBytesPerSecond,
                deadLetterTopic, sourceTls, targetTls);
    }

    public MirrorConfig withMaxBytesPerSecond(long bytesPerSecond) {
        return new MirrorConfig(sourceBootstrap, sourceName, targetBootstrap, targetName, topics, groups, topicPrefix,
                checkpointIntervalMs, heartbeatIntervalMs, discoveryIntervalMs, maxBatchBytes, maxBacklogBytes,
                bytesPerSecond, deadLetterTopic, sourceTls, targetTls);
    }

    /** With a dead-letter topic ({@code --dead-letter-topic}); an empty one for none. */
    public MirrorConfig withDeadLetterTopic(Optional<String> topic) {
        return new MirrorConfig(sourceBootstrap, sourceName, targetBootstrap, targetName, topics, groups, topicPrefix,
                checkpointIntervalMs, heartbeatIntervalMs, discoveryIntervalMs, maxBatchBytes, maxBacklogBytes,
                maxBytesPerSecond, topic, sourceTls, targetTls);
    }

    /** Reaching the source and the target in TLS with these settings; an empty one for plain text. */
    public MirrorConfig withTls(Optional<TlsSettings> source, Optional<TlsSettings> target) {
        return new MirrorConfig(sourceBootstrap, sourceName, targetBootstrap, targetName, topics, groups, topicPrefix,
                checkpointIntervalMs, heartbeatIntervalMs, discoveryIntervalMs, maxBatchBytes, maxBacklogBytes,
                maxBytesPerSecond, deadLetterTopic, source, target);
    }

    /** The target topic of a source topic. */
    public String targetTopic(String sourceTopic) {
        return topicPrefix + sourceTopic;
    }

    /** @throws IllegalArgumentException naming the option when the regex does not compile */
    public static Pattern pattern(String option, String regex) {
        try {
            return Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException(option + " '" + regex + "' is not a regular expression: "
                    + e.getDescription());
        }
    }

    private static void requireText(String option, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(option + " is required: HOST:PORT,... of the cluster's brokers");
        }
    }

    private static void checkDeadLetterTopic(String topic) {
        if (topic.isEmpty() || topic.length() > MAX_TOPIC_NAME_LENGTH || !topic.matches("[a-zA-Z0-9._-]*")
                || topic.startsWith("__")) {
            throw new IllegalArgumentException("--dead-letter-topic '" + topic + "' is not allowed: use 1 to "
                    + MAX_TOPIC_NAME_LENGTH + " characters from a-z A-Z 0-9 . _ -, not starting with '__'");
        }
    }

    private static void checkInterval(String what, long ms) {
        if (ms < 10 || ms > MAX_INTERVAL_MS) {
            throw new IllegalArgumentException(what + " " + ms + " ms is not allowed: 10 ms to 1 day");
        }
    }
}
