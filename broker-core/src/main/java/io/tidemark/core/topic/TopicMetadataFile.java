package io.tidemark.core.topic;

import io.tidemark.core.config.TopicConfig;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The {@code topic.properties} file of a topic directory ({@code <data.dir>/topics/<name>/}): what a topic is,
 * so the broker can reopen it. A Java properties file (ISO 8859-1 with escapes, {@link Properties#load}):
 * <pre>
 * version=1
 * partitions=6
 * replication.factor=1
 * config.retention.ms=86400000      one line per config override; keys of docs/configuration.md
 * </pre>
 * Written to {@code topic.properties.tmp}, fsynced and renamed over the old file, so a crash leaves the old
 * or the new one. Only overrides are stored: a topic follows later changes of the broker's defaults.
 */
final class TopicMetadataFile {
    static final String NAME = "topic.properties";
    private static final String CONFIG_PREFIX = "config.";

    private TopicMetadataFile() {
    }

    record Contents(int partitions, int replicationFactor, Map<String, String> overrides) {
        Contents {
            overrides = Map.copyOf(overrides);
        }
    }

    static void write(Path topicDir, Contents contents) throws IOException {
        Properties properties = new Properties();
        properties.setProperty("version", "1");
        properties.setProperty("partitions", Integer.toString(contents.partitions()));
        properties.setProperty("replication.factor", Integer.toString(contents.replicationFactor()));
        contents.overrides().forEach((k, v) -> properties.setProperty(CONFIG_PREFIX + k, v));
        Path tmp = topicDir.resolve(NAME + ".tmp");
        try (Writer writer = Files.newBufferedWriter(tmp, StandardCharsets.ISO_8859_1)) {
            properties.store(writer, "Tidemark topic; see TopicMetadataFile");
        }
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            channel.force(true);
        }
        Files.move(tmp, topicDir.resolve(NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    static Contents read(Path topicDir) throws IOException {
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(topicDir.resolve(NAME), StandardCharsets.ISO_8859_1)) {
            properties.load(reader);
        }
        if (!"1".equals(properties.getProperty("version"))) {
            throw new IOException(topicDir.resolve(NAME) + " has version " + properties.getProperty("version")
                    + "; this broker reads version 1");
        }
        Map<String, String> overrides = new TreeMap<>();
        for (String key : properties.stringPropertyNames()) {
            if (key.startsWith(CONFIG_PREFIX)) {
                overrides.put(key.substring(CONFIG_PREFIX.length()), properties.getProperty(key));
            }
        }
        TopicConfig.parse(overrides);
        return new Contents(Integer.parseInt(properties.getProperty("partitions")),
                Integer.parseInt(properties.getProperty("replication.factor")), overrides);
    }
}
