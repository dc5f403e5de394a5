package io.tidemark.client.api;

import com.google.protobuf.ByteString;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.Varints;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ProduceResponse;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One batch of a partition: filled with records until it reaches {@code batch.size} (a first record may make it
 * larger, up to {@code max.request.bytes}), then sent as one Produce request, and resent as the same bytes after
 * a retriable error. The broker's answer completes every record's future.
 *
 * <p>Threading: filled under the accumulator's lock by sending threads; once drained, only the sender thread
 * touches it, except that {@link #complete} and {@link #fail} may race with the thread closing the producer and
 * are therefore idempotent (the first wins).
 */
final class ProducerBatch {
    final TopicPartition partition;
    final long createdMs;
    final long deadlineMs;
    private final int batchSizeBytes;
    private final int maxRequestBytes;
    private final RecordBatchBuilder builder;
    private final List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    private final List<Long> sendTimesMs = new ArrayList<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private long firstSendTimeMs;
    private long reservedBytes;
    private ByteString bytes;
    private long retryAtMs;
    private long metadataVersionSeen = -1;
    private int attempts;
    private TidemarkException lastError;

    ProducerBatch(TopicPartition partition, long createdMs, long deliveryTimeoutMs, int batchSizeBytes,
                  int maxRequestBytes) {
        this.partition = partition;
        this.createdMs = createdMs;
        this.deadlineMs = createdMs + deliveryTimeoutMs;
        this.batchSizeBytes = batchSizeBytes;
        this.maxRequestBytes = maxRequestBytes;
        this.builder = new RecordBatchBuilder(Math.min(batchSizeBytes, maxRequestBytes));
    }

    /**
     * Bytes a record takes in a batch ({@link RecordBatchFormat}, record layout) as record {@code index} whose
     * SendTime is {@code sendTimeDeltaMs} after the batch's first.
     */
    static int recordSizeBytes(int index, long sendTimeDeltaMs, byte[] key, byte[] value, List<Header> headers) {
        int body = Varints.sizeOfUnsignedInt(index) + Varints.sizeOfSignedLong(sendTimeDeltaMs)
                + nullableSize(key) + nullableSize(value) + Varints.sizeOfUnsignedInt(headers.size());
        for (Header header : headers) {
            body += bytesSize(header.name().getBytes(StandardCharsets.UTF_8).length) + bytesSize(header.value().length);
        }
        return Varints.sizeOfUnsignedInt(body) + body;
    }

    /** Bytes a batch holding only this record takes. */
    static int singleRecordBatchBytes(byte[] key, byte[] value, List<Header> headers) {
        return RecordBatchFormat.HEADER_SIZE_BYTES + recordSizeBytes(0, 0, key, value, headers);
    }

    /** The most bytes a record can take in any batch: what the producer's memory budget counts for it. */
    static int maxRecordSizeBytes(byte[] key, byte[] value, List<Header> headers) {
        return recordSizeBytes(Integer.MAX_VALUE, Long.MIN_VALUE, key, value, headers);
    }

    /**
     * Adds a record when it fits: within {@code batch.size}, or as the first record within
     * {@code max.request.bytes}.
     *
     * @param reserved the bytes the record holds in the memory budget, freed when the batch ends
     * @return false when it does not fit (or the batch is already built)
     */
    boolean tryAppend(long sendTimeMs, byte[] key, byte[] value, List<Header> headers, long reserved,
                      CompletableFuture<RecordMetadata> future) {
        if (bytes != null) {
            return false;
        }
        int count = futures.size();
        long delta = count == 0 ? 0 : sendTimeMs - firstSendTimeMs;
        int limit = count == 0 ? maxRequestBytes : batchSizeBytes;
        if (builder.sizeInBytes() + recordSizeBytes(count, delta, key, value, headers) > limit) {
            return false;
        }
        if (count == 0) {
            firstSendTimeMs = sendTimeMs;
        }
        builder.append(sendTimeMs, key, value, headers);
        futures.add(future);
        sendTimesMs.add(sendTimeMs);
        reservedBytes += reserved;
        return true;
    }

    /** Whether the batch reached {@code batch.size}, so it is ready to go without lingering. */
    boolean isFull() {
        return builder.sizeInBytes() >= batchSizeBytes;
    }

    int recordCount() {
        return futures.size();
    }

    /** The batch's bytes, built on the first call and the same on every retry. */
    ByteString bytes() {
        if (bytes == null) {
            bytes = ByteString.copyFrom(builder.build());
        }
        return bytes;
    }

    long reservedBytes() {
        return reservedBytes;
    }

    CompletableFuture<Void> done() {
        return done;
    }

    int attempts() {
        return attempts;
    }

    void attempted() {
        attempts++;
    }

    long retryAtMs() {
        return retryAtMs;
    }

    /** The metadata version seen when the last error asked for a refresh; it is resent only on newer metadata. */
    long metadataVersionSeen() {
        return metadataVersionSeen;
    }

    /** Prepares a retry after a retriable error: not before {@code retryAtMs}, and after newer metadata. */
    void retryLater(TidemarkException error, long retryAtMs, long metadataVersion) {
        this.lastError = error;
        this.retryAtMs = retryAtMs;
        this.metadataVersionSeen = metadataVersion;
    }

    TidemarkException lastError() {
        return lastError;
    }

    /**
     * Completes every record's future with its offset and the batch's ReceiveTime.
     *
     * @return false when the batch had already ended
     */
    boolean complete(ProduceResponse response) {
        long count = response.getLastOffset() - response.getBaseOffset() + 1;
        if (count != futures.size()) {
            return fail(new TidemarkException(ErrorCode.INTERNAL_ERROR, "the broker acknowledged offsets "
                    + response.getBaseOffset() + ".." + response.getLastOffset() + " for a batch of "
                    + futures.size() + " records of " + partition));
        }
        if (!done.complete(null)) {
            return false;
        }
        for (int i = 0; i < futures.size(); i++) {
            futures.get(i).complete(new RecordMetadata(partition.topic(), partition.partition(),
                    response.getBaseOffset() + i, response.getReceiveTimeMs(), sendTimesMs.get(i)));
        }
        return true;
    }

    /** Fails every record's future; false when the batch had already ended. */
    boolean fail(RuntimeException error) {
        if (!done.complete(null)) {
            return false;
        }
        futures.forEach(future -> future.completeExceptionally(error));
        return true;
    }

    private static int nullableSize(byte[] bytes) {
        return bytes == null ? Varints.sizeOfSignedInt(-1) : Varints.sizeOfSignedInt(bytes.length) + bytes.length;
    }

    private static int bytesSize(int length) {
        return Varints.sizeOfUnsignedInt(length) + length;
    }
}
