package io.tidemark.core.log.index;

import java.io.Closeable;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;

/**
 * A view of a sparse index of fixed-size entries, sorted by a key that never decreases, over a map of its
 * {@link IndexFile}. The file's state (entries, room) lives in the {@link IndexFile} for the segment's whole life;
 * a view lives as long as its map: a segment maps its indexes when a lease of its files first needs them and
 * {@link #close()} unmaps them when the files are closed (evicted, retired).
 *
 * <p>Threading: as {@link IndexFile}: one writer appends, readers read the count first and look only below it. A
 * view must not be used after {@link #close()}: the memory is gone.
 */
public abstract class MappedIndex implements Closeable {
    private final IndexFile file;
    private final MappedByteBuffer buffer;

    MappedIndex(IndexFile file, int entrySize, MappedByteBuffer buffer) {
        if (file.entrySize() != entrySize) {
            throw new IllegalStateException(file + " has " + file.entrySize() + "-byte entries, not " + entrySize);
        }
        this.file = file;
        this.buffer = buffer;
    }

    public IndexFile indexFile() {
        return file;
    }

    public Path file() {
        return file.file();
    }

    public long baseOffset() {
        return file.baseOffset();
    }

    public int entries() {
        return file.entries();
    }

    protected final MappedByteBuffer buffer() {
        return buffer;
    }

    protected final int slotPosition(int slot) {
        return slot * file.entrySize();
    }

    /** The slot the next entry goes to; a full index is a programmer error (the log rolls before). */
    protected final int slotForAppend() {
        return file.slotForAppend();
    }

    /** Called by a subclass after it wrote the entry at {@link #slotForAppend()}. */
    protected final void publishEntry() {
        file.publishEntry();
    }

    protected final int relativeOffset(long offset) {
        long relative = offset - baseOffset();
        if (relative < 0 || relative > Integer.MAX_VALUE) {
            throw new IllegalStateException("offset " + offset + " is outside index " + file() + " with base "
                    + baseOffset());
        }
        return (int) relative;
    }

    /** The key entries are sorted by. */
    protected abstract long keyAt(int slot);

    /** The absolute offset an entry points at. */
    public final long offsetAt(int slot) {
        return baseOffset() + relativeOffsetAt(slot);
    }

    protected abstract int relativeOffsetAt(int slot);

    /**
     * The largest slot whose key is strictly below {@code target}, or -1 when none is: binary search over the
     * entries published when it started.
     */
    protected final int lastSlotWithKeyBelow(long target) {
        int low = 0;
        int high = entries() - 1;
        int found = -1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            if (keyAt(mid) < target) {
                found = mid;
                low = mid + 1;
            } else {
                high = mid - 1;
            }
        }
        return found;
    }

    /**
     * Checks what can be checked without the log: offsets strictly increase and keys never decrease.
     *
     * @return null when consistent, else what is wrong
     */
    public String inconsistency() {
        for (int slot = 1; slot < entries(); slot++) {
            if (relativeOffsetAt(slot) <= relativeOffsetAt(slot - 1)) {
                return "entry " + slot + " has offset " + offsetAt(slot) + ", not above the previous "
                        + offsetAt(slot - 1);
            }
            if (keyAt(slot) < keyAt(slot - 1)) {
                return "entry " + slot + " has key " + keyAt(slot) + ", below the previous " + keyAt(slot - 1);
            }
        }
        return null;
    }

    /** Unmaps the file now; the file and its {@link IndexFile} stay. */
    @Override
    public void close() {
        Unmapper.unmap(buffer);
    }
}
