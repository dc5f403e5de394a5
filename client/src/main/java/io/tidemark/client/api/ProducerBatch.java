package io.tidemark.client.api;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
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
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One batch of a partition: filled with records until it reaches {@code batch.size} (a first record may make it
 * larger, up to {@code max.request.bytes}), then sent as one Produce request, and resent as the same bytes after
 * a retriable error. The broker's answer completes every record's future.
 *
 * <p>Its bytes are built on the first send, and only then does it take its base sequence from the
 * {@link ProducerSequences}: so sequences follow the order batches are sent in, a retry carries the same sequence
 * (which lets the broker drop it as a duplicate when the first attempt was stored), and a batch the broker
 * refused gives its sequence back for the next one.
 *
 * <p>The broker refuses a batch as a whole, also when only one of its records is bad (a SendTime outside the
 * topic's window, say). So the batch keeps each record's key, value, headers and SendTime (already counted in
 * {@code buffer.memory}), and the sender can {@link #split} it into single-record batches that each get their
 * own answer.
 *
 * <p>Threading: filled under the accumulator's lock by sending threads; once drained, only the sender thread
 * touches it, except that {@link #complete}, {@link #fail} and {@link #split} may race with the thread closing
 * the producer and therefore end the batch only once (the first wins).
 */
final class ProducerBatch {
    /** A {@link #metadataVersionSeen} that any metadata is newer than: the batch need not wait for a refresh. */
    static final long ANY_METADATA = -1;

    /**
     * Where a batch stands among the batches of its partition in the order they were first sent: {@code sent} counts
     * the producer's first sends, {@code part} numbers the parts of a split batch (0 for a whole one).
     */
    record SendOrder(long sent, int part) implements Comparable<SendOrder> {
        @Override
        public int compareTo(SendOrder other) {
            int bySend = Long.compare(sent, other.sent);
            return bySend != 0 ? bySend : Integer.compare(part, other.part);
        }
    }

    final TopicPartition partition;
    final long createdMs;
    final long deadlineMs;
    private final int batchSizeBytes;
    private final int maxRequestBytes;
    private final RecordBatchBuilder builder;
    private final List<PendingRecord> records = new ArrayList<>();
    private final AtomicBoolean ended = new AtomicBoolean();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private long firstSendTimeMs;
    /** No more records: the bytes are built, or this is a part of a split batch. */
    private boolean sealed;
    /** A batch was opened behind this one: it is as large as it will get. */
    private boolean closed;
    private ByteString bytes;
    private long producerId = RecordBatchFormat.NO_PRODUCER_ID;
    private int baseSequence = RecordBatchFormat.NO_SEQUENCE;
    private long retryAtMs;
    private long metadataVersionSeen = ANY_METADATA;
    private int attempts;
    private TidemarkException lastError;
    private SendOrder order;

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
     * @return false when it does not fit, or the batch is sealed (built, or a part of a split batch)
     */
    boolean tryAppend(long sendTimeMs, byte[] key, byte[] value, List<Header> headers, long reserved,
                      CompletableFuture<RecordMetadata> future) {
        if (sealed) {
            return false;
        }
        int count = records.size();
        long delta = count == 0 ? 0 : sendTimeMs - firstSendTimeMs;
        int limit = count == 0 ? maxRequestBytes : batchSizeBytes;
        if (builder.sizeInBytes() + recordSizeBytes(count, delta, key, value, headers) > limit) {
            return false;
        }
        if (count == 0) {
            firstSendTimeMs = sendTimeMs;
        }
        builder.append(sendTimeMs, key, value, headers);
        records.add(new PendingRecord(sendTimeMs, key, value, headers, reserved, future));
        return true;
    }

    /** Whether the batch reached {@code batch.size}, so it is ready to go without lingering. */
    boolean isFull() {
        return builder.sizeInBytes() >= batchSizeBytes;
    }

    /** Takes no more records: a record did not fit and a batch was opened behind it. */
    void close() {
        closed = true;
    }

    /**
     * Whether the batch will not grow: full, or closed because records went on into a batch behind it. Only such a
     * batch goes behind others of its partition in flight: one that could still grow waits for them and takes the
     * records that come meanwhile, so a light load makes few large requests rather than many small ones.
     */
    boolean atFinalSize() {
        return closed || isFull();
    }

    int recordCount() {
        return records.size();
    }

    /**
     * The batch's bytes, the same on every retry. The first call builds them, with the producer id and epoch of
     * {@code sequences} and the next base sequence of this partition taken from it.
     */
    ByteString bytes(ProducerSequences sequences) {
        if (bytes == null) {
            sealed = true;
            producerId = sequences.producerId();
            baseSequence = sequences.take(partition, records.size());
            // a built builder takes no more records, so its buffer is the batch's for good: wrapped, not copied
            builder.producer(producerId, sequences.epoch(), baseSequence);
            if (sequences.transactional()) {
                builder.transactional();
            }
            bytes = UnsafeByteOperations.unsafeWrap(builder.build());
        }
        return bytes;
    }

    /** The producer id its bytes carry; {@link RecordBatchFormat#NO_PRODUCER_ID} before they are built. */
    long producerId() {
        return producerId;
    }

    /** The base sequence its bytes carry; {@link RecordBatchFormat#NO_SEQUENCE} before they are built. */
    int baseSequence() {
        return baseSequence;
    }

    /**
     * Where the batch stands among its partition's batches in the order they were first sent (the order their
     * sequences follow): given on its first send, taken over by the parts of a split and by a batch rebuilt in its
     * place; null before. A batch put back in the queue goes before every batch of a later order or none.
     */
    SendOrder order() {
        return order;
    }

    /** Gives the batch its order on its first send; a batch that has one keeps it. */
    void ordered(long sentCount) {
        if (order == null) {
            order = new SendOrder(sentCount, 0);
        }
    }

    /** The bytes its records hold in the memory budget, freed when the batch ends. */
    long reservedBytes() {
        return records.stream().mapToLong(PendingRecord::reservedBytes).sum();
    }

    /** Completes once every record has its result: when the batch ended, or when all parts of its split did. */
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
        if (count != records.size()) {
            return fail(new TidemarkException(ErrorCode.INTERNAL_ERROR, "the broker acknowledged offsets "
                    + response.getBaseOffset() + ".." + response.getLastOffset() + " for a batch of "
                    + records.size() + " records of " + partition));
        }
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        for (int i = 0; i < records.size(); i++) {
            PendingRecord record = records.get(i);
            record.future().complete(new RecordMetadata(partition.topic(), partition.partition(),
                    response.getBaseOffset() + i, response.getReceiveTimeMs(), record.sendTimeMs()));
        }
        done.complete(null);
        return true;
    }

    /** Fails every record's future; false when the batch had already ended. */
    boolean fail(RuntimeException error) {
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        records.forEach(record -> record.future().completeExceptionally(error));
        done.complete(null);
        return true;
    }

    /**
     * Ends this batch by cutting it into one batch per record, in record order, after the broker refused it for
     * {@code cause}. Each part holds its record's reserved bytes (freed when the part ends), takes no more
     * records, and keeps this batch's deadline, attempts and last error, so it goes without lingering and a
     * delivery timeout still says what happened. A part takes its own sequence when it is first sent, so the
     * parts continue the partition's sequence in order. This batch is {@link #done} once all parts are.
     *
     * @return the parts; none when this batch had already ended
     */
    List<ProducerBatch> split(TidemarkException cause) {
        List<List<PendingRecord>> single = records.stream().map(List::of).toList();
        return replaceBy(single, cause);
    }

    /**
     * Ends this batch by putting in its place a batch of the same records that has no bytes yet, so it takes the
     * producer id and sequence that are current when it is sent: for a batch the broker refused as out of sequence
     * after the producer renewed its id (it was not stored, and its old sequence can never be filled).
     *
     * @return the new batch; none when this batch had already ended
     */
    List<ProducerBatch> rebuilt(TidemarkException cause) {
        return replaceBy(List.of(records), cause);
    }

    private List<ProducerBatch> replaceBy(List<List<PendingRecord>> groups, TidemarkException cause) {
        if (!ended.compareAndSet(false, true)) {
            return List.of();
        }
        List<ProducerBatch> parts = new ArrayList<>(groups.size());
        for (int i = 0; i < groups.size(); i++) {
            parts.add(part(groups.get(i), order == null ? null : new SendOrder(order.sent(), order.part() + i),
                    cause));
        }
        CompletableFuture.allOf(parts.stream().map(ProducerBatch::done).toArray(CompletableFuture[]::new))
                .thenRun(() -> done.complete(null));
        return parts;
    }

    private ProducerBatch part(List<PendingRecord> group, SendOrder partOrder, TidemarkException cause) {
        ProducerBatch part = new ProducerBatch(partition, createdMs, deadlineMs - createdMs, batchSizeBytes,
                maxRequestBytes);
        for (PendingRecord record : group) {
            if (!part.tryAppend(record.sendTimeMs(), record.key(), record.value(), record.headers(),
                    record.reservedBytes(), record.future())) {
                throw new IllegalStateException("the records of a batch of " + partition + " do not fit it again");
            }
        }
        part.sealed = true;
        part.attempts = attempts;
        part.lastError = cause;
        part.order = partOrder;
        return part;
    }

    private static int nullableSize(byte[] bytes) {
        return bytes == null ? Varints.sizeOfSignedInt(-1) : Varints.sizeOfSignedInt(bytes.length) + bytes.length;
    }

    private static int bytesSize(int length) {
        return Varints.sizeOfUnsignedInt(length) + length;
    }

    /** A record as sent, kept so that a refused batch can be split; {@code reservedBytes} as in the budget. */
    private record PendingRecord(long sendTimeMs, byte[] key, byte[] value, List<Header> headers,
                                 long reservedBytes, CompletableFuture<RecordMetadata> future) {
    }
}
