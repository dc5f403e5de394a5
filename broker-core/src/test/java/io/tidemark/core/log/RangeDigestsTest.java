package io.tidemark.core.log;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.proto.record.RecordBatchBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.bytes;
import static io.tidemark.core.log.LogTestUtils.config;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RangeDigestsTest {
    @TempDir
    Path dir;

    /** A log of {@code count} one-record batches, key k(i mod 3), value v(i), the one at {@code odd} valued "odd". */
    private PartitionLog log(String name, int count, int odd, String... config) throws Exception {
        PartitionLog log = PartitionLog.open(dir.resolve(name), config(config), BASE_MS);
        for (int i = 0; i < count; i++) {
            log.append(new RecordBatchBuilder().append(BASE_MS, bytes("k" + i % 3), bytes(i == odd ? "odd" : "v" + i))
                    .build(), BASE_MS + i);
        }
        return log;
    }

    /** Each range as {@code [from, to) records digest compacted}. */
    private static List<String> shown(List<RangeDigests.RangeDigest> digests) {
        return digests.stream().map(d -> "[" + d.fromOffset() + ", " + d.toOffset() + ") " + d.records() + " "
                + HexFormat.of().formatHex(d.digest()).substring(0, 8) + (d.compacted() ? " compacted" : "")).toList();
    }

    @Test
    void logsHoldingTheSameRecordsGiveTheSameDigestsAndARecordThatDiffersChangesOnlyItsRange() throws Exception {
        try (PartitionLog a = log("a", 25, -1); PartitionLog b = log("b", 25, -1); PartitionLog c = log("c", 25, 13)) {
            List<String> digestsA = shown(RangeDigests.digest(a, 0, 25, 10));
            assertEquals(List.of("[0, 10) 10", "[10, 20) 10", "[20, 25) 5"), digestsA.stream()
                    .map(s -> s.substring(0, s.lastIndexOf(' '))).toList());
            assertEquals(digestsA, shown(RangeDigests.digest(b, 0, 25, 10)));
            List<String> digestsC = shown(RangeDigests.digest(c, 0, 25, 10));
            assertEquals(digestsA.get(0), digestsC.get(0));
            assertNotEquals(digestsA.get(1), digestsC.get(1), "offset 13 differs");
            assertEquals(digestsA.get(2), digestsC.get(2));
        }
    }

    @Test
    void rangesAreAlignedOnTheirLengthAndTakenWithinTheLog() throws Exception {
        try (PartitionLog a = log("a", 25, -1)) {
            List<String> all = shown(RangeDigests.digest(a, 0, 25, 10));
            assertEquals(all.subList(1, 3), shown(RangeDigests.digest(a, 10, 1_000, 10)),
                    "a log starting at 10 digests the same ranges from there; the end is the log's");
            assertEquals(List.of(), RangeDigests.digest(a, 5, 5, 10), "nothing asked");
            assertEquals("[7, 10) 3", shown(RangeDigests.digest(a, 7, 25, 10)).get(0).substring(0, 9),
                    "a start inside a range digests what is left of it");
            assertThrows(IllegalArgumentException.class, () -> RangeDigests.digest(a, 0, 25, 0));
        }
    }

    @Test
    void aRangeOfACompactedSegmentSaysSoAndHoldsOnlyWhatCompactionKept() throws Exception {
        try (PartitionLog a = log("a", 12, -1, "cleanup.policy", "compact", "segment.bytes", "300")) {
            new LogCompactor(-1, new MetricRegistry()).compact(a, BASE_MS, a.logEndOffset());
            List<RangeDigests.RangeDigest> digests = RangeDigests.digest(a, 0, 12, 6);
            assertTrue(digests.get(0).compacted(), shown(digests).toString());
            assertTrue(digests.get(0).records() < 6, "superseded records went: " + shown(digests));
        }
    }
}
