package io.tidemark.core.log.index;

import java.io.IOException;
import java.nio.MappedByteBuffer;

/**
 * The {@code .index} file of a segment: sparse {@code offset -> file position} entries, so a read finds the
 * batch holding an offset by a binary search here and a short scan of the log from the position found.
 *
 * <h2>Entry (8 bytes, big-endian)</h2>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   Relative Offset (int32)                     |  0
 * +---------------------------------------------------------------+
 * |                      Position (int32)                         |  4
 * +---------------------------------------------------------------+
 * </pre>
 * Relative Offset is a batch's base offset minus the segment's base offset (the file name); Position is
 * where that batch starts in the {@code .log} file. Both strictly increase from entry to entry. There is no
 * header: the file is entries only, trimmed to a whole number of them when the segment rolls (the active
 * segment's file is preallocated, so its length says nothing until it is trimmed on close). This class is a view
 * over a map of the file ({@link MappedIndex}); the file's state is its {@link IndexFile}.
 *
 * <p>One entry is added for the first batch appended after at least {@code index.interval.bytes} of batches
 * since the previous entry, at the same batches as {@link TimeIndex} entries. Position 0 is implied.
 *
 * <p>After a crash: recovery rebuilds it from the log when it is missing, not a whole number of entries,
 * out of order, or disagrees with the log or the time indexes.
 */
public final class OffsetIndex extends MappedIndex {
    public static final int ENTRY_SIZE = 8;
    public static final String SUFFIX = ".index";

    private OffsetIndex(IndexFile file, MappedByteBuffer buffer) {
        super(file, ENTRY_SIZE, buffer);
    }

    /** Maps {@code file}; {@link #close()} unmaps it. */
    public static OffsetIndex map(IndexFile file) throws IOException {
        return new OffsetIndex(file, file.map());
    }

    /** Adds the entry for the batch with base offset {@code offset} that starts at {@code position}. */
    public void append(long offset, int position) {
        int slot = slotForAppend();
        if (slot > 0 && (offset <= offsetAt(slot - 1) || position <= positionAt(slot - 1))) {
            throw new IllegalStateException("entry (" + offset + ", " + position + ") does not follow ("
                    + offsetAt(slot - 1) + ", " + positionAt(slot - 1) + ") in " + file());
        }
        buffer().putInt(slotPosition(slot), relativeOffset(offset));
        buffer().putInt(slotPosition(slot) + 4, position);
        publishEntry();
    }

    /** Position of the batch in the last entry whose offset is at most {@code offset}, or 0 when none is. */
    public int floorPosition(long offset) {
        int slot = lastSlotWithKeyBelow(offset - baseOffset() + 1);
        return slot < 0 ? 0 : positionAt(slot);
    }

    public int positionAt(int slot) {
        return buffer().getInt(slotPosition(slot) + 4);
    }

    @Override
    protected long keyAt(int slot) {
        return relativeOffsetAt(slot);
    }

    @Override
    protected int relativeOffsetAt(int slot) {
        return buffer().getInt(slotPosition(slot));
    }

    @Override
    public String inconsistency() {
        String order = super.inconsistency();
        if (order != null) {
            return order;
        }
        for (int slot = 1; slot < entries(); slot++) {
            if (positionAt(slot) <= positionAt(slot - 1)) {
                return "entry " + slot + " has position " + positionAt(slot) + ", not above the previous "
                        + positionAt(slot - 1);
            }
        }
        return null;
    }
}
