package io.tidemark.core.topic;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.DurableFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The {@code topic.properties} file of a topic directory ({@code <data.dir>/topics/<name>/}): what a topic is,
 * so the broker can reopen it. A Java properties file (ISO 8859-1 with escapes, {@link Properties#load}), written
 * in this order:
 * <pre>
 * # Tidemark topic; see TopicMetadataFile
 * version=2
 * id=0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95   the topic's id (UUID text), given at random when it was created
 * partitions=6
 * replication.factor=1
 * config.retention.ms=86400000             one line per config override, sorted by key; keys of docs/configuration.md
 * </pre>
 * Version 1 is the same without {@code id}: it was written before topics had ids. {@link #load} gives such a topic a
 * new id and writes the file again as version 2, so the id stays from then on; a version-2 file without a valid id
 * is refused. Written to {@code topic.properties.tmp}, fsynced, renamed over the old file and the directory fsynced
 * ({@link DurableFiles#writeAtomically}), so a crash leaves the old or the new one. Only overrides are stored: a topic follows later changes of the broker's defaults. The lines
 * are written in a fixed order and without the date {@link Properties#store} adds, so equal contents give equal
 * bytes.
 *
 * <p>Stateless; the {@link TopicRegistry} serializes writes of a topic's file.
 */
final class TopicMetadataFile {
    private static final Logger LOG = LoggerFactory.getLogger(TopicMetadataFile.class);
    static final String NAME = "topic.properties";
    private static final String COMMENT = "# Tidemark topic; see TopicMetadataFile";
    private static final String VERSION = "2";
    /** The version before topic ids, read to give its topic one. */
    private static final String VERSION_WITHOUT_ID = "1";
    private static final String CONFIG_PREFIX = "config.";
    private static final String ID_EXAMPLE = "0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95";

    private TopicMetadataFile() {
    }

    record Contents(UUID id, int partitions, int replicationFactor, Map<String, String> overrides) {
        Contents {
            overrides = Map.copyOf(overrides);
        }
    }

    static void write(Path topicDir, Contents contents) throws IOException {
        StringBuilder text = new StringBuilder(COMMENT).append('\n');
        line(text, "version", VERSION);
        line(text, "id", contents.id().toString());
        line(text, "partitions", Integer.toString(contents.partitions()));
        line(text, "replication.factor", Integer.toString(contents.replicationFactor()));
        new TreeMap<>(contents.overrides()).forEach((k, v) -> line(text, CONFIG_PREFIX + k, v));
        DurableFiles.writeAtomically(topicDir.resolve(NAME), text.toString()
                .getBytes(StandardCharsets.ISO_8859_1));
    }

    /** Appends {@code key=value} escaped as {@link Properties#store} escapes it. */
    private static void line(StringBuilder text, String key, String value) {
        Properties one = new Properties();
        one.setProperty(key, value);
        StringWriter escaped = new StringWriter();
        try {
            one.store(escaped, null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        escaped.toString().lines().filter(l -> !l.startsWith("#")).forEach(l -> text.append(l).append('\n'));
    }

    /**
     * Reads a topic's file; a version-1 file (no id) gets {@code newId.get()} and is written again as version 2.
     *
     * @throws IOException when the file is missing, of an unknown version, or its id is not a UUID
     */
    static Contents load(Path topicDir, Supplier<UUID> newId) throws IOException {
        Path file = topicDir.resolve(NAME);
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1)) {
            properties.load(reader);
        }
        String version = properties.getProperty("version");
        if (!VERSION.equals(version) && !VERSION_WITHOUT_ID.equals(version)) {
            throw new IOException(file + " has version " + version + "; this broker reads versions "
                    + VERSION_WITHOUT_ID + " and " + VERSION);
        }
        Map<String, String> overrides = new TreeMap<>();
        for (String key : properties.stringPropertyNames()) {
            if (key.startsWith(CONFIG_PREFIX)) {
                overrides.put(key.substring(CONFIG_PREFIX.length()), properties.getProperty(key));
            }
        }
        TopicConfig.parse(overrides);
        int partitions = Integer.parseInt(properties.getProperty("partitions"));
        int replicationFactor = Integer.parseInt(properties.getProperty("replication.factor"));
        if (VERSION_WITHOUT_ID.equals(version)) {
            Contents contents = new Contents(newId.get(), partitions, replicationFactor, overrides);
            write(topicDir, contents);
            LOG.info("{} was written before topics had ids: the topic now has id {}", file, contents.id());
            return contents;
        }
        return new Contents(id(file, properties.getProperty("id")), partitions, replicationFactor, overrides);
    }

    private static UUID id(Path file, String text) throws IOException {
        if (text == null) {
            throw new IOException(file + " has no id; version " + VERSION + " needs one (a UUID like " + ID_EXAMPLE
                    + ")");
        }
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + " has id '" + text + "', which is not a UUID (like " + ID_EXAMPLE
                    + "); version " + VERSION + " needs one", e);
        }
    }
}
