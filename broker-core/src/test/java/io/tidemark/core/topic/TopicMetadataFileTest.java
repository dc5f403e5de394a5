package io.tidemark.core.topic;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden text of {@code topic.properties}, and the version-1 file of a topic from before topic ids. */
class TopicMetadataFileTest {
    private static final UUID ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");
    private static final UUID NEW_ID = UUID.fromString("5a000000-0000-4000-8000-000000000001");

    @TempDir
    Path dir;

    private String text() throws IOException {
        return Files.readString(dir.resolve(TopicMetadataFile.NAME), StandardCharsets.ISO_8859_1);
    }

    @Test
    void writesTheGoldenTextAndReadsItBack() throws IOException {
        TopicMetadataFile.Contents contents = new TopicMetadataFile.Contents(ID, 6, 1,
                Map.of("segment.bytes", "1048576", "retention.ms", "86400000"));
        TopicMetadataFile.write(dir, contents);
        assertEquals("""
                # Tidemark topic; see TopicMetadataFile
                version=2
                id=0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95
                partitions=6
                replication.factor=1
                config.retention.ms=86400000
                config.segment.bytes=1048576
                """, text());
        assertEquals(contents, TopicMetadataFile.load(dir, () -> NEW_ID));
    }

    @Test
    void aFileWrittenBeforeTopicIdsGetsANewIdWrittenBack() throws IOException {
        Files.writeString(dir.resolve(TopicMetadataFile.NAME), """
                #Tidemark topic; see TopicMetadataFile
                #Mon Nov 30 07:36:37 UTC 2026
                partitions=2
                version=1
                replication.factor=1
                config.retention.ms=86400000
                """, StandardCharsets.ISO_8859_1);
        TopicMetadataFile.Contents migrated = new TopicMetadataFile.Contents(NEW_ID, 2, 1,
                Map.of("retention.ms", "86400000"));
        assertEquals(migrated, TopicMetadataFile.load(dir, () -> NEW_ID));
        assertEquals("""
                # Tidemark topic; see TopicMetadataFile
                version=2
                id=5a000000-0000-4000-8000-000000000001
                partitions=2
                replication.factor=1
                config.retention.ms=86400000
                """, text());
        assertEquals(migrated, TopicMetadataFile.load(dir, () -> {
            throw new AssertionError("the id was written back: no new one is taken");
        }));
    }

    @Test
    void anUnknownVersionAndAVersion2FileWithoutAValidIdAreRefused() throws IOException {
        Path file = dir.resolve(TopicMetadataFile.NAME);
        Files.writeString(file, "version=3\npartitions=1\nreplication.factor=1\n");
        assertEquals(file + " has version 3; this broker reads versions 1 and 2",
                assertThrows(IOException.class, () -> TopicMetadataFile.load(dir, () -> NEW_ID)).getMessage());
        Files.writeString(file, "version=2\nid=7\npartitions=1\nreplication.factor=1\n");
        assertEquals(file + " has id '7', which is not a UUID (like 0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95); "
                + "version 2 needs one", assertThrows(IOException.class,
                () -> TopicMetadataFile.load(dir, () -> NEW_ID)).getMessage());
        Files.writeString(file, "version=2\npartitions=1\nreplication.factor=1\n");
        assertEquals(file + " has no id; version 2 needs one (a UUID like 0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95)",
                assertThrows(IOException.class, () -> TopicMetadataFile.load(dir, () -> NEW_ID)).getMessage());
    }
}
