package io.tidemark.core.topic;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.DurableFiles;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The topics of this broker and their partitions, kept under {@code <data.dir>/topics/<name>/}: a
 * {@link TopicMetadataFile} and one directory per partition ({@code 0}, {@code 1}, ...). Creating, altering and
 * deleting topics goes through here; a topic created gets an id from the registry's source of ids (random in
 * production), and so does a topic whose file predates ids, when it is opened; partitions are opened by a {@link PartitionFactory}, so a replicated broker
 * can put Raft groups behind the same registry.
 *
 * <p>Thread-safe: topic changes are serialized; lookups read a concurrent map.
 */
public final class TopicRegistry implements Topics, Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(TopicRegistry.class);
    private static final String TOPICS_DIR = "topics";
    private static final String DELETED_DIR = "deleted-topics";

    /** Opens a partition's storage. */
    public interface PartitionFactory {
        Partition open(TopicPartition id, Path dir, TopicConfig config) throws IOException;
    }

    /**
     * Limits of topic requests.
     *
     * @param brokers how many brokers can hold replicas
     */
    public record Limits(int maxPartitionsPerTopic, int brokers) {
    }

    private final Path dataDir;
    private final Map<String, String> topicDefaults;
    private final PartitionFactory factory;
    private final Limits limits;
    private final ReplicaListener replicaListener;
    private final Supplier<UUID> ids;
    private final Map<String, Topic> topics = new ConcurrentHashMap<>();

    private TopicRegistry(Path dataDir, Map<String, String> topicDefaults, PartitionFactory factory, Limits limits,
                          ReplicaListener replicaListener, Supplier<UUID> ids) {
        this.dataDir = dataDir;
        this.topicDefaults = Map.copyOf(topicDefaults);
        this.factory = factory;
        this.limits = limits;
        this.replicaListener = replicaListener;
        this.ids = ids;
    }

    /**
     * Opens every topic under {@code dataDir} and finishes deletions a crash interrupted.
     *
     * @param replicaListener told of every partition opened, created or deleted (all are held here)
     * @param ids             the id of each topic created, and of each topic opened whose file has none (written
     *                        before topic ids); {@code UUID::randomUUID} but in tests
     */
    public static TopicRegistry open(Path dataDir, Map<String, String> topicDefaults, PartitionFactory factory,
                                     Limits limits, ReplicaListener replicaListener, Supplier<UUID> ids)
            throws IOException {
        TopicConfig.parse(topicDefaults);
        TopicRegistry registry = new TopicRegistry(dataDir, topicDefaults, factory, limits, replicaListener, ids);
        Files.createDirectories(dataDir.resolve(TOPICS_DIR));
        DurableFiles.deleteTree(dataDir.resolve(DELETED_DIR));
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(dataDir.resolve(TOPICS_DIR))) {
            for (Path dir : dirs) {
                if (Files.exists(dir.resolve(TopicMetadataFile.NAME))) {
                    String name = dir.getFileName().toString();
                    Topic topic = registry.openTopic(name, TopicMetadataFile.load(dir, ids));
                    registry.topics.put(name, topic);
                    topic.partitions().forEach(replicaListener::holding);
                } else {
                    LOG.warn("Ignoring {}: it has no {}", dir, TopicMetadataFile.NAME);
                }
            }
        }
        LOG.info("Opened {} topics in {}", registry.topics.size(), dataDir);
        return registry;
    }

    private Topic openTopic(String name, TopicMetadataFile.Contents contents) throws IOException {
        TopicConfig config = effectiveConfig(contents.overrides());
        List<Partition> partitions = new ArrayList<>();
        Path dir = topicDir(name);
        for (int p = 0; p < contents.partitions(); p++) {
            partitions.add(factory.open(new TopicPartition(name, p), dir.resolve(Integer.toString(p)), config));
        }
        return new Topic(name, contents.id(), contents.replicationFactor(), contents.overrides(), config,
                partitions);
    }

    private TopicConfig effectiveConfig(Map<String, String> overrides) {
        Map<String, String> merged = new HashMap<>(topicDefaults);
        merged.putAll(overrides);
        return TopicConfig.parse(merged);
    }

    /**
     * Creates a topic.
     *
     * @param replicationFactor 0 for the default (1)
     * @throws TidemarkException TOPIC_EXISTS, INVALID_REQUEST (name, partition count),
     *                           INVALID_REPLICATION_FACTOR, INVALID_CONFIG
     */
    @Override
    public synchronized Topic create(String name, int partitions, int replicationFactor, Map<String, String> overrides)
            throws IOException {
        TopicNames.checkUserTopic(name);
        return createTopic(name, partitions, replicationFactor, overrides);
    }

    /** Creates an internal topic (name starting with "__") when it does not exist yet. */
    public synchronized Topic ensureInternal(String name, int partitions, Map<String, String> overrides)
            throws IOException {
        if (!name.startsWith(Topic.INTERNAL_PREFIX)) {
            throw new IllegalStateException(name + " is not an internal topic name");
        }
        Topic existing = topics.get(name);
        return existing != null ? existing : createTopic(name, partitions, 1, overrides);
    }

    private Topic createTopic(String name, int partitions, int replicationFactor, Map<String, String> overrides)
            throws IOException {
        if (topics.containsKey(name)) {
            throw new TidemarkException(ErrorCode.TOPIC_EXISTS, "topic '" + name + "' already exists");
        }
        if (partitions < 1 || partitions > limits.maxPartitionsPerTopic()) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "a topic needs 1 to "
                    + limits.maxPartitionsPerTopic() + " partitions (max.partitions.per.topic), not " + partitions);
        }
        int factor = replicationFactor == 0 ? 1 : replicationFactor;
        if (factor < 1 || factor > limits.brokers()) {
            throw new TidemarkException(ErrorCode.INVALID_REPLICATION_FACTOR, "replication factor " + factor
                    + " is not possible: this cluster has " + limits.brokers() + " broker(s), so a topic can have 1 to "
                    + limits.brokers() + " replicas");
        }
        effectiveConfig(overrides);
        Path dir = topicDir(name);
        Files.createDirectories(dir);
        DurableFiles.syncDirectory(dir.getParent());
        TopicMetadataFile.Contents contents = new TopicMetadataFile.Contents(ids.get(), partitions, factor,
                overrides);
        TopicMetadataFile.write(dir, contents);
        Topic topic = openTopic(name, contents);
        DurableFiles.syncDirectory(dir);
        topics.put(name, topic);
        topic.partitions().forEach(replicaListener::holding);
        LOG.info("Created topic {} (id {}) with {} partitions, replication factor {}, overrides {}", name, topic.id(),
                partitions, factor, overrides);
        return topic;
    }

    @Override
    public synchronized Topic alterConfig(String name, Map<String, String> set, Collection<String> remove)
            throws IOException {
        Topic topic = topic(name);
        Map<String, String> overrides = new HashMap<>(topic.overrides());
        remove.forEach(overrides::remove);
        overrides.putAll(set);
        TopicConfig config = effectiveConfig(overrides);
        TopicMetadataFile.write(topicDir(name), new TopicMetadataFile.Contents(topic.id(), topic.partitions().size(),
                topic.replicationFactor(), overrides));
        topic.partitions().forEach(p -> p.updateConfig(config));
        Topic altered = new Topic(name, topic.id(), topic.replicationFactor(), overrides, config, topic.partitions());
        topics.put(name, altered);
        LOG.info("Altered topic {}: overrides now {}", name, overrides);
        return altered;
    }

    /** Deletes a topic and its data. */
    @Override
    public synchronized void delete(String name) throws IOException {
        Topic topic = topic(name);
        if (topic.internal()) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "internal topic '" + name + "' cannot be deleted");
        }
        topics.remove(name);
        for (Partition partition : topic.partitions()) {
            replicaListener.released(partition);
            partition.close();
        }
        Path deleted = dataDir.resolve(DELETED_DIR);
        Files.createDirectories(deleted);
        Path moved = deleted.resolve(name + "-" + System.nanoTime());
        DurableFiles.move(topicDir(name), moved);
        DurableFiles.deleteTree(moved);
        LOG.info("Deleted topic {} (id {})", name, topic.id());
    }

    @Override
    public Topic topic(String name) {
        Topic topic = topics.get(name);
        if (topic == null) {
            throw Topic.unknown(name);
        }
        return topic;
    }

    @Override
    public List<Topic> topics() {
        return topics.values().stream().sorted(Comparator.comparing(Topic::name)).toList();
    }

    private Path topicDir(String name) {
        return dataDir.resolve(TOPICS_DIR).resolve(name);
    }

    /** Closes every partition cleanly. */
    @Override
    public synchronized void close() throws IOException {
        IOException failure = null;
        for (Topic topic : topics.values()) {
            for (Partition partition : topic.partitions()) {
                try {
                    partition.close();
                } catch (IOException e) {
                    LOG.error("Closing {} failed", partition.id(), e);
                    failure = e;
                }
            }
        }
        topics.clear();
        if (failure != null) {
            throw failure;
        }
    }
}
