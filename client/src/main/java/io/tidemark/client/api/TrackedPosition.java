package io.tidemark.client.api;

import java.util.Arrays;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Tracked mode's position in one partition, from the offset the reader started at: every offset the runtime delivers
 * is tracked until it completes, in any order, and the stored position is the earliest delivery still unfinished, or,
 * when none is, the offset after the highest one seen. It never passes unfinished work, and offsets the log does not
 * hold (compacted away, transaction markers) never hold it back, as they are never delivered.
 *
 * <p>A reader that resumes from a commit whose metadata lists the work unfinished at the time
 * ({@link TrackedCommitFormat}) delivers only that work again: {@link #arrived} says which fetched offsets were
 * completed before and are skipped. An unfinished offset of the commit that the log no longer holds is passed when a
 * later offset arrives, as any gap.
 *
 * <p>A rebalance or a seek starts a new one; completions of deliveries made before belong to the old one and change
 * nothing here.
 *
 * <p>Deterministic, no I/O, no clock; not thread-safe (the runtime's polling thread). Offsets arrive in ascending
 * order, as a fetch returns them; an offset delivered again (a retry in place) stays unfinished, unchanged here.
 * Without allocation per delivery: the unfinished window is a ring of offsets, ascending, with a done flag each.
 */
final class TrackedPosition {
    /** Unfinished offsets of the commit resumed from, ascending, not yet arrived: from {@link #restoredNext} on. */
    private final long[] restored;
    private int restoredNext;
    /** Below this, every offset the commit did not list as unfinished was complete; the start when none. */
    private final long restoredEnd;
    /** Delivered offsets, ascending, in a ring from {@link #head}: unfinished, or done but not at the head. */
    private long[] window = new long[16];
    private boolean[] done = new boolean[16];
    private int head;
    private int size;
    /** The highest offset that arrived, delivered or skipped; one below the start when none did. */
    private long highestArrived;
    private long stored = -1;

    private TrackedPosition(long start, long[] restored, long restoredEnd) {
        this.restored = restored;
        this.restoredEnd = restoredEnd;
        this.highestArrived = start - 1;
    }

    /** Starting to read at {@code offset} with no knowledge of what was completed above it. */
    static TrackedPosition from(long offset) {
        return new TrackedPosition(offset, new long[0], offset);
    }

    /** Resuming at a commit of {@code offset} whose metadata said what above it was unfinished. */
    static TrackedPosition resuming(long offset, Optional<TrackedCommitFormat.CompletedAbove> above) {
        if (above.isEmpty()) {
            return from(offset);
        }
        long[] pending = above.get().pending();
        long[] restored = new long[pending.length + 1];
        restored[0] = offset;
        for (int i = 0; i < pending.length; i++) {
            restored[i + 1] = offset + pending[i];
        }
        return new TrackedPosition(offset, restored, offset + above.get().end());
    }

    /**
     * A fetched record at {@code offset} arrived: true when it is to be delivered (it is tracked from now on),
     * false when the commit resumed from says it was completed before.
     *
     * @throws IllegalArgumentException when {@code offset} is not above every offset that arrived before
     */
    boolean arrived(long offset) {
        if (offset <= highestArrived) {
            throw new IllegalArgumentException("offset " + offset + " arrived after " + highestArrived
                    + "; offsets arrive ascending");
        }
        highestArrived = offset;
        while (restoredNext < restored.length && restored[restoredNext] < offset) {
            restoredNext++;
        }
        boolean wasUnfinished = restoredNext < restored.length && restored[restoredNext] == offset;
        if (wasUnfinished) {
            restoredNext++;
        } else if (offset < restoredEnd) {
            return false;
        }
        append(offset);
        return true;
    }

    /**
     * A delivery of {@code offset} completed (acknowledged, dropped, or copied to a retry or dead-letter topic): the
     * stored position moves up to the earliest unfinished delivery. False when {@code offset} is not an unfinished
     * delivery of this one (already completed, or never delivered).
     */
    boolean completed(long offset) {
        int at = indexOf(offset);
        if (at < 0 || done[slot(at)]) {
            return false;
        }
        done[slot(at)] = true;
        while (size > 0 && done[head]) {
            done[head] = false;
            head = (head + 1) % window.length;
            size--;
        }
        stored = position();
        return true;
    }

    /** The position the last completion stored; empty before the first. */
    OptionalLong stored() {
        return stored < 0 ? OptionalLong.empty() : OptionalLong.of(stored);
    }

    /**
     * What a commit of the {@link #stored} position keeps of the work done above it: empty when nothing above it is
     * known to be complete (every offset above it unfinished, or nothing stored). The window's offsets are below the commit's not yet arrived, so
     * the unfinished ones come out ascending.
     */
    Optional<TrackedCommitFormat.CompletedAbove> completedAbove() {
        if (stored < 0) {
            return Optional.empty();
        }
        long end = Math.max(highestArrived + 1, restoredEnd) - stored;
        if (end <= 1) {
            return Optional.empty();
        }
        long[] pending = new long[size + restored.length - restoredNext];
        int count = 0;
        for (int i = 0; i < size; i++) {
            long offset = window[slot(i)];
            if (!done[slot(i)] && offset > stored) {
                pending[count++] = offset - stored;
            }
        }
        for (int i = restoredNext; i < restored.length; i++) {
            if (restored[i] > stored) {
                pending[count++] = restored[i] - stored;
            }
        }
        if (count == end - 1) {
            return Optional.empty();
        }
        return Optional.of(new TrackedCommitFormat.CompletedAbove(end, Arrays.copyOf(pending, count)));
    }

    /** The deliveries not completed, and the commit's unfinished offsets not yet arrived. */
    int unfinishedCount() {
        int count = restored.length - restoredNext;
        for (int i = 0; i < size; i++) {
            count += done[slot(i)] ? 0 : 1;
        }
        return count;
    }

    private long position() {
        long earliest = Long.MAX_VALUE;
        if (size > 0) {
            earliest = window[head];
        }
        if (restoredNext < restored.length) {
            earliest = Math.min(earliest, restored[restoredNext]);
        }
        return earliest != Long.MAX_VALUE ? earliest : Math.max(highestArrived + 1, restoredEnd);
    }

    private void append(long offset) {
        if (size == window.length) {
            long[] grown = new long[window.length * 2];
            boolean[] grownDone = new boolean[window.length * 2];
            for (int i = 0; i < size; i++) {
                grown[i] = window[slot(i)];
                grownDone[i] = done[slot(i)];
            }
            window = grown;
            done = grownDone;
            head = 0;
        }
        window[slot(size)] = offset;
        done[slot(size)] = false;
        size++;
    }

    /** Where {@code offset} sits in the window (0 = the head), or -1. */
    private int indexOf(long offset) {
        int low = 0;
        int high = size - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            long value = window[slot(mid)];
            if (value < offset) {
                low = mid + 1;
            } else if (value > offset) {
                high = mid - 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    private int slot(int index) {
        return (head + index) % window.length;
    }
}
