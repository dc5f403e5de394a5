package io.tidemark.core.partition;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

class AppendWaitersTest {
    @Test
    void aWakeRunsEveryWaiterOnceAndForgetsThem() {
        AppendWaiters waiters = new AppendWaiters();
        AtomicInteger runs = new AtomicInteger();
        waiters.await(runs::incrementAndGet);
        waiters.await(runs::incrementAndGet);
        assertEquals(2, waiters.waiting());

        waiters.wake();
        waiters.wake();

        assertEquals(2, runs.get());
        assertEquals(0, waiters.waiting());
    }

    /** A partition that sees no append holds none of the waits that ended on it (the long polls that timed out). */
    @Test
    void aClosedWaiterIsForgottenAndNeverRuns() {
        AppendWaiters waiters = new AppendWaiters();
        AtomicInteger runs = new AtomicInteger();
        for (int poll = 0; poll < 100_000; poll++) {
            waiters.await(runs::incrementAndGet).close();
        }
        assertEquals(0, waiters.waiting());

        AppendWaiters.Waiter woken = waiters.await(runs::incrementAndGet);
        waiters.wake();
        woken.close();

        assertEquals(1, runs.get());
        assertEquals(0, waiters.waiting());
    }

    @Test
    void wokenNowRunsAtOnceAndClosesToNothing() {
        AtomicInteger runs = new AtomicInteger();
        AppendWaiters.wokenNow(runs::incrementAndGet).close();
        assertEquals(1, runs.get());
    }
}
