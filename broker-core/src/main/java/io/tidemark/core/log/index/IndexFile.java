package io.tidemark.core.log.index;

import io.tidemark.core.log.file.Disk;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One index file of a segment as the segment knows it for its whole life, mapped or not: where it is, how many
 * entries it holds and how many it has room for. It holds no file descriptor and no map; {@link #map()} maps it for
 * a view ({@link OffsetIndex}, {@link TimeIndex}) that lives as long as a lease of the segment's files.
 *
 * <ul>
 *   <li>Writable (the active segment's): the file is preallocated to its room (sparse: no disk blocks until an entry
 *       is written) and mapped read-write whole, so appending an entry is a store into memory, never a system
 *       call.</li>
 *   <li>Read-only (every other segment's): the file is exactly its entries, trimmed when its segment rolled, and is
 *       mapped read-only.</li>
 * </ul>
 * The number of entries of a file opened from disk is its length divided by the entry size; a preallocated file
 * left by a crash says nothing, and recovery rebuilds it.
 *
 * <p>Threading: one writer and any number of readers. The writer stores an entry's bytes before it publishes the
 * new count through a volatile field ({@link #publishEntry()}); readers read the count first and only look at slots
 * below it, which always lie inside the file, even after a trim and in a map made before it. Mapping and trimming
 * take this object's monitor (a reader may map the file while the writer rolls its segment).
 */
public final class IndexFile {
    private final Path file;
    private final long baseOffset;
    private final int entrySize;
    private final boolean openedWithWholeEntries;
    private volatile int entries;
    private volatile int capacityEntries;
    private volatile boolean writable;

    private IndexFile(Path file, long baseOffset, int entrySize, long length, int capacityEntries, boolean writable) {
        this.file = file;
        this.baseOffset = baseOffset;
        this.entrySize = entrySize;
        this.entries = (int) Math.min(length / entrySize, Integer.MAX_VALUE);
        this.openedWithWholeEntries = length % entrySize == 0;
        this.capacityEntries = writable ? capacityEntries : entries;
        this.writable = writable;
    }

    /** Creates an empty writable index file preallocated to {@code preallocateBytes} (rounded down to entries). */
    public static IndexFile create(Path file, long baseOffset, int entrySize, int preallocateBytes) throws IOException {
        Files.deleteIfExists(file);
        int capacity = preallocateBytes / entrySize;
        setLength(file, (long) capacity * entrySize);
        return new IndexFile(file, baseOffset, entrySize, 0, capacity, true);
    }

    /** Opens an index file as it is, to be read (an empty one when it is missing). */
    public static IndexFile open(Path file, long baseOffset, int entrySize) throws IOException {
        return new IndexFile(file, baseOffset, entrySize, length(file), 0, false);
    }

    /**
     * Opens an index file to take entries after those it holds: it is preallocated to {@code preallocateBytes}, or
     * kept at its length when that is larger.
     */
    public static IndexFile openWritable(Path file, long baseOffset, int entrySize, int preallocateBytes)
            throws IOException {
        long length = length(file);
        int capacity = (int) (Math.max(preallocateBytes, length) / entrySize);
        setLength(file, (long) capacity * entrySize);
        return new IndexFile(file, baseOffset, entrySize, length, capacity, true);
    }

    /** The file's length; a missing file is created empty. */
    private static long length(Path file) throws IOException {
        if (Files.exists(file)) {
            return Files.size(file);
        }
        Files.createFile(file);
        return 0;
    }

    /** Sets the length; growing leaves a hole (no disk blocks) that reads as zeros. */
    private static void setLength(Path file, long length) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(length);
        }
    }

    /**
     * Maps the file: read-write to its room when writable, else read-only to its entries. The file descriptor used
     * to map it is closed before this returns; the map stays until {@link MappedIndex#close()} unmaps it. Excludes
     * {@link #trimToEntries()}: a read-write map of the room made after the trim would grow the file back.
     */
    synchronized MappedByteBuffer map() throws IOException {
        if (writable) {
            try (FileChannel channel = Disk.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                return channel.map(FileChannel.MapMode.READ_WRITE, 0, (long) capacityEntries * entrySize);
            }
        }
        try (FileChannel channel = Disk.open(file, StandardOpenOption.READ)) {
            return channel.map(FileChannel.MapMode.READ_ONLY, 0, (long) entries * entrySize);
        }
    }

    /**
     * Cuts the file to its entries and fsyncs it (with the entries any map wrote: they are in the same pages); after
     * this the index is only read.
     */
    public synchronized void trimToEntries() throws IOException {
        try (FileChannel channel = Disk.open(file, StandardOpenOption.WRITE)) {
            channel.truncate((long) entries * entrySize);
            channel.force(true);
        }
        writable = false;
        capacityEntries = entries;
    }

    public void delete() throws IOException {
        Files.deleteIfExists(file);
    }

    public Path file() {
        return file;
    }

    public long baseOffset() {
        return baseOffset;
    }

    public int entrySize() {
        return entrySize;
    }

    public int entries() {
        return entries;
    }

    public boolean isFull() {
        return entries >= capacityEntries;
    }

    /** Whether the file's length was a whole number of entries when it was opened. */
    public boolean openedWithWholeEntries() {
        return openedWithWholeEntries;
    }

    /** The slot the next entry goes to; a full index is a programmer error (the log rolls before). */
    int slotForAppend() {
        if (isFull()) {
            throw new IllegalStateException("index " + file + " is full at " + entries + " entries");
        }
        return entries;
    }

    /** Called after the entry at {@link #slotForAppend()} was written. */
    void publishEntry() {
        entries = entries + 1;
    }

    @Override
    public String toString() {
        return file + " (" + entries + " entries" + (writable ? ", room for " + capacityEntries : "") + ")";
    }
}
