package io.tidemark.mirror.checkpoint;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;

import java.util.List;
import java.util.Optional;

/**
 * Translates a committed source offset older than what a copier remembers, by reading the target partition: the
 * first target record that is a copy from the origin partition with origin offset at or above the committed one.
 * Copies of one origin partition lie in the target in increasing origin offsets (other origins' records may sit
 * between them), so a binary search over target offsets works; each probe reads forward from its offset to the
 * first copy of the origin (a few batches unless other origins dominate the partition).
 *
 * <p>Thread-safe (the admin client is).
 */
public final class TargetOffsetLookup {
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
     * The first target offset holding a copy of {@code origin} with origin offset at least {@code committed}.
     *
     * @param known a target offset that holds such a copy (the copy of the last origin offset the target holds)
     */
    public long firstAtOrAbove(TopicPartition tp, OriginPartition origin, long committed, long known) {
        long answer = known;
        long low = target.listOffsets(tp, OffsetSpec.earliest()).logStartOffset();
        long end = known;
        while (low < end) {
            long mid = low + (end - low) / 2;
            Copy copy = firstCopyFrom(tp, origin, mid, answer);
            if (copy.offset() >= end || copy.originOffset() >= committed) {
                answer = Math.min(answer, copy.offset());
                end = mid;
            } else {
                low = copy.offset() + 1;
            }
        }
        return answer;
    }

    /** The first copy of {@code origin} at or after {@code from}; {@code known}, which is one, bounds the scan. */
    private Copy firstCopyFrom(TopicPartition tp, OriginPartition origin, long from, long known) {
        long offset = from;
        while (offset <= known) {
            List<ConsumerRecord> records = target.read(tp, offset, PROBE_FETCH_BYTES);
            if (records.isEmpty()) {
                break;
            }
            for (ConsumerRecord record : records) {
                Optional<ProvenanceHeaders.Provenance> provenance = ProvenanceHeaders.read(record.headers());
                if (provenance.isPresent() && provenance.get().origin().equals(origin)) {
                    return new Copy(record.offset(), provenance.get().originOffset());
                }
            }
            offset = records.get(records.size() - 1).offset() + 1;
        }
        throw new IllegalStateException("no copy of " + origin + " in " + tp + " from offset " + from + " to " + known
                + ", which was reported to hold one");
    }
}
