package io.tidemark.mirror.sink;

import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * Where a mirror's copies of one origin partition went on the target: the batches it wrote this session (origin
 * offsets to target offsets, exactly, from the produce replies), after an anchor: the last origin offset the target
 * held when the copier last (re)synchronised, and where. It answers "the first target record whose origin offset is
 * at or above C" ({@link #translate}) without a call while C is inside what it remembers.
 *
 * <p>Memory is bounded: at most {@code maxBatches} batches; a contiguous batch costs a few longs, one with gaps (skipped
 * records) one long per record. Forgetting the oldest batch moves the covered range up.
 *
 * <p>Pure and not thread-safe: the copier owns it under its lock.
 */
public final class OffsetMap {
    /** "No origin offset": nothing held. */
    public static final long NONE = -1;

    private final int maxBatches;
    private final ArrayDeque<Written> batches = new ArrayDeque<>();
    /** Every record of the origin above this origin offset that the target holds is in {@link #batches}. */
    private long coveredAfter = NONE;
    private long lastOrigin = NONE;
    private long lastTarget = NONE;
    private boolean anchored;

    /**
     * A written batch: the origin offsets of its first and last record, each record's when they are not contiguous
     * (null when they are), and the target offset of the first.
     */
    private record Written(long first, long last, long[] gapped, long targetBaseOffset) {
        /** Index of the first record whose origin offset is at or above {@code origin} (at most {@link #last}). */
        long indexAtOrAbove(long origin) {
            if (origin <= first) {
                return 0;
            }
            if (gapped == null) {
                return origin - first;
            }
            int index = Arrays.binarySearch(gapped, origin);
            return index >= 0 ? index : -index - 1;
        }
    }

    /** How a committed source offset maps to the target. */
    public sealed interface Translation {
    }

    /**
     * The target offset to resume at: the copy of the first record at or above the committed offset; or, when the
     * target holds no such record yet, the offset after the copy of the last one it holds ({@code behind} when the
     * group had consumed records the target does not hold yet).
     */
    public record Exact(long targetOffset, boolean behind) implements Translation {
    }

    /**
     * Older than what the map remembers: the answer is at or below {@code heldTargetOffset} (the copy of origin offset
     * {@code heldOriginOffset}), and a lookup on the target finds it.
     */
    public record Unknown(long heldOriginOffset, long heldTargetOffset) implements Translation {
    }

    /** The target holds no record of the origin partition yet. */
    public record NothingHeld() implements Translation {
    }

    /** Not known yet: the copier has not asked the target what it holds since it started. */
    public record NotAnchored() implements Translation {
    }

    public OffsetMap(int maxBatches) {
        if (maxBatches < 1) {
            throw new IllegalArgumentException("maxBatches " + maxBatches + " is below 1");
        }
        this.maxBatches = maxBatches;
    }

    /**
     * Forgets every batch and anchors at what the target holds ({@link #NONE}s when nothing). Until the first call,
     * every translation is {@link NotAnchored}.
     */
    public void reset(long heldOriginOffset, long heldTargetOffset) {
        batches.clear();
        coveredAfter = heldOriginOffset;
        lastOrigin = heldOriginOffset;
        lastTarget = heldTargetOffset;
        anchored = true;
    }

    /** A batch was stored: its records' origin offsets, increasing, and the target offset of the first. */
    public void written(long[] originOffsets, long targetBaseOffset) {
        if (originOffsets.length == 0 || originOffsets[0] <= lastOrigin) {
            throw new IllegalStateException("a written batch must continue after origin offset " + lastOrigin + ": "
                    + Arrays.toString(originOffsets));
        }
        long first = originOffsets[0];
        long last = originOffsets[originOffsets.length - 1];
        boolean contiguous = last - first == originOffsets.length - 1;
        batches.addLast(new Written(first, last, contiguous ? null : originOffsets.clone(), targetBaseOffset));
        lastOrigin = last;
        lastTarget = targetBaseOffset + originOffsets.length - 1;
        if (batches.size() > maxBatches) {
            coveredAfter = batches.removeFirst().last();
        }
    }

    /** The last origin offset the target holds as far as this map knows, or {@link #NONE}. */
    public long lastOriginOffset() {
        return lastOrigin;
    }

    public Translation translate(long committed) {
        if (!anchored) {
            return new NotAnchored();
        }
        if (lastOrigin == NONE) {
            return new NothingHeld();
        }
        if (committed > lastOrigin) {
            return new Exact(lastTarget + 1, committed - 1 > lastOrigin);
        }
        if (committed <= coveredAfter) {
            return new Unknown(lastOrigin, lastTarget);
        }
        for (Written batch : batches) {
            if (batch.last() >= committed) {
                return new Exact(batch.targetBaseOffset() + batch.indexAtOrAbove(committed), false);
            }
        }
        throw new IllegalStateException("origin offset " + committed + " is covered (above " + coveredAfter
                + ", at most " + lastOrigin + ") but no batch reaches it");
    }
}
