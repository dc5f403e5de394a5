package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.MirroredBatchScanner.OriginRange;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.v1.ErrorCode;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What a partition holds of each origin partition it has mirrored records of, so a record is copied into it at
 * most once: per origin partition (cluster, topic, topic id, partition), the last origin offset held and where that
 * record is ({@link HeldOrigin}). The topic id makes a topic deleted and created again on the origin cluster a new
 * origin: its records, whose offsets start again, are taken from its first one instead of refused as held.
 * <ul>
 *   <li>A mirrored batch whose first origin offset is at or below the last held is refused whole with
 *       ORIGIN_OFFSET_HELD, naming the last held; a mirror then asks for it (the OriginOffset RPC) and continues
 *       after it. Two mirrors copying the same partition by mistake therefore store each record once.</li>
 *   <li>A batch that starts further than one past the last held is taken: the origin's retention may have removed
 *       records before the mirror read them, and the mirror, not the partition, knows. A mirror keeps one batch
 *       of a partition outstanding and, after a refusal, sends nothing more before it asked where to continue, so
 *       a batch of its never passes one of another mirror's (which would leave a gap).</li>
 * </ul>
 * Like {@link ProducerStateTable} it is derived from the log alone, so every replica holds the same table and
 * decides the same at apply. It is rebuilt when the log opens and after a truncation from the latest
 * {@link OriginSnapshotFile} (written at every segment roll) and the mirrored batches after it.
 *
 * <p>Not thread-safe: used under the log's append lock.
 */
final class OriginOffsetTable {
    private final Map<OriginPartition, HeldOrigin> held = new HashMap<>();

    Optional<HeldOrigin> held(OriginPartition origin) {
        return Optional.ofNullable(held.get(origin));
    }

    /**
     * Checks a mirrored batch before it is stored.
     *
     * @throws TidemarkException ORIGIN_OFFSET_HELD when the partition already holds its first origin offset
     */
    void check(OriginRange range) {
        HeldOrigin last = held.get(range.origin());
        if (last != null && range.firstOriginOffset() <= last.originOffset()) {
            throw new TidemarkException(ErrorCode.ORIGIN_OFFSET_HELD, "this partition holds " + range.origin()
                    + " up to origin offset " + last.originOffset() + " (at offset " + last.offset()
                    + "); the mirrored batch starts at origin offset " + range.firstOriginOffset()
                    + " and was not stored: a record is copied once, continue at origin offset "
                    + (last.originOffset() + 1));
        }
    }

    /** Records a stored mirrored batch whose last record went to {@code lastOffset}. */
    void stored(OriginRange range, long lastOffset) {
        held.put(range.origin(), new HeldOrigin(range.lastOriginOffset(), lastOffset));
    }

    /** A copy of every entry, for a snapshot. */
    Map<OriginPartition, HeldOrigin> entries() {
        return Map.copyOf(held);
    }

    /** Replaces every entry (a rebuild starting from a snapshot). */
    void reset(Map<OriginPartition, HeldOrigin> entries) {
        held.clear();
        held.putAll(entries);
    }
}
