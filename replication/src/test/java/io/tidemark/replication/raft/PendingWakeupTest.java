package io.tidemark.replication.raft;

import org.apache.ratis.util.AwaitForSignal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class PendingWakeupTest {
    private final PendingWakeup wakeup = new PendingWakeup();

    @Test
    void aSignalGivenBeforeTheWaitEndsItAtOnceAndIsTakenByIt() throws InterruptedException {
        wakeup.signal();
        wakeup.signal();

        assertTrue(wakeup.await(1, TimeUnit.HOURS));
        assertFalse(wakeup.await(1, TimeUnit.MILLISECONDS), "two signals before one wait are one wake-up");
    }

    /** Why Tidemark's appender does not wait on Ratis' own: the same steps sleep the whole timeout there. */
    @Test
    void ratisAwaitForSignalLosesASignalGivenBeforeTheWait() throws InterruptedException {
        AwaitForSignal ratis = new AwaitForSignal("test");
        ratis.signal();

        assertFalse(ratis.await(20, TimeUnit.MILLISECONDS));
    }

    @Test
    void aSignalWakesTheThreadWaiting() {
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CompletableFuture<Boolean> woken = CompletableFuture.supplyAsync(() -> {
            waiter.set(Thread.currentThread());
            try {
                return wakeup.await(1, TimeUnit.HOURS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await().until(() -> waiter.get() != null && waiter.get().getState() == Thread.State.TIMED_WAITING);

        wakeup.signal();

        assertTrue(woken.join());
    }

    @Test
    void aWaitWithNoSignalEndsWhenItsTimeRunsOut() throws InterruptedException {
        assertFalse(wakeup.await(5, TimeUnit.MILLISECONDS));
        assertFalse(wakeup.await(0, TimeUnit.MILLISECONDS));
    }

    /** An appender stops by being interrupted. */
    @Test
    void anInterruptEndsTheWait() {
        Thread.currentThread().interrupt();

        assertThrows(InterruptedException.class, () -> wakeup.await(1, TimeUnit.HOURS));
        assertFalse(Thread.interrupted());
    }
}
