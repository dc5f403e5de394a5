package io.tidemark.client.api;

import com.google.protobuf.ByteString;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ListOffsetsRequest;
import io.tidemark.proto.v1.ListOffsetsResponse;
import io.tidemark.proto.v1.ProduceResponse;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * A partition log in memory for the fake broker: validates a batch as the real broker does (SendTime at most
 * one hour after ReceiveTime), stamps its base offset and ReceiveTime {@code max(now, last)}, keeps it, serves
 * fetches of whole batches and answers ListOffsets. Thread-safe: every method is synchronized.
 */
final class FakeLog {
    static final long SEND_TIME_AFTER_MAX_MS = 3_600_000;

    private final List<ByteBuffer> batches = new ArrayList<>();
    private final RecordBatchValidator validator = new RecordBatchValidator();
    private long endOffset;
    private long lastReceiveTimeMs = -1;

    synchronized ProduceResponse append(ByteBuffer source, long nowMs) {
        ByteBuffer batch = ByteBuffer.allocate(source.remaining()).put(source.duplicate()).flip();
        long receiveTimeMs = Math.max(nowMs, lastReceiveTimeMs);
        int size = validator.validate(batch, 0, batch.limit(),
                SendTimeWindow.around(receiveTimeMs, SEND_TIME_AFTER_MAX_MS, -1));
        if (size != batch.limit()) {
            throw new TidemarkException(ErrorCode.CORRUPT_BATCH, "trailing bytes after the batch");
        }
        long base = endOffset;
        RecordBatchFormat.stamp(new CRC32C(), batch, 0, base, receiveTimeMs);
        batches.add(batch);
        endOffset = RecordBatchFormat.lastOffset(batch, 0) + 1;
        lastReceiveTimeMs = receiveTimeMs;
        return ProduceResponse.newBuilder().setBaseOffset(base).setLastOffset(endOffset - 1)
                .setReceiveTimeMs(receiveTimeMs).setLogStartOffset(0).build();
    }

    synchronized long endOffset() {
        return endOffset;
    }

    /** Whole batches from the one holding {@code offset}, up to {@code maxBytes} but at least one. */
    synchronized ByteString read(long offset, int maxBytes) {
        if (offset < 0 || offset > endOffset) {
            throw new TidemarkException(ErrorCode.OFFSET_OUT_OF_RANGE, "offset " + offset + " is outside 0.."
                    + endOffset);
        }
        ByteString.Output out = ByteString.newOutput();
        for (ByteBuffer batch : batches) {
            if (RecordBatchFormat.lastOffset(batch, 0) < offset) {
                continue;
            }
            if (out.size() > 0 && out.size() + batch.limit() > maxBytes) {
                break;
            }
            out.write(batch.array(), 0, batch.limit());
        }
        return out.toByteString();
    }

    synchronized List<Record> records() {
        List<Record> records = new ArrayList<>();
        for (ByteBuffer batch : batches) {
            records.addAll(new RecordBatchReader().records(batch.duplicate()));
        }
        return records;
    }

    synchronized ListOffsetsResponse listOffsets(ListOffsetsRequest request) {
        ListOffsetsResponse.Builder answer = ListOffsetsResponse.newBuilder().setLogStartOffset(0)
                .setLogEndOffset(endOffset).setOffset(endOffset);
        List<Record> records = records();
        Record match = switch (request.getSpecCase()) {
            case EARLIEST -> records.isEmpty() ? null : records.get(0);
            case LATEST -> null;
            case RECEIVE_TIME_MS -> records.stream().filter(r -> r.receiveTimeMs() >= request.getReceiveTimeMs())
                    .findFirst().orElse(null);
            case SEND_TIME_MS -> records.stream().filter(r -> r.sendTimeMs() >= request.getSendTimeMs())
                    .findFirst().orElse(null);
            default -> throw new TidemarkException(ErrorCode.INVALID_REQUEST, "no spec");
        };
        if (match != null) {
            answer.setFound(true).setOffset(match.offset()).setReceiveTimeMs(match.receiveTimeMs())
                    .setSendTimeMs(match.sendTimeMs());
        }
        return answer.build();
    }
}
