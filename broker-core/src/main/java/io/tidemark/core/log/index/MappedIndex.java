package io.tidemark.core.log.index;

import java.io.Closeable;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * A sparse index of fixed-size entries in a memory-mapped file, sorted by a key that never decreases. The
 * file of the active segment is preallocated to the configured size and mapped once, so appending an entry
 * is a store into memory and never a system call; when the segment rolls the file is trimmed to its entries.
 * The number of entries of a file opened from disk is its length divided by the entry size.
 *
 * <p>Threading: one writer (the log's append path) and any number of readers. The writer stores an entry's
 * bytes before it publishes the new count through a volatile field; readers read the count first and only
 * look at slots below it, which always lie inside the file even after a trim.
 */
public abstract class MappedIndex implements Closeable {
    private final Path file;
    private final long baseOffset;
    private final int entrySize;
    private final int maxEntries;
    private final boolean openedWithWholeEntries;
    private MappedByteBuffer mmap;
    private volatile int entries;

    /**
     * Opens or creates the index file.
     *
     * @param writable map {@code maxIndexBytes} (growing the file) so entries can be appended; otherwise map the
     *                 file as it is
     */
    MappedIndex(Path file, long baseOffset, int entrySize, int maxIndexBytes, boolean writable) throws IOException {
        this.file = file;
        this.baseOffset = baseOffset;
        this.entrySize = entrySize;
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            long length = raf.length();
            this.entries = (int) (length / entrySize);
            this.openedWithWholeEntries = length % entrySize == 0;
            long mapped = writable ? Math.max(roundDown(maxIndexBytes), length) : length;
            raf.setLength(mapped);
            this.maxEntries = (int) (mapped / entrySize);
            this.mmap = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, mapped);
        }
    }

    private int roundDown(int bytes) {
        return bytes - bytes % entrySize;
    }

    public Path file() {
        return file;
    }

    public long baseOffset() {
        return baseOffset;
    }

    public int entries() {
        return entries;
    }

    public boolean isFull() {
        return entries >= maxEntries;
    }

    /** Bytes the file holds when trimmed: entries times entry size. */
    public int sizeInBytes() {
        return entries * entrySize;
    }

    /** Whether the file's length was a whole number of entries when it was opened. */
    public boolean openedWithWholeEntries() {
        return openedWithWholeEntries;
    }

    protected final MappedByteBuffer mmap() {
        return mmap;
    }

    protected final int slotPosition(int slot) {
        return slot * entrySize;
    }

    /** The slot the next entry goes to; a full index is a programmer error (the log rolls before). */
    protected final int slotForAppend() {
        if (isFull()) {
            throw new IllegalStateException("index " + file + " is full at " + entries + " entries");
        }
        return entries;
    }

    /** Called by a subclass after it wrote the entry at {@link #slotForAppend()}. */
    protected final void publishEntry() {
        entries = entries + 1;
    }

    protected final int relativeOffset(long offset) {
        long relative = offset - baseOffset;
        if (relative < 0 || relative > Integer.MAX_VALUE) {
            throw new IllegalStateException("offset " + offset + " is outside index " + file + " with base "
                    + baseOffset);
        }
        return (int) relative;
    }

    /** The key entries are sorted by. */
    protected abstract long keyAt(int slot);

    /** The absolute offset an entry points at. */
    public final long offsetAt(int slot) {
        return baseOffset + relativeOffsetAt(slot);
    }

    protected abstract int relativeOffsetAt(int slot);

    /**
     * The largest slot whose key is strictly below {@code target}, or -1 when none is: binary search over the
     * entries published when it started.
     */
    protected final int lastSlotWithKeyBelow(long target) {
        int low = 0;
        int high = entries - 1;
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
        for (int slot = 1; slot < entries; slot++) {
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

    /** Shrinks the file to its entries; after this the index is only read. */
    public void trimToEntries() throws IOException {
        flush();
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(sizeInBytes());
            raf.getFD().sync();
        }
    }

    public void flush() {
        mmap.force();
    }

    /**
     * Forgets the mapping. Java unmaps it when the buffer is collected; the file stays.
     */
    @Override
    public void close() {
        mmap = null;
    }
}
