package io.tidemark.proto.record;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class MirroredBatchScannerTest {
    private static final OriginPartition ORIGIN = new OriginPartition("A", "orders", 3);

    private static ByteBuffer batch(List<List<Header>> headers) {
        RecordBatchBuilder builder = new RecordBatchBuilder().mirrored();
        headers.forEach(h -> builder.append(1, null, new byte[] {1}, h));
        return builder.build();
    }

    private static List<Header> copied(OriginPartition origin, long offset) {
        return ProvenanceHeaders.forCopy(List.of(new Header("user", new byte[] {1})), origin, offset, 10);
    }

    private static String refusal(ByteBuffer batch) {
        TidemarkException e = assertThrows(TidemarkException.class, () -> new MirroredBatchScanner().scan(batch, 0));
        assertEquals(ErrorCode.CORRUPT_BATCH, e.code());
        return e.getMessage();
    }

    @Test
    void originOffsetsMayHaveGapsButMustIncrease() {
        assertEquals(new MirroredBatchScanner.OriginRange(ORIGIN, 5, 9),
                new MirroredBatchScanner().scan(batch(List.of(copied(ORIGIN, 5), copied(ORIGIN, 6), copied(ORIGIN, 9))), 0));
        assertEquals("corrupt mirrored batch: record 1 of 2 has origin offset 5, not above the previous record's 5; "
                + "origin offsets must increase in a mirrored batch",
                refusal(batch(List.of(copied(ORIGIN, 5), copied(ORIGIN, 5)))));
    }

    @Test
    void everyRecordNamesTheSameOriginPartition() {
        for (OriginPartition other : List.of(new OriginPartition("C", "orders", 3),
                new OriginPartition("A", "order", 3), new OriginPartition("A", "orders", 4))) {
            assertEquals("corrupt mirrored batch: record 1 of 2 names another origin partition than record 0 "
                    + "(A:orders-3); a mirrored batch copies one origin partition",
                    refusal(batch(List.of(copied(ORIGIN, 5), copied(other, 6)))));
        }
    }

    @Test
    void everyRecordCarriesProvenance() {
        assertEquals("corrupt mirrored batch: record 1 of 2 lacks provenance headers: a mirrored batch's records "
                + "carry tidemark.origin.cluster, tidemark.origin.topic, tidemark.origin.partition (4 bytes) and "
                + "tidemark.origin.offset (8 bytes, not negative)",
                refusal(batch(List.of(copied(ORIGIN, 5), List.of(new Header("user", new byte[0]))))));
    }

    @Test
    void aBadClusterNameIsRefused() {
        List<Header> headers = new java.util.ArrayList<>(copied(ORIGIN, 5));
        headers.set(1, new Header(ProvenanceHeaders.ORIGIN_CLUSTER, "a,b".getBytes()));
        assertEquals("corrupt mirrored batch: record 0 of 1: cluster name 'a,b' is not allowed: use 1 to 64 "
                + "characters from a-z A-Z 0-9 . _ -", refusal(batch(List.of(headers))));
    }
}
