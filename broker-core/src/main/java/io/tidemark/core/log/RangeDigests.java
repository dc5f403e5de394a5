package io.tidemark.core.log;

import com.google.protobuf.UnsafeByteOperations;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.record.RecordDigestFormat;
import io.tidemark.proto.v1.DigestPartitionRequest;
import io.tidemark.proto.v1.DigestPartitionResponse;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * Digests of a log's records over ranges of offsets ({@link RecordDigestFormat}), so replicas of a partition can be
 * compared without moving their records: two replicas that hold the same records in a range give the same digest.
 * Ranges are aligned on multiples of their length, so two logs that start at different offsets digest the same
 * ranges.
 *
 * <p>A call reads at most about {@value #READ_BUDGET_BYTES} bytes of batches: it stops at the end of the range in which
 * the budget ran out, and the caller asks again from there. Not thread-safe; the log is read as any reader reads it.
 */
public final class RangeDigests {
    /** Bytes of batches one call reads before it stops at a range's end: a few seconds of disk at most. */
    static final int READ_BUDGET_BYTES = 64 << 20;
    private static final int READ_CHUNK_BYTES = 1 << 20;

    private RangeDigests() {
    }

    /**
     * The digest of the records of {@code [fromOffset, toOffset)}.
     *
     * @param records how many records the log holds in it
     * @param compacted whether a compacted segment holds offsets of it
     */
    public record RangeDigest(long fromOffset, long toOffset, int records, byte[] digest, boolean compacted) {
    }

    /**
     * The answer to a {@code DigestPartition} request for this log: its start and end, and the digests asked for.
     *
     * @throws IllegalArgumentException when the request's range_offsets is below 1
     */
    public static DigestPartitionResponse answer(PartitionLog log, DigestPartitionRequest request) {
        DigestPartitionResponse.Builder response = DigestPartitionResponse.newBuilder()
                .setLogStartOffset(log.logStartOffset()).setLogEndOffset(log.logEndOffset());
        for (RangeDigest range : digest(log, request.getFromOffset(), request.getToOffset(),
                request.getRangeOffsets())) {
            response.addRanges(io.tidemark.proto.v1.RangeDigest.newBuilder().setFromOffset(range.fromOffset())
                    .setToOffset(range.toOffset()).setRecords(range.records())
                    .setDigest(UnsafeByteOperations.unsafeWrap(range.digest())).setCompacted(range.compacted()));
        }
        return response.build();
    }

    /**
     * The digests of the records of {@code [fromOffset, toOffset)} within the log (a from below its start starts there,
     * a to above its end ends there), one per range of {@code rangeOffsets} offsets aligned on its multiples, in
     * order; fewer when the read budget ran out (the last range ends where the next call starts).
     *
     * @throws IllegalArgumentException when {@code rangeOffsets} is below 1
     */
    public static List<RangeDigest> digest(PartitionLog log, long fromOffset, long toOffset, long rangeOffsets) {
        if (rangeOffsets < 1) {
            throw new IllegalArgumentException("a range holds at least 1 offset, not " + rangeOffsets);
        }
        long from = Math.max(fromOffset, log.logStartOffset());
        long to = Math.min(toOffset, log.logEndOffset());
        List<SegmentInfo> segments = log.segments();
        List<RangeDigest> digests = new ArrayList<>();
        RecordBatchReader reader = new RecordBatchReader();
        MessageDigest digest = RecordDigestFormat.newDigest();
        long rangeStart = from;
        long rangeEnd = Math.min(to, Math.floorDiv(from, rangeOffsets) * rangeOffsets + rangeOffsets);
        int records = 0;
        long offset = from;
        long readBytes = 0;
        while (rangeStart < to) {
            ByteBuffer batches = offset < to ? log.read(offset, READ_CHUNK_BYTES).batches() : ByteBuffer.allocate(0);
            readBytes += batches.remaining();
            long next = offset < to ? nextOffset(batches, offset) : to;
            for (Record record : reader.records(batches)) {
                if (record.offset() < offset || record.offset() >= to) {
                    continue;
                }
                while (record.offset() >= rangeEnd) {
                    digests.add(new RangeDigest(rangeStart, rangeEnd, records, digest.digest(),
                            compacted(segments, rangeStart, rangeEnd)));
                    records = 0;
                    rangeStart = rangeEnd;
                    rangeEnd = Math.min(to, rangeEnd + rangeOffsets);
                }
                digest.update(RecordDigestFormat.encode(record));
                records++;
            }
            offset = Math.min(next, to);
            while (rangeEnd <= offset && rangeStart < to) {
                digests.add(new RangeDigest(rangeStart, rangeEnd, records, digest.digest(),
                        compacted(segments, rangeStart, rangeEnd)));
                records = 0;
                rangeStart = rangeEnd;
                rangeEnd = Math.min(to, rangeEnd + rangeOffsets);
                if (readBytes >= READ_BUDGET_BYTES) {
                    return digests;
                }
            }
        }
        return digests;
    }

    /** The offset after the last batch read; past {@code offset} even when the read found nothing. */
    private static long nextOffset(ByteBuffer batches, long offset) {
        long next = offset;
        int at = batches.position();
        while (at < batches.limit()) {
            next = RecordBatchFormat.lastOffset(batches, at) + 1;
            at += RecordBatchFormat.totalSize(batches, at);
        }
        return Math.max(next, offset + 1);
    }

    private static boolean compacted(List<SegmentInfo> segments, long from, long to) {
        for (SegmentInfo segment : segments) {
            if (segment.compacted() && segment.baseOffset() < to && segment.nextOffset() > from) {
                return true;
            }
        }
        return false;
    }
}
