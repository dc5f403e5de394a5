package io.tidemark.core.topic;

import io.tidemark.core.ManualClock;
import io.tidemark.core.partition.LocalPartition;
import io.tidemark.core.partition.Partition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The single-node registry gives every topic an id: at creation, and at open for a topic from before ids. */
class TopicRegistryTest {
    private static final long BASE_MS = 1_700_000_000_000L;

    @TempDir
    Path dataDir;
    private final ManualClock clock = new ManualClock(BASE_MS);
    private final AtomicLong idsTaken = new AtomicLong();
    private TopicRegistry registry;

    /** Ids 00000000-0000-0000-0000-00000000000N, N counting up from 1. */
    private UUID nextId() {
        return new UUID(0, idsTaken.incrementAndGet());
    }

    private TopicRegistry open() throws IOException {
        registry = TopicRegistry.open(dataDir, Map.of(), (id, dir, config) -> LocalPartition.open(id, 1, dir, config,
                clock), new TopicRegistry.Limits(10, 1), new ReplicaListener() {
                    @Override
                    public void holding(Partition partition) {
                    }

                    @Override
                    public void released(Partition partition) {
                    }
                }, this::nextId);
        return registry;
    }

    @AfterEach
    void close() throws IOException {
        registry.close();
    }

    @Test
    void aTopicKeepsItsIdThroughAlterAndRestartAndANewTopicOfTheSameNameGetsAnother() throws IOException {
        open();
        assertEquals(new UUID(0, 1), registry.create("orders", 2, 0, Map.of()).id());
        assertEquals(new UUID(0, 2), registry.create("audit", 1, 0, Map.of()).id());
        assertEquals(new UUID(0, 1), registry.alterConfig("orders", Map.of("retention.ms", "1000"), List.of()).id());
        registry.close();

        open();
        assertEquals(List.of(new UUID(0, 2), new UUID(0, 1)), registry.topics().stream().map(Topic::id).toList());
        assertEquals(2, idsTaken.get(), "reopening takes no new id");
        registry.delete("orders");
        assertEquals(new UUID(0, 3), registry.create("orders", 1, 0, Map.of()).id());
        assertTrue(Files.readString(dataDir.resolve("topics/orders/topic.properties"))
                .contains("id=00000000-0000-0000-0000-000000000003\n"));
    }

    @Test
    void aTopicFromBeforeTopicIdsGetsOneWhenOpenedAndKeepsIt() throws IOException {
        open();
        registry.create("old", 1, 0, Map.of());
        registry.close();
        Path file = dataDir.resolve("topics/old/topic.properties");
        Files.writeString(file, "version=1\npartitions=1\nreplication.factor=1\n", StandardCharsets.ISO_8859_1);

        open();
        UUID given = registry.topic("old").id();
        assertEquals(new UUID(0, 2), given);
        assertTrue(Files.readString(file).contains("version=2\nid=00000000-0000-0000-0000-000000000002\n"),
                "written back");
        registry.close();
        open();
        assertEquals(given, registry.topic("old").id());
        assertEquals(2, idsTaken.get());
    }
}
