package io.tidemark.core.log.index;

import java.io.IOException;
import java.nio.MappedByteBuffer;

/**
 * A time index of a segment: sparse {@code time -> offset} entries where the time is the largest seen in the
 * segment up to and including the batch at the offset. Two files share this format:
 * <ul>
 *   <li>{@code .timeindex}: ReceiveTime. ReceiveTime never decreases in a partition, so the largest so far is
 *       the batch's own ReceiveTime.</li>
 *   <li>{@code .sendindex}: SendTime. SendTimes arrive in any order, so the running maximum is what makes the
 *       entries sorted and a binary search safe.</li>
 * </ul>
 * Either way, an entry {@code (t, o)} with {@code t < target} proves that no record before offset {@code o},
 * nor in the batch at {@code o}, has a time at or after {@code target}; so the first record at or after
 * {@code target} is found by scanning from the last such entry ({@link #scanStartOffset}). The lookup is exact
 * because the scan, not the index, decides.
 *
 * <h2>Entry (12 bytes, big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      Time (int64, ms)                         |  0
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                   Relative Offset (int32)                     |  8
 * +---------------------------------------------------------------+
 * </pre>
 * Time never decreases from entry to entry; Relative Offset (base offset of the batch minus the segment's
 * base offset) strictly increases. No header; entries are added at the same batches as {@link OffsetIndex}
 * entries, and the file is trimmed to its entries when the segment rolls. This class is a view over a map of the
 * file ({@link MappedIndex}); the file's state is its {@link IndexFile}.
 *
 * <p>After a crash: rebuilt from the log, like {@link OffsetIndex}.
 */
public final class TimeIndex extends MappedIndex {
    public static final int ENTRY_SIZE = 12;
    public static final String RECEIVE_TIME_SUFFIX = ".timeindex";
    public static final String SEND_TIME_SUFFIX = ".sendindex";

    private TimeIndex(IndexFile file, MappedByteBuffer buffer) {
        super(file, ENTRY_SIZE, buffer);
    }

    /** Maps {@code file}; {@link #close()} unmaps it. */
    public static TimeIndex map(IndexFile file) throws IOException {
        return new TimeIndex(file, file.map());
    }

    /** Adds an entry: {@code timeMs} is the largest time up to and including the batch at {@code offset}. */
    public void append(long timeMs, long offset) {
        int slot = slotForAppend();
        if (slot > 0 && (offset <= offsetAt(slot - 1) || timeMs < timeAt(slot - 1))) {
            throw new IllegalStateException("entry (" + timeMs + ", " + offset + ") does not follow ("
                    + timeAt(slot - 1) + ", " + offsetAt(slot - 1) + ") in " + file());
        }
        buffer().putLong(slotPosition(slot), timeMs);
        buffer().putInt(slotPosition(slot) + 8, relativeOffset(offset));
        publishEntry();
    }

    /**
     * Where a scan for the first record with a time at or after {@code targetMs} may start: the offset of the
     * last entry whose time is below the target, or the segment's base offset when none is.
     */
    public long scanStartOffset(long targetMs) {
        int slot = lastSlotWithKeyBelow(targetMs);
        return slot < 0 ? baseOffset() : offsetAt(slot);
    }

    public long timeAt(int slot) {
        return buffer().getLong(slotPosition(slot));
    }

    @Override
    protected long keyAt(int slot) {
        return timeAt(slot);
    }

    @Override
    protected int relativeOffsetAt(int slot) {
        return buffer().getInt(slotPosition(slot) + 8);
    }
}
