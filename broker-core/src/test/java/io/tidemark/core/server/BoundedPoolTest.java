package io.tidemark.core.server;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BoundedPoolTest {
    private final ThreadPoolExecutor pool = BoundedPool.create("tidemark-rpc-%d", 2);
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void stop() {
        release.countDown();
        pool.shutdownNow();
    }

    /** Tasks beyond the bound wait for a thread instead of each getting one (gRPC's default pool grew without end). */
    @Test
    void tasksBeyondTheBoundWaitForAThread() {
        List<String> ran = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 5; i++) {
            pool.execute(() -> {
                ran.add(Thread.currentThread().getName());
                waitFor(release);
            });
        }
        await().until(() -> ran.size() == 2);
        assertEquals(2, pool.getPoolSize());
        assertEquals(3, pool.getQueue().size());

        release.countDown();
        await().until(() -> ran.size() == 5);
        assertEquals(2, pool.getLargestPoolSize());
        assertTrue(ran.stream().allMatch(name -> name.startsWith("tidemark-rpc-")), ran.toString());
    }

    @Test
    void itsThreadsAreDaemonsAndEndWhenIdle() {
        CountDownLatch daemon = new CountDownLatch(1);
        pool.execute(() -> {
            if (Thread.currentThread().isDaemon()) {
                daemon.countDown();
            }
        });
        await().until(() -> daemon.getCount() == 0);
        assertTrue(pool.allowsCoreThreadTimeOut());
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
