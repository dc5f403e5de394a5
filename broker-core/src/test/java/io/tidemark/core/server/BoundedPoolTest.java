package io.tidemark.core.server;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BoundedPoolTest {
    private final ThreadPoolExecutor pool = BoundedPool.create("tidemark-rpc-%d", 2);
    private final CountDownLatch release = new CountDownLatch(1);
    private final List<String> ran = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        release.countDown();
        pool.shutdownNow();
    }

    /** A task that notes the thread it ran on and waits for the test to release it. */
    private void held() {
        pool.execute(() -> {
            ran.add(Thread.currentThread().getName());
            waitFor(release);
        });
    }

    /** Tasks beyond the bound wait for a thread instead of each getting one (gRPC's default pool grew without end). */
    @Test
    void tasksBeyondTheBoundWaitForAThread() {
        for (int i = 0; i < 5; i++) {
            held();
        }
        await().until(() -> ran.size() == 2);
        assertEquals(2, pool.getPoolSize());
        assertEquals(3, pool.getQueue().size());

        release.countDown();
        await().until(() -> ran.size() == 5);
        assertEquals(2, pool.getLargestPoolSize());
        assertTrue(ran.stream().allMatch(name -> name.startsWith("tidemark-rpc-")), ran.toString());
    }

    /**
     * A task goes to an idle thread rather than a new one: a plain ThreadPoolExecutor below its core size made a
     * thread for every task (256 per broker after creating a topic of 10,000 partitions).
     */
    @Test
    void anIdleThreadTakesTheNextTaskInsteadOfANewOne() {
        for (int i = 0; i < 5; i++) {
            AtomicReference<Thread> worker = new AtomicReference<>();
            pool.execute(() -> worker.set(Thread.currentThread()));
            await("the thread waits for the next task").until(() -> worker.get() != null
                    && worker.get().getState() == Thread.State.TIMED_WAITING);
        }
        assertEquals(1, pool.getLargestPoolSize());
    }

    @Test
    void itsThreadsAreDaemonsAndEndAfterAMinuteIdle() {
        CountDownLatch daemon = new CountDownLatch(1);
        pool.execute(() -> {
            if (Thread.currentThread().isDaemon()) {
                daemon.countDown();
            }
        });
        await().until(() -> daemon.getCount() == 0);
        assertEquals(0, pool.getCorePoolSize());
        assertEquals(60_000, pool.getKeepAliveTime(TimeUnit.MILLISECONDS));
    }

    private static void waitFor(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
