package io.tidemark.core.config;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TopicConfigTest {
    @Test
    void defaultsAreKafkasWhereKafkaHasOne() {
        TopicConfig config = TopicConfig.defaults();
        assertEquals(1 << 30, config.segmentBytes());
        assertEquals(7L * 24 * 3600 * 1000, config.segmentMs());
        assertEquals(4096, config.indexIntervalBytes());
        assertEquals(10 << 20, config.segmentIndexBytes());
        assertEquals(7L * 24 * 3600 * 1000, config.retentionMs());
        assertEquals(-1, config.retentionBytes());
        assertEquals(-1, config.flushMessages());
        assertEquals(-1, config.flushMs());
        assertEquals(3_600_000, config.sendTimeAfterMaxMs());
        assertEquals(-1, config.sendTimeBeforeMaxMs());
        assertEquals(1 << 20, config.maxBatchBytes());
        assertEquals(CleanupPolicy.DELETE, config.cleanupPolicy());
        assertEquals(24L * 3600 * 1000, config.deleteRetentionMs());
    }

    @Test
    void cleanupPolicyTakesKafkasSpellings() {
        assertEquals(CleanupPolicy.COMPACT, TopicConfig.parse(Map.of("cleanup.policy", "compact")).cleanupPolicy());
        assertEquals(CleanupPolicy.COMPACT_DELETE,
                TopicConfig.parse(Map.of("cleanup.policy", "delete, compact")).cleanupPolicy());
        TopicConfig both = TopicConfig.parse(Map.of("cleanup.policy", "compact,delete"));
        assertEquals("compact,delete", both.toMap().get("cleanup.policy"));
        assertEquals(both, TopicConfig.parse(both.toMap()));
        assertEquals("invalid value for cleanup.policy: 'compacted' is not allowed; allowed: delete, compact, or "
                + "compact,delete", invalid(Map.of("cleanup.policy", "compacted")));
        assertEquals("invalid value for cleanup.policy: 'compact,compact,x' is not allowed; allowed: delete, "
                + "compact, or compact,delete", invalid(Map.of("cleanup.policy", "compact,compact,x")));
    }

    @Test
    void parsesAndRoundTripsThroughText() {
        TopicConfig config = TopicConfig.parse(Map.of("segment.bytes", "1000", "retention.ms", " -1 "));
        assertEquals(1000, config.segmentBytes());
        assertEquals(-1, config.retentionMs());
        assertEquals(Long.MAX_VALUE, TopicConfig.limit(config.retentionMs()));
        assertEquals(config, TopicConfig.parse(config.toMap()));
        assertEquals(2000, config.with("segment.bytes", "2000").segmentBytes());
    }

    @Test
    void badValuesNameTheKeyTheValueAndWhatIsAllowed() {
        assertEquals("invalid value for segment.bytes: 'big' is not an integer; allowed: an integer in "
                + "[60, 2147483647] (bytes)", invalid(Map.of("segment.bytes", "big")));
        assertEquals("invalid value for segment.bytes: 3000000000 is not allowed; allowed: an integer in "
                + "[60, 2147483647] (bytes)", invalid(Map.of("segment.bytes", "3000000000")));
        assertEquals("invalid value for retention.ms: -2 is not allowed; allowed: an integer >= 0, or -1 for "
                + "unlimited (ms)", invalid(Map.of("retention.ms", "-2")));
        assertEquals("invalid value for segment.ms: -1 is not allowed; allowed: an integer >= 1 (ms)",
                invalid(Map.of("segment.ms", "-1")));
        assertEquals("unknown topic config key 'segment.byte'; known keys: cleanup.policy, delete.retention.ms, "
                + "flush.messages, flush.ms, index.interval.bytes, max.batch.bytes, retention.bytes, retention.ms, "
                + "segment.bytes, segment.index.bytes, segment.ms, send.time.after.max.ms, send.time.before.max.ms",
                invalid(Map.of("segment.byte", "1")));
    }

    @Test
    void valuesSetInCodeAreCheckedToo() {
        TidemarkException e = assertThrows(TidemarkException.class, () -> new TopicConfig(10, 1, 12, 0, 0, 0, 1, 0,
                0, 0, 60, CleanupPolicy.DELETE, 0));
        assertEquals("invalid value for segment.bytes: 10 is not allowed; allowed: an integer in [60, 2147483647] "
                + "(bytes)", e.getMessage());
    }

    /** docs/configuration.md holds the table generated from the declarations; regenerate it when they change. */
    @Test
    void documentationTableIsGeneratedFromTheDeclarations() throws Exception {
        Path docs = Path.of(System.getProperty("tidemark.docs.dir", "../docs"), "configuration.md");
        String table = ConfigDocs.markdownTable(TopicConfig.KEYS);
        String text = Files.readString(docs);
        assertTrue(text.contains(table), docs + " must contain this table (copy it in):\n" + table);
    }

    private static String invalid(Map<String, String> values) {
        TidemarkException e = assertThrows(TidemarkException.class, () -> TopicConfig.parse(values));
        assertEquals(ErrorCode.INVALID_CONFIG, e.code());
        return e.getMessage();
    }
}
