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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * A partition log in memory for the fake broker: validates a batch as the real broker does (SendTime at most
 * one hour after ReceiveTime), stamps its base offset and ReceiveTime {@code max(now, last)}, keeps it, serves
 * fetches of whole batches and answers ListOffsets. Thread-safe: every method is synchronized.
 *
 * <p>Deduplicates idempotent producers' batches as the broker does. Per producer id (not -1) it keeps the epoch,
 * the last sequence stored and the answers of the producer's last {@value #DEDUP_BATCHES} batches. A batch with
 * a lower epoch is refused with INVALID_PRODUCER_EPOCH; one whose (base sequence, record count) is one of those
 * batches' is not stored again but answered as that batch was; any other must have base sequence last + 1, else
 * OUT_OF_ORDER_SEQUENCE. The first batch of a producer id the log has not seen is taken whatever its sequence.
 * A refused batch is not stored and leaves the sequence where it was.
 */
final class FakeLog {
    static final long SEND_TIME_AFTER_MAX_MS = 3_600_000;
    static final int DEDUP_BATCHES = 5;

    private final List<ByteBuffer> batches = new ArrayList<>();
    private final Map<Long, ProducerState> producers = new HashMap<>();
    private final RecordBatchValidator validator = new RecordBatchValidator();
    private long endOffset;
    private long lastReceiveTimeMs = -1;

    /** Stores a batch, or answers a duplicate as its original was answered, or throws the broker's refusal. */
    synchronized Appended append(ByteBuffer source, long nowMs) {
        ByteBuffer batch = ByteBuffer.allocate(source.remaining()).put(source.duplicate()).flip();
        ProducerState producer = producers.get(RecordBatchFormat.producerId(batch, 0));
        Optional<ProduceResponse> duplicate = producer == null ? Optional.empty() : producer.duplicateOf(batch);
        if (duplicate.isPresent()) {
            return new Appended(duplicate.get(), false);
        }
        long receiveTimeMs = Math.max(nowMs, lastReceiveTimeMs);
        int size = validator.validate(batch, 0, batch.limit(),
                SendTimeWindow.around(receiveTimeMs, SEND_TIME_AFTER_MAX_MS, -1));
        if (size != batch.limit()) {
            throw new TidemarkException(ErrorCode.CORRUPT_BATCH, "trailing bytes after the batch");
        }
        if (producer != null) {
            producer.checkSequence(batch);
        }
        long base = endOffset;
        RecordBatchFormat.stamp(new CRC32C(), batch, 0, base, receiveTimeMs);
        batches.add(batch);
        endOffset = RecordBatchFormat.lastOffset(batch, 0) + 1;
        lastReceiveTimeMs = receiveTimeMs;
        ProduceResponse response = ProduceResponse.newBuilder().setBaseOffset(base).setLastOffset(endOffset - 1)
                .setReceiveTimeMs(receiveTimeMs).setLogStartOffset(0).build();
        long producerId = RecordBatchFormat.producerId(batch, 0);
        if (producerId != RecordBatchFormat.NO_PRODUCER_ID) {
            producers.computeIfAbsent(producerId, id -> new ProducerState()).stored(batch, response);
        }
        return new Appended(response, true);
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

    /** The answer to a Produce; {@code stored} is false for a duplicate answered as its original was. */
    record Appended(ProduceResponse response, boolean stored) {
    }

    /** What the log keeps of one producer id. */
    private static final class ProducerState {
        private final ArrayDeque<StoredBatch> recent = new ArrayDeque<>();
        private short epoch;
        private int lastSequence;

        /** The answer of the stored batch this one repeats, if any; refuses an epoch older than the stored one. */
        Optional<ProduceResponse> duplicateOf(ByteBuffer batch) {
            short batchEpoch = RecordBatchFormat.producerEpoch(batch, 0);
            if (batchEpoch < epoch) {
                throw new TidemarkException(ErrorCode.INVALID_PRODUCER_EPOCH, "producer epoch " + batchEpoch
                        + " is older than " + epoch);
            }
            int baseSequence = RecordBatchFormat.baseSequence(batch, 0);
            int count = RecordBatchFormat.recordCount(batch, 0);
            return recent.stream().filter(b -> b.baseSequence() == baseSequence && b.count() == count)
                    .map(StoredBatch::response).findFirst();
        }

        void checkSequence(ByteBuffer batch) {
            int baseSequence = RecordBatchFormat.baseSequence(batch, 0);
            if (baseSequence != lastSequence + 1) {
                throw new TidemarkException(ErrorCode.OUT_OF_ORDER_SEQUENCE, "base sequence " + baseSequence
                        + " does not follow the last stored sequence " + lastSequence + "; expected "
                        + (lastSequence + 1));
            }
        }

        void stored(ByteBuffer batch, ProduceResponse response) {
            int baseSequence = RecordBatchFormat.baseSequence(batch, 0);
            int count = RecordBatchFormat.recordCount(batch, 0);
            epoch = RecordBatchFormat.producerEpoch(batch, 0);
            lastSequence = baseSequence + count - 1;
            recent.addLast(new StoredBatch(baseSequence, count, response));
            if (recent.size() > DEDUP_BATCHES) {
                recent.removeFirst();
            }
        }
    }

    private record StoredBatch(int baseSequence, int count, ProduceResponse response) {
    }
}
