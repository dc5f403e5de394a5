package io.tidemark.core.partition;

import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What waits for a partition's next append (long-polling fetches, a group offset store catching up), woken once at
 * the next append. A waiter that stops waiting (its fetch timed out) is forgotten at once, so a partition that sees no
 * appends holds none of the waits that ended on it: a {@code CompletableFuture} completed at each append, as before,
 * kept a dependent of every timed-out long poll until the next append (about 66 bytes a poll, without bound on an
 * idle partition).
 *
 * <p>Thread-safe: waiters come and go on any thread; {@link #wake} runs them on the appending thread, so what a waiter
 * runs must only hand off (complete a future whose work runs elsewhere).
 */
public final class AppendWaiters {
    private final Set<Waiter> waiting = ConcurrentHashMap.newKeySet();

    /**
     * Runs {@code onAppend} once, at the next {@link #wake} (or at one under way), unless the waiter is closed first:
     * a waiter checks what it waits for after this call, so an early wake costs it only a second look.
     */
    public Waiter await(Runnable onAppend) {
        Waiter waiter = new Waiter(waiting, onAppend);
        waiting.add(waiter);
        return waiter;
    }

    /** Runs {@code onAppend} now: for a partition with nothing to wait for (this replica stopped hosting it). */
    public static Waiter wokenNow(Runnable onAppend) {
        onAppend.run();
        return new Waiter(Collections.emptySet(), onAppend);
    }

    /** A batch was appended, or the partition is going away: runs and forgets every waiter. */
    public void wake() {
        for (Waiter waiter : waiting) {
            if (waiting.remove(waiter)) {
                waiter.onAppend.run();
            }
        }
    }

    /** How many wait now. */
    public int waiting() {
        return waiting.size();
    }

    /** One wait; closing it forgets it (nothing when it was woken already). */
    public static final class Waiter implements AutoCloseable {
        private final Set<Waiter> in;
        private final Runnable onAppend;

        private Waiter(Set<Waiter> in, Runnable onAppend) {
            this.in = in;
            this.onAppend = onAppend;
        }

        @Override
        public void close() {
            in.remove(this);
        }
    }
}
