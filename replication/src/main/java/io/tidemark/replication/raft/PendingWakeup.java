package io.tidemark.replication.raft;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A wake-up for one thread that waits for work between checks of it: a signal given while the thread is not waiting
 * (after it checked and found nothing, before it waits) is kept, and ends its next wait at once. Ratis' {@code
 * AwaitForSignal} (3.2) loses such a signal: {@code signal()} swaps in a fresh flag before it sets the old one, and a
 * timed {@code await} checks the fresh one, so the waiter sleeps its whole timeout with the work already there.
 *
 * <p>Thread-safe: any thread signals; one thread waits.
 */
final class PendingWakeup {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition signaled = lock.newCondition();
    /** A signal not yet taken by a wait; guarded by {@link #lock}. */
    private boolean pending;

    /** Wakes the waiting thread, or, when none waits, its next wait. */
    void signal() {
        lock.lock();
        try {
            pending = true;
            signaled.signal();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until a signal given since the last wait returned, or for {@code timeout} when there is none; takes the
     * signal.
     *
     * @return whether a signal ended the wait (false: the time ran out)
     * @throws InterruptedException when the thread is interrupted (its appender stops)
     */
    boolean await(long timeout, TimeUnit unit) throws InterruptedException {
        long nanos = unit.toNanos(timeout);
        lock.lock();
        try {
            while (!pending && nanos > 0) {
                nanos = signaled.awaitNanos(nanos);
            }
            boolean woken = pending;
            pending = false;
            return woken;
        } finally {
            lock.unlock();
        }
    }
}
