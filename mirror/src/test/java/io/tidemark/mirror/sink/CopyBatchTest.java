package io.tidemark.mirror.sink;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CopyBatchTest {
    private static final UUID T_ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");
    private static final OriginPartition A_T_0 = new OriginPartition("A", "t", T_ID, 0);

    private static ConsumerRecord record(long offset, List<Header> headers, int valueBytes) {
        return new ConsumerRecord("t", 0, offset, new byte[] {(byte) offset}, new byte[valueBytes], headers,
                1_000 + offset, 2_000 + offset);
    }

    @Test
    void copiesKeepKeyValueHeadersAndSendTimeAndAddProvenance() {
        ArrayDeque<ConsumerRecord> pending = new ArrayDeque<>(List.of(
                record(7, List.of(new Header("h", new byte[] {1})), 3), record(8, List.of(), 0)));
        CopyBatch batch = CopyBatch.take(pending, A_T_0, "B", 1 << 20, Integer.MAX_VALUE);
        assertTrue(pending.isEmpty());
        assertArrayEquals(new long[] {7, 8}, batch.originOffsets());
        ByteBuffer built = batch.builder().build();
        assertTrue(RecordBatchFormat.mirrored(built, 0));
        List<Record> copies = new RecordBatchReader().records(built);
        assertEquals(1_007, copies.get(0).sendTimeMs());
        assertArrayEquals(new byte[] {7}, copies.get(0).key());
        assertArrayEquals(new byte[3], copies.get(0).value());
        assertEquals(new Header("h", new byte[] {1}), copies.get(0).headers().get(0));
        assertEquals(new ProvenanceHeaders.Provenance(A_T_0, 8, 2_008, List.of("A")),
                ProvenanceHeaders.read(copies.get(1).headers()).orElseThrow());
    }

    @Test
    void recordsThatCrossedTheTargetAreDropped() {
        List<Header> fromB = ProvenanceHeaders.forCopy(List.of(), new OriginPartition("B", "t", T_ID, 0), 3, 5);
        ArrayDeque<ConsumerRecord> pending = new ArrayDeque<>(List.of(record(1, fromB, 1), record(2, List.of(), 1),
                record(3, fromB, 1)));
        CopyBatch batch = CopyBatch.take(pending, A_T_0, "B", 1 << 20, Integer.MAX_VALUE);
        assertArrayEquals(new long[] {2}, batch.originOffsets());
        assertEquals(2, batch.skippedLoop());

        ArrayDeque<ConsumerRecord> onlyBounced = new ArrayDeque<>(List.of(record(4, fromB, 1)));
        CopyBatch none = CopyBatch.take(onlyBounced, A_T_0, "B", 1 << 20, Integer.MAX_VALUE);
        assertNull(none.builder());
        assertEquals(1, none.skippedLoop());
    }

    @Test
    void aBatchStopsAtItsByteLimitOrRecordLimitButTakesAtLeastOneRecord() {
        ArrayDeque<ConsumerRecord> pending = new ArrayDeque<>();
        for (int i = 0; i < 10; i++) {
            pending.add(record(i, List.of(), 1000));
        }
        CopyBatch first = CopyBatch.take(pending, A_T_0, "B", 4096, Integer.MAX_VALUE);
        assertEquals(3, first.records().size());
        assertTrue(first.builder().sizeInBytes() <= 4096);
        assertEquals(1, CopyBatch.take(pending, A_T_0, "B", 4096, 1).records().size());
        CopyBatch big = CopyBatch.take(new ArrayDeque<>(List.of(record(0, List.of(), 10_000))), A_T_0, "B", 4096,
                Integer.MAX_VALUE);
        assertEquals(1, big.records().size());
    }

    /** Records whose source bytes fit the limit but whose copies, provenance and all, would not: two batches. */
    @Test
    void aBatchOfSeveralRecordsStaysWithinTheLimitWithItsProvenance() {
        ArrayDeque<ConsumerRecord> pending = new ArrayDeque<>(List.of(record(0, List.of(), 1000),
                record(1, List.of(), 1000)));
        int sourceBytes = new RecordBatchBuilder().append(1_000, new byte[] {0}, new byte[1000])
                .append(1_001, new byte[] {1}, new byte[1000]).sizeInBytes();
        CopyBatch first = CopyBatch.take(pending, A_T_0, "B", sourceBytes, Integer.MAX_VALUE);
        assertEquals(1, first.records().size(), "the second record's copy would take the batch past the limit");
        assertEquals(1, pending.size());
        assertEquals(1, CopyBatch.take(pending, A_T_0, "B", sourceBytes, Integer.MAX_VALUE).records().size());
    }
}
