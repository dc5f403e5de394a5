package io.tidemark.mirror.sink;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * One mirrored batch of copies, made from the head of a partition's queue of source records: each record keeps its
 * key, value, headers and SendTime and gets the {@link ProvenanceHeaders} of the copy; a record whose path holds the
 * target cluster is dropped instead (the loop rule). The batch ends before it would pass {@code maxBatchBytes},
 * provenance included, or at {@code maxRecords}: a batch of several records is always within the limit, so only a
 * first record larger than that goes alone, where the target allows a mirrored batch its provenance headers on top
 * of its max.batch.bytes.
 *
 * @param builder       the batch, not built yet (the writer adds its producer id and sequence); null when every record
 *                      taken was dropped by the loop rule
 * @param records       the source records copied, in order
 * @param originOffsets their source offsets, increasing
 * @param bytes         their keys', values' and headers' bytes as read from the source
 * @param skippedLoop   records taken from the queue and dropped by the loop rule
 */
public record CopyBatch(RecordBatchBuilder builder, List<ConsumerRecord> records, long[] originOffsets, long bytes,
                        int skippedLoop) {
    /**
     * Bytes of a copy besides its key, value and headers' names and values, at most: the record's length, offset and
     * SendTime deltas, key and value lengths and header count (5 varints of up to 5 bytes and one of up to 10), and
     * two length varints per header (at most 5 bytes each for the provenance header and up to 7 user ones).
     */
    private static final int RECORD_OVERHEAD_BYTES = 35 + 2 * 5 * 8;
    /**
     * What sizing a batch allows a copy for its provenance header on top of the record as read: the header's name and
     * a one-hop value take ~55 bytes (ProvenanceHeadersTest). Only a hint: a batch outgrowing it grows its buffer.
     */
    private static final int PROVENANCE_ALLOWANCE_BYTES = 128;

    /**
     * Takes records from the head of {@code pending} into one batch.
     *
     * @param targetCluster the target's name, for the loop rule
     */
    public static CopyBatch take(Deque<ConsumerRecord> pending, OriginPartition origin, String targetCluster,
                                 int maxBatchBytes, int maxRecords) {
        RecordBatchBuilder builder = new RecordBatchBuilder(capacity(pending, maxBatchBytes, maxRecords)).mirrored();
        List<ConsumerRecord> records = new ArrayList<>();
        long bytes = 0;
        int skipped = 0;
        while (!pending.isEmpty() && records.size() < maxRecords) {
            ConsumerRecord record = pending.peekFirst();
            if (ProvenanceHeaders.crossed(record.headers(), targetCluster)) {
                pending.pollFirst();
                skipped++;
                continue;
            }
            List<Header> headers = ProvenanceHeaders.forCopy(record.headers(), origin, record.offset(),
                    record.receiveTimeMs());
            if (!records.isEmpty() && builder.sizeInBytes() + copySizeBytes(record, headers) > maxBatchBytes) {
                break;
            }
            pending.pollFirst();
            builder.append(record.sendTimeMs(), record.key(), record.value(), headers);
            records.add(record);
            bytes += sizeBytes(record);
        }
        long[] offsets = records.stream().mapToLong(ConsumerRecord::offset).toArray();
        return new CopyBatch(records.isEmpty() ? null : builder, List.copyOf(records), offsets, bytes, skipped);
    }

    /**
     * The bytes a batch of the records at the head of {@code pending} is likely to take, at most
     * {@code maxBatchBytes}, so it is built in one buffer: grown by doubling from 64 KiB, a 1 MiB batch allocated
     * 4 MiB and copied 2 MiB on the way (the mirror's allocation profile, docs/benchmarks.md).
     */
    private static int capacity(Deque<ConsumerRecord> pending, int maxBatchBytes, int maxRecords) {
        long bytes = RecordBatchFormat.HEADER_SIZE_BYTES;
        int records = 0;
        for (ConsumerRecord record : pending) {
            if (records++ == maxRecords) {
                break;
            }
            bytes += sizeBytes(record) + RECORD_OVERHEAD_BYTES + PROVENANCE_ALLOWANCE_BYTES;
            if (bytes >= maxBatchBytes) {
                return maxBatchBytes;
            }
        }
        return (int) bytes;
    }

    /**
     * A mirrored batch of one record for the dead-letter topic: the copy {@link #take} would make of {@code record},
     * with the {@link DeadLetterHeaders} of {@code deadLetter} before its provenance, so the dead-letter partition's
     * origin offsets refuse a second one (ORIGIN_OFFSET_HELD).
     */
    public static RecordBatchBuilder deadLetter(ConsumerRecord record, OriginPartition origin,
                                                DeadLetterHeaders.DeadLetter deadLetter) {
        List<Header> headers = ProvenanceHeaders.forCopy(DeadLetterHeaders.add(record.headers(), deadLetter), origin,
                record.offset(), record.receiveTimeMs());
        return new RecordBatchBuilder().mirrored().append(record.sendTimeMs(), record.key(), record.value(), headers);
    }

    /** Key, value and headers of a record as read from the source. */
    public static long sizeBytes(ConsumerRecord record) {
        return keyAndValueBytes(record) + headerBytes(record.headers());
    }

    /** The most bytes the copy of a record with {@code headers} takes in a batch. */
    private static long copySizeBytes(ConsumerRecord record, List<Header> headers) {
        return keyAndValueBytes(record) + headerBytes(headers) + RECORD_OVERHEAD_BYTES;
    }

    private static long keyAndValueBytes(ConsumerRecord record) {
        return (record.key() == null ? 0 : record.key().length) + (record.value() == null ? 0 : record.value().length);
    }

    private static long headerBytes(List<Header> headers) {
        long size = 0;
        for (Header header : headers) {
            size += header.name().getBytes(StandardCharsets.UTF_8).length + header.value().length;
        }
        return size;
    }
}
