package io.tidemark.client.api;

import com.google.protobuf.ByteString;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
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

    private final Fetcher fetcher = new Fetcher(null, 1 << 20);

    /** A stored batch: the values at offsets from {@code baseOffset}, stamped with ReceiveTime {@code SEND_MS + 5}. */
    private static byte[] stored(long baseOffset, String... values) {
        RecordBatchBuilder builder = new RecordBatchBuilder();
        for (String value : values) {
            builder.append(SEND_MS, null, value.getBytes(StandardCharsets.UTF_8));
        }
        ByteBuffer batch = builder.build();
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
        List<ConsumerRecord> records = fetcher.records(T0, 11, answer(stored(10, "a", "b"), stored(12, "c")));
        assertEquals(List.of("11=b", "12=c"), values(records));
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
}
