package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Bounds the producer's memory: counts the bytes of records accepted and not yet acknowledged or failed against
 * {@code buffer.memory}. A send that would pass the bound blocks until acknowledgements free enough, for at most
 * {@code max.block.ms}, and then fails.
 *
 * <p>The wait is measured on {@link System#nanoTime()}, not on the producer's clock: it bounds how long a
 * caller's thread blocks, and a wall clock that jumps (or a test clock that stands still) must not change that.
 *
 * <p>Thread-safe: one lock and condition.
 */
final class MemoryBudget {
    private final long limitBytes;
    private final long maxBlockMs;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();
    private long usedBytes;

    /** @param maxBlockMs the producer's max.block.ms, as an error names it */
    MemoryBudget(long limitBytes, long maxBlockMs) {
        this.limitBytes = limitBytes;
        this.maxBlockMs = maxBlockMs;
    }

    /**
     * Takes {@code bytes}, waiting up to {@code waitMs} for room: what is left of max.block.ms for this send.
     *
     * @throws TidemarkException NOT_AVAILABLE naming buffer.memory and max.block.ms when no room came in time, or
     *                           when the thread was interrupted while waiting (its interrupt flag is kept)
     */
    void reserve(long bytes, long waitMs) {
        if (bytes > limitBytes) {
            throw new IllegalArgumentException(bytes + " bytes can never fit buffer.memory=" + limitBytes);
        }
        lock.lock();
        try {
            long remainingNanos = TimeUnit.MILLISECONDS.toNanos(waitMs);
            while (usedBytes + bytes > limitBytes) {
                if (remainingNanos <= 0) {
                    throw full(bytes, "");
                }
                remainingNanos = freed.awaitNanos(remainingNanos);
            }
            usedBytes += bytes;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw full(bytes, " (interrupted while waiting)");
        } finally {
            lock.unlock();
        }
    }

    void release(long bytes) {
        lock.lock();
        try {
            if (bytes > usedBytes) {
                throw new IllegalStateException("releasing " + bytes + " bytes, but only " + usedBytes
                        + " are reserved");
            }
            usedBytes -= bytes;
            freed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    long usedBytes() {
        lock.lock();
        try {
            return usedBytes;
        } finally {
            lock.unlock();
        }
    }

    private TidemarkException full(long bytes, String why) {
        return new TidemarkException(ErrorCode.NOT_AVAILABLE, "send blocked for max.block.ms=" + maxBlockMs
                + " waiting for room in buffer.memory=" + limitBytes + " bytes" + why + ": " + usedBytes
                + " bytes of records are not yet acknowledged and this record needs " + bytes
                + "; the brokers are slow or unreachable, or records are produced faster than they are acknowledged");
    }
}
