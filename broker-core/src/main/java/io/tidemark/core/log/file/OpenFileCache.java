package io.tidemark.core.log.file;

import io.tidemark.core.config.BrokerConfig;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The bound on the segment files a process holds open ({@code log.open.files.max}): every partition log of the
 * process opens its segments' files through one cache, so the number of open log files, and of index maps (at most
 * three per open segment), follows the configuration and not the number of partitions or segments.
 *
 * <ul>
 *   <li>{@link #open} opens an owner's files as a {@link CachedFile} and leases it; when the cache is full it first
 *       closes the file least recently used that no one leases, or waits until a lease ends. The count of open
 *       files never passes the capacity: an evicted file is closed before the new one is opened.</li>
 *   <li>Which file goes is decided by the clock algorithm (second chance), an approximation of least recently used
 *       whose hit costs no lock: a lease sets a "used" bit, the hand clears it as it passes and evicts the first file
 *       it finds unused and unleased. A strict LRU list would take a lock on every read. A file's opening lease does
 *       not mark it, so files read once go before files in repeated use.</li>
 *   <li>Owners retire their file when its state changes under it (segment deleted, truncated, log closed): it leaves
 *       the cache at once and closes when its last lease ends; it counts as open until then.</li>
 * </ul>
 *
 * <p>A thread holds at most one lease at a time (segment reads, appends and scans each lease one segment and give
 * it back before the next); since a waiting thread holds none, the leases it waits for always end, whatever the
 * capacity. Leasing two files at once could deadlock a small cache and is not done.
 *
 * <p>Threading: thread-safe. Leases of open files take no lock ({@link CachedFile#tryRetain()}); opening, eviction
 * and retirement take the cache's lock, and the files are opened and closed outside it.
 */
public final class OpenFileCache {
    private static final OpenFileCache SHARED = new OpenFileCache(
            (int) BrokerConfig.LOG_OPEN_FILES_MAX.defaultValue());

    /** Guards the ring, the hand, the capacity and the count of open files. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition leaseEnded = lock.newCondition();
    /** Files in the cache, in no order; the clock hand walks it round. */
    private final ArrayList<CachedFile> ring = new ArrayList<>();
    private int hand;
    private int capacity;
    /** Files open: in the ring, being opened, or retired with leases left. */
    private int open;
    /** Threads in {@link #reserve()} looking for room; written under the lock, read without it on lease end. */
    private volatile int waiters;
    private final LongAdder evictions = new LongAdder();
    private final LongAdder waits = new LongAdder();

    /** A cache of {@code capacity} open files; the broker's is {@link #shared()}. */
    public OpenFileCache(int capacity) {
        this.capacity = checkCapacity(capacity);
    }

    /**
     * The process's cache, which partition logs use unless given another; the broker sizes it from
     * {@code log.open.files.max} at start ({@link #resize}). One per process because the limit it keeps under, the
     * open files a process may have, is per process, however many brokers run in it.
     */
    public static OpenFileCache shared() {
        return SHARED;
    }

    /** Opens an owner's files. */
    @FunctionalInterface
    public interface Opener<F extends CachedFile> {
        F open() throws IOException;
    }

    /**
     * Opens files with {@code opener} once the cache has room for them, puts them in the cache and returns them
     * leased (end the lease with {@link CachedFile#close()}). When the cache is full, the least recently used file no
     * one leases is closed first; when every file is leased, this waits until a lease ends.
     *
     * @throws InterruptedIOException when interrupted while waiting
     */
    public <F extends CachedFile> F open(Opener<F> opener) throws IOException {
        reserve();
        F file;
        try {
            file = opener.open();
        } catch (IOException | RuntimeException e) {
            closed();
            throw e;
        }
        lock.lock();
        try {
            file.leaseAtOpen();
            file.slot = ring.size();
            ring.add(file);
        } finally {
            lock.unlock();
        }
        return file;
    }

    /**
     * Takes room for one file, closing an evicted one first when the cache is full. A waiter is counted before it
     * looks for a file to evict, so a lease that ends after the look sees it and wakes it ({@link #leaseEnded}).
     */
    private void reserve() throws InterruptedIOException {
        CachedFile evicted = null;
        lock.lock();
        try {
            while (open >= capacity && evicted == null) {
                waiters++;
                try {
                    evicted = evictOne();
                    if (evicted == null) {
                        awaitLeaseEnd();
                    }
                } finally {
                    waiters--;
                }
            }
            if (evicted == null) {
                open++;
            }
        } finally {
            lock.unlock();
        }
        if (evicted != null) {
            evicted.closeFiles();
            evictions.increment();
        }
    }

    private void awaitLeaseEnd() throws InterruptedIOException {
        waits.increment();
        try {
            leaseEnded.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for one of the " + capacity
                    + " open files (log.open.files.max) to be given back");
        }
    }

    /**
     * Moves the clock hand until it finds a file unused since the hand last passed and unleased, takes it out of the
     * ring and returns it (still open, its place in {@link #open} passing to the caller); null when two turns find
     * every file leased. Called under the lock.
     */
    private CachedFile evictOne() {
        for (int steps = 2 * ring.size(); steps > 0; steps--) {
            if (hand >= ring.size()) {
                hand = 0;
            }
            CachedFile file = ring.get(hand);
            if (!file.usedSinceLastSweep() && file.tryEvict()) {
                removeFromRing(file);
                return file;
            }
            hand++;
        }
        return null;
    }

    /** Takes a file out of the ring by moving the last one into its place. Called under the lock. */
    private void removeFromRing(CachedFile file) {
        CachedFile last = ring.remove(ring.size() - 1);
        if (last != file) {
            last.slot = file.slot;
            ring.set(file.slot, last);
        }
        file.slot = -1;
    }

    /**
     * Takes a file out of the cache for good: closed now when no one leases it, else when its last lease ends. Does
     * nothing when it is no longer in the cache (evicted or retired before).
     */
    public void retire(CachedFile file) {
        boolean last;
        lock.lock();
        try {
            if (file.slot < 0) {
                return;
            }
            removeFromRing(file);
            file.markRetired();
            last = file.dropCacheReference();
        } finally {
            lock.unlock();
        }
        if (last) {
            file.closeFiles();
            closed();
        }
    }

    /** A file was closed by its last lease, or failed to open: its room is free. */
    void closed() {
        lock.lock();
        try {
            open--;
            leaseEnded.signal();
        } finally {
            lock.unlock();
        }
    }

    /** A file's last lease ended, so it may be evicted: wakes a thread waiting for room. */
    void leaseEnded() {
        if (waiters > 0) {
            lock.lock();
            try {
                leaseEnded.signal();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Sets the capacity (the broker's {@code log.open.files.max}); when it shrinks, files no one leases are closed
     * now and leased ones as {@link #open} needs room.
     */
    public void resize(int newCapacity) {
        checkCapacity(newCapacity);
        ArrayList<CachedFile> evicted = new ArrayList<>();
        lock.lock();
        try {
            capacity = newCapacity;
            leaseEnded.signalAll();
            while (open - evicted.size() > capacity) {
                CachedFile file = evictOne();
                if (file == null) {
                    break;
                }
                evicted.add(file);
            }
        } finally {
            lock.unlock();
        }
        for (CachedFile file : evicted) {
            file.closeFiles();
            evictions.increment();
            closed();
        }
    }

    private static int checkCapacity(int capacity) {
        return (int) BrokerConfig.LOG_OPEN_FILES_MAX.validate(capacity);
    }

    public int capacity() {
        lock.lock();
        try {
            return capacity;
        } finally {
            lock.unlock();
        }
    }

    /** Files open now: at most {@link #capacity()}, unless it was just lowered. */
    public int openFiles() {
        lock.lock();
        try {
            return open;
        } finally {
            lock.unlock();
        }
    }

    /** Files closed to make room for others since the process started. */
    public long evictions() {
        return evictions.sum();
    }

    /** Times a thread waited for a lease to end because every open file was leased. */
    public long waits() {
        return waits.sum();
    }
}
