package io.tidemark.replication.statemachine;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.partition.TopicPartition;
import org.apache.ratis.protocol.RaftGroupId;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which partition a Raft group replicates, and with which topic config overrides, kept in the group's state
 * machine directory as {@code partition.properties} ({@code topic}, {@code partition}, {@code config.KEY=VALUE}
 * per override; Java properties syntax). Ratis reopens a broker's groups from its storage before the metadata
 * group has replayed, so each group must know itself: the file is written when the group is first created, from
 * what {@link #expect} was told, and rewritten when the topic's config changes.
 *
 * <p>Thread-safe.
 */
public final class PartitionIdentityStore {
    static final String FILE = "partition.properties";
    private static final String CONFIG_PREFIX = "config.";

    /** A partition and its topic's config overrides. */
    public record Identity(TopicPartition partition, Map<String, String> overrides) {
        public Identity {
            overrides = Map.copyOf(overrides);
        }
    }

    private final Map<String, String> topicDefaults;
    private final Map<RaftGroupId, Identity> expected = new ConcurrentHashMap<>();

    public PartitionIdentityStore(Map<String, String> topicDefaults) {
        this.topicDefaults = Map.copyOf(topicDefaults);
    }

    /** Says what the group about to be created replicates. */
    public void expect(RaftGroupId groupId, Identity identity) {
        expected.put(groupId, identity);
    }

    /** What the group whose state machine lives in {@code smDir} replicates. */
    Identity identity(RaftGroupId groupId, Path smDir) throws IOException {
        Identity identity = read(smDir);
        if (identity == null) {
            identity = expected.get(groupId);
            if (identity == null) {
                throw new IOException("Raft group " + groupId + " in " + smDir + " has no " + FILE
                        + " and no partition was expected for it");
            }
            write(smDir, identity);
        }
        return identity;
    }

    /** A topic's config: its overrides over this broker's topic defaults. */
    public TopicConfig effective(Map<String, String> overrides) {
        Map<String, String> merged = new HashMap<>(topicDefaults);
        merged.putAll(overrides);
        return TopicConfig.parse(merged);
    }

    static Identity read(Path smDir) throws IOException {
        Path file = smDir.resolve(FILE);
        if (!Files.exists(file)) {
            return null;
        }
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1)) {
            properties.load(reader);
        }
        Map<String, String> overrides = new TreeMap<>();
        for (String key : properties.stringPropertyNames()) {
            if (key.startsWith(CONFIG_PREFIX)) {
                overrides.put(key.substring(CONFIG_PREFIX.length()), properties.getProperty(key));
            }
        }
        return new Identity(new TopicPartition(properties.getProperty("topic"),
                Integer.parseInt(properties.getProperty("partition"))), overrides);
    }

    static void write(Path smDir, Identity identity) throws IOException {
        Files.createDirectories(smDir);
        Properties properties = new Properties();
        properties.setProperty("topic", identity.partition().topic());
        properties.setProperty("partition", Integer.toString(identity.partition().partition()));
        identity.overrides().forEach((k, v) -> properties.setProperty(CONFIG_PREFIX + k, v));
        Path tmp = smDir.resolve(FILE + ".tmp");
        try (Writer writer = Files.newBufferedWriter(tmp, StandardCharsets.ISO_8859_1)) {
            properties.store(writer, "Tidemark partition of this Raft group; see PartitionIdentityStore");
        }
        Files.move(tmp, smDir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
