package io.tidemark.mirror.checkpoint;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Finds copies of an origin partition in a target partition by reading it: the first target record that is a copy
 * from the origin partition with origin offset at or above a given one. Copies of one origin partition lie in the
 * target in increasing origin offsets (other origins' records may sit between them), so a binary search over target
 * offsets works; each probe reads forward from its offset to the first copy of the origin (a few batches unless other
 * origins dominate the partition). Used for checkpoints older than what a copier remembers, and by the failover tool
 * to check a checkpoint's target offset.
 *
 * <p>Thread-safe (the admin client is).
 */
public final class TargetOffsetLookup implements TargetPositions {
    /** Bytes of batches read per fetch while probing. */
    static final int PROBE_FETCH_BYTES = 64 * 1024;

    private final TidemarkAdmin target;

    public TargetOffsetLookup(TidemarkAdmin target) {
        this.target = target;
    }

    /** A copy found by a probe: where it is, and its origin offset. */
    private record Copy(long offset, long originOffset) {
    }

    /**
     * @throws IllegalStateException when {@code known} holds no such copy after all
     */
    @Override
    public long firstCopyAtOrAbove(TopicPartition tp, OriginPartition origin, long originOffset, long known) {
        long low = target.listOffsets(tp, OffsetSpec.earliest()).logStartOffset();
        return search(tp, origin, originOffset, low, known + 1).orElseThrow(() -> new IllegalStateException(
                "no copy of " + origin + " at or above origin offset " + originOffset + " in " + tp + " up to offset "
                        + known + ", which was reported to hold one"));
    }

    @Override
    public long logEndOffset(TopicPartition tp) {
        return target.listOffsets(tp, OffsetSpec.latest()).logEndOffset();
    }

    /**
     * The first offset of {@code tp} holding a copy of {@code origin} with origin offset at least {@code originOffset},
     * from its log start to its log end; empty when it holds none.
     */
    public OptionalLong firstCopyAtOrAbove(TopicPartition tp, OriginPartition origin, long originOffset) {
        OffsetLookup end = target.listOffsets(tp, OffsetSpec.latest());
        return search(tp, origin, originOffset, end.logStartOffset(), end.logEndOffset());
    }

    /** Binary search over [low, end): the first copy of the origin at or above {@code originOffset}. */
    private OptionalLong search(TopicPartition tp, OriginPartition origin, long originOffset, long low, long end) {
        OptionalLong answer = OptionalLong.empty();
        while (low < end) {
            long mid = low + (end - low) / 2;
            Optional<Copy> copy = firstCopyFrom(tp, origin, mid, end);
            if (copy.isEmpty() || copy.get().originOffset() >= originOffset) {
                if (copy.isPresent()) {
                    answer = OptionalLong.of(copy.get().offset());
                }
                end = mid;
            } else {
                low = copy.get().offset() + 1;
            }
        }
        return answer;
    }

    /**
     * The provenance of a target record; empty for one without, and for one whose provenance header is malformed: no
     * mirror wrote that (brokers check every mirrored batch), a producer set the reserved header, and it is no copy.
     */
    public static Optional<ProvenanceHeaders.Provenance> provenance(ConsumerRecord record) {
        try {
            return ProvenanceHeaders.read(record.headers());
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The first copy of {@code origin} in [from, end); empty when there is none. */
    private Optional<Copy> firstCopyFrom(TopicPartition tp, OriginPartition origin, long from, long end) {
        long offset = from;
        while (offset < end) {
            List<ConsumerRecord> records = target.read(tp, offset, PROBE_FETCH_BYTES);
            if (records.isEmpty()) {
                break;
            }
            for (ConsumerRecord record : records) {
                if (record.offset() >= end) {
                    return Optional.empty();
                }
                Optional<ProvenanceHeaders.Provenance> provenance = provenance(record);
                if (provenance.isPresent() && provenance.get().origin().equals(origin)) {
                    return Optional.of(new Copy(record.offset(), provenance.get().originOffset()));
                }
            }
            offset = records.get(records.size() - 1).offset() + 1;
        }
        return Optional.empty();
    }
}
