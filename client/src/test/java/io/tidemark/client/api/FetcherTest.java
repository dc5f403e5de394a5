package io.tidemark.client.api;

import com.google.protobuf.ByteString;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.v1.AbortedTransaction;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchResponse;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Records of a fetch answer: read in place from the answer's bytes, wherever they start in its buffer. */
class FetcherTest {
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final long SEND_MS = 1_700_000_000_000L;

    private final Fetcher fetcher = new Fetcher(null, 1 << 20, 1 << 20, ConsumerConfig.IsolationLevel.READ_UNCOMMITTED);
    private final Fetcher committed = new Fetcher(null, 1 << 20, 1 << 20, ConsumerConfig.IsolationLevel.READ_COMMITTED);

    /** A stored batch: the values at offsets from {@code baseOffset}, stamped with ReceiveTime {@code SEND_MS + 5}. */
    private static byte[] stored(long baseOffset, String... values) {
        return stored(new RecordBatchBuilder(), baseOffset, values);
    }

    /** A stored batch of producer {@code producerId}'s transaction. */
    private static byte[] transactional(long producerId, long baseOffset, String... values) {
        return stored(new RecordBatchBuilder().producer(producerId, (short) 0, 0).transactional(), baseOffset, values);
    }

    private static byte[] stored(RecordBatchBuilder builder, long baseOffset, String... values) {
        for (String value : values) {
            builder.append(SEND_MS, null, value.getBytes(StandardCharsets.UTF_8));
        }
        return stamped(builder.build(), baseOffset);
    }

    private static byte[] marker(long producerId, long offset, boolean commit) {
        return stamped(TransactionMarker.build(producerId, (short) 0, commit, 0, SEND_MS), offset);
    }

    private static byte[] stamped(ByteBuffer batch, long baseOffset) {
        RecordBatchFormat.stamp(new CRC32C(), batch, 0, baseOffset, SEND_MS + 5);
        byte[] bytes = new byte[batch.remaining()];
        batch.get(bytes);
        return bytes;
    }

    /** The batches as a view into a larger buffer, as a parser that aliases its input hands them over. */
    private static FetchResponse answer(byte[]... batches) {
        ByteString joined = ByteString.EMPTY;
        for (byte[] batch : batches) {
            joined = joined.concat(ByteString.copyFrom(batch));
        }
        byte[] buffer = new byte[3 + joined.size() + 1];
        joined.copyTo(buffer, 3);
        return FetchResponse.newBuilder().setBatches(ByteString.copyFrom(buffer).substring(3, 3 + joined.size()))
                .build();
    }

    private static List<String> values(List<ConsumerRecord> records) {
        return records.stream().map(r -> r.offset() + "=" + new String(r.value(), StandardCharsets.UTF_8)).toList();
    }

    @Test
    void readsTheRecordsAtOrAfterTheOffsetFromBatchesThatDoNotStartTheirBuffer() {
        Fetcher.Fetched fetched = fetcher.records(T0, 11, answer(stored(10, "a", "b"), stored(12, "c")));
        List<ConsumerRecord> records = fetched.records();
        assertEquals(List.of("11=b", "12=c"), values(records));
        assertEquals(13, fetched.nextOffset());
        assertEquals(SEND_MS + 5, records.get(0).receiveTimeMs());
        assertEquals(SEND_MS, records.get(0).sendTimeMs());
    }

    @Test
    void aDamagedBatchInTheAnswerIsRefusedNamingThePartitionAndOffset() {
        byte[] damaged = stored(12, "c");
        damaged[damaged.length - 1] ^= 1;
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> fetcher.records(T0, 10, answer(stored(10, "a", "b"), damaged)));
        assertEquals(ErrorCode.CORRUPT_BATCH, e.code());
        assertTrue(e.getMessage().startsWith("fetch of t-0 at offset 10: "), e.getMessage());
    }

    @Test
    void markersAreNeverRecordsAndAbortedTransactionsAreSkippedWhenReadCommitted() {
        FetchResponse response = answer(transactional(7, 0, "a7", "b7"), transactional(8, 2, "a8"), stored(3, "x"),
                marker(7, 4, false), transactional(8, 5, "b8"), marker(8, 6, true))
                .toBuilder().addAbortedTransactions(AbortedTransaction.newBuilder().setProducerId(7).setFirstOffset(0)
                        .setLastOffset(4)).build();
        assertEquals(List.of("2=a8", "3=x", "5=b8"), values(committed.records(T0, 0, response).records()));
        assertEquals(List.of("0=a7", "1=b7", "2=a8", "3=x", "5=b8"),
                values(fetcher.records(T0, 0, response).records()), "read_uncommitted reads them all but markers");
        Fetcher.Fetched onlyMarker = committed.records(T0, 6, answer(marker(8, 6, true)));
        assertEquals(List.of(), onlyMarker.records());
        assertEquals(7, onlyMarker.nextOffset(), "the position passes over a marker");
    }
}
