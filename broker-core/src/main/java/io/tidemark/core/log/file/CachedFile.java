package io.tidemark.core.log.file;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Files an {@link OpenFileCache} holds open and may close: what one owner (a segment) opened, taken and given
 * back in leases. A lease is a reference: {@link OpenFileCache#open} and {@link #tryRetain()} take one,
 * {@link #close()} ends it; while any is held the files stay open.
 *
 * <p>The count {@code refs} is one for the cache's own reference, held while the file is in the cache, plus one per
 * lease. The cache evicts only a file no one leases (the count goes 1 to 0 in one compare-and-set, so a lease
 * taken at the same moment either wins and the file stays, or fails and its taker opens the files again); a file
 * retired by its owner ({@link OpenFileCache#retire}: deleted, truncated, its log closed) leaves the cache at
 * once and is closed by whoever drops the last reference. A count of 0 is final: the files are closed or being
 * closed, and {@link #tryRetain()} fails.
 *
 * <p>Threading: leases are taken and ended by any thread without a lock; a lease is a compare-and-set on the count
 * and, when the file was not marked used since the cache's clock hand last passed, a store.
 */
public abstract class CachedFile implements AutoCloseable {
    private final OpenFileCache cache;
    /** The cache's reference while it holds the file, plus one per lease; 0: closed or closing. */
    private final AtomicInteger refs = new AtomicInteger(1);
    /**
     * The clock algorithm's "used since the hand last passed" bit. A file starts unmarked (its opening lease does not
     * count), so a file opened for one read goes before files in repeated use: a scan of old segments does not push
     * out the active ones.
     */
    private volatile boolean used;
    /** Out of the cache for good: no new lease, even while old ones keep it open. */
    private volatile boolean retired;
    /** Where the file is in the cache's ring, or -1 when it is not there; guarded by the cache's lock. */
    int slot = -1;

    protected CachedFile(OpenFileCache cache) {
        this.cache = cache;
    }

    /** Takes a lease when the file is still open and not retired. */
    public final boolean tryRetain() {
        if (retired) {
            return false;
        }
        for (int count = refs.get(); count > 0; count = refs.get()) {
            if (refs.compareAndSet(count, count + 1)) {
                if (!used) {
                    used = true;
                }
                return true;
            }
        }
        return false;
    }

    /** Ends a lease; the last reference of a retired file closes it. */
    @Override
    public final void close() {
        int count = refs.decrementAndGet();
        if (count == 0) {
            closeFiles();
            cache.closed();
        } else if (count == 1) {
            cache.leaseEnded();
        } else if (count < 0) {
            throw new IllegalStateException(this + " was given back more often than it was leased");
        }
    }

    /** Closes what the owner opened; called once, when no one holds a reference any more. */
    protected abstract void closeFiles();

    /**
     * Takes the file out of the cache for good ({@link OpenFileCache#retire}): for a file that cannot be used any
     * more, such as a channel closed by an interrupted thread. Later leases fail, so its owner opens it again.
     */
    protected final void retire() {
        cache.retire(this);
    }

    /** Marks the file retired; called by the cache under its lock. */
    final void markRetired() {
        retired = true;
    }

    /** The lease {@link OpenFileCache#open} hands out with a file it just opened, before other threads can see it. */
    final void leaseAtOpen() {
        refs.set(2);
    }

    /** The cache's eviction: succeeds only when no one leases the file. */
    final boolean tryEvict() {
        return refs.compareAndSet(1, 0);
    }

    /** Drops the cache's reference; true when that was the last one, so the caller closes the files. */
    final boolean dropCacheReference() {
        return refs.decrementAndGet() == 0;
    }

    /** One step of the clock hand: true when the file was used since it last passed (and clears the mark). */
    final boolean usedSinceLastSweep() {
        if (used) {
            used = false;
            return true;
        }
        return false;
    }
}
