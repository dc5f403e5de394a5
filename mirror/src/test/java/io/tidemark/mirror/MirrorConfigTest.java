package io.tidemark.mirror;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class MirrorConfigTest {
    private static String refusal(Runnable build) {
        return assertThrows(IllegalArgumentException.class, build::run).getMessage();
    }

    @Test
    void defaultsAndTargetTopicNames() {
        MirrorConfig config = MirrorConfig.of("a:1", "A", "b:1", Optional.of("B"), ".*", "g.*", "A.");
        assertEquals(5_000, config.checkpointIntervalMs());
        assertEquals("A.orders", config.targetTopic("orders"));
        assertEquals(true, config.groups().matcher("g1").matches());
        assertEquals(0, config.maxBytesPerSecond(), "no rate limit");
        assertEquals(1024, config.withMaxBytesPerSecond(1024).maxBytesPerSecond());
        assertEquals(Optional.empty(), MirrorConfig.of("a:1", "A", "b:1", Optional.empty(), ".*", ".*", "")
                .targetName(), "the target's own name is taken");
    }

    @Test
    void badValuesAreNamed() {
        assertEquals("the source and target names are both 'A'; a mirror copies between two clusters with different "
                + "names", refusal(() -> MirrorConfig.of("a:1", "A", "b:1", Optional.of("A"), ".*", ".*", "")));
        assertEquals("cluster name 'A A' is not allowed: use 1 to 64 characters from a-z A-Z 0-9 . _ -",
                refusal(() -> MirrorConfig.of("a:1", "A A", "b:1", Optional.empty(), ".*", ".*", "")));
        assertEquals("cluster name 'B,C' is not allowed: use 1 to 64 characters from a-z A-Z 0-9 . _ -",
                refusal(() -> MirrorConfig.of("a:1", "A", "b:1", Optional.of("B,C"), ".*", ".*", "")));
        assertEquals("--topics '(' is not a regular expression: Unclosed group",
                refusal(() -> MirrorConfig.of("a:1", "A", "b:1", Optional.of("B"), "(", ".*", "")));
        assertEquals("--topic-prefix '__' is not allowed: use characters from a-z A-Z 0-9 . _ -, not starting with "
                + "'__'", refusal(() -> MirrorConfig.of("a:1", "A", "b:1", Optional.of("B"), ".*", ".*", "__")));
        assertEquals("checkpoint interval 0 ms is not allowed: 10 ms to 1 day", refusal(() -> MirrorConfig.of("a:1",
                "A", "b:1", Optional.of("B"), ".*", ".*", "").withIntervals(0, 1000, 1000)));
        assertEquals("--source is required: HOST:PORT,... of the cluster's brokers",
                refusal(() -> MirrorConfig.of(" ", "A", "b:1", Optional.of("B"), ".*", ".*", "")));
        assertEquals("--max-bytes-per-second 1023 is not allowed: 0 (no limit) or at least 1024", refusal(() ->
                MirrorConfig.of("a:1", "A", "b:1", Optional.of("B"), ".*", ".*", "").withMaxBytesPerSecond(1023)));
        for (String topic : List.of("", "__dead", "dead letters", "d".repeat(250))) {
            assertEquals("--dead-letter-topic '" + topic + "' is not allowed: use 1 to 249 characters from a-z A-Z 0-9 "
                    + ". _ -, not starting with '__'", refusal(() -> MirrorConfig.of("a:1", "A", "b:1",
                    Optional.of("B"), ".*", ".*", "").withDeadLetterTopic(Optional.of(topic))));
        }
    }

    @Test
    void aDeadLetterTopicIsOptional() {
        MirrorConfig config = MirrorConfig.of("a:1", "A", "b:1", Optional.of("B"), ".*", ".*", "");
        assertEquals(Optional.empty(), config.deadLetterTopic(), "none: a refused record stops its partition");
        assertEquals(Optional.of("A.dead-letters"), config.withDeadLetterTopic(Optional.of("A.dead-letters"))
                .withIntervals(100, 100, 100).withMaxBytesPerSecond(2048).deadLetterTopic());
    }
}
