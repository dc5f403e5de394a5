package io.tidemark.client.api;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Lanes run their items in order, one at a time each, and in parallel with each other. */
class WorkLanesTest {
    @Test
    void eachLaneRunsItsItemsInOrderOneAtATimeWhileLanesRunInParallel() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        Map<Integer, List<Integer>> ran = new ConcurrentHashMap<>();
        Map<Integer, AtomicInteger> running = new ConcurrentHashMap<>();
        AtomicInteger overlapsWithinALane = new AtomicInteger();
        WorkLanes<int[]> lanes = new WorkLanes<>(pool, item -> {
            int lane = item[0];
            if (running.computeIfAbsent(lane, l -> new AtomicInteger()).incrementAndGet() > 1) {
                overlapsWithinALane.incrementAndGet();
            }
            ran.computeIfAbsent(lane, l -> new ArrayList<>()).add(item[1]);
            Thread.onSpinWait();
            running.get(lane).decrementAndGet();
        });
        int perLane = 5_000;
        for (int i = 0; i < perLane; i++) {
            for (int lane = 0; lane < 4; lane++) {
                lanes.add(lane, new int[]{lane, i});
            }
        }
        await().atMost(java.time.Duration.ofSeconds(30)).until(() -> ran.values().stream()
                .mapToInt(List::size).sum() == 4 * perLane);
        for (int lane = 0; lane < 4; lane++) {
            List<Integer> order = ran.get(lane);
            for (int i = 0; i < perLane; i++) {
                assertEquals(i, order.get(i), "lane " + lane);
            }
        }
        assertEquals(0, overlapsWithinALane.get());
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void aLaneWaitingDoesNotHoldTheOthers() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        CountDownLatch otherLaneRan = new CountDownLatch(1);
        CountDownLatch waiterDone = new CountDownLatch(1);
        WorkLanes<String> lanes = new WorkLanes<>(pool, item -> {
            if (item.equals("waits")) {
                awaitQuietly(otherLaneRan);
                waiterDone.countDown();
            } else {
                otherLaneRan.countDown();
            }
        });
        lanes.add("a", "waits");
        lanes.add("b", "frees");
        assertTrue(waiterDone.await(10, TimeUnit.SECONDS), "lane b ran while lane a waited for it");
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void anItemPutBackRunsBeforeTheRestOfItsLaneAndRemovedItemsNeverRun() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        List<String> ran = new ArrayList<>();
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger tries = new AtomicInteger();
        WorkLanes<String>[] holder = new WorkLanes[1];
        holder[0] = new WorkLanes<>(pool, item -> {
            if (item.equals("a1")) {
                firstStarted.countDown();
                awaitQuietly(release);
            }
            synchronized (ran) {
                ran.add(item);
            }
            if (item.equals("a2") && tries.incrementAndGet() < 3) {
                holder[0].putBack("a", item);
            }
        });
        WorkLanes<String> lanes = holder[0];
        lanes.add("a", "a1");
        assertTrue(firstStarted.await(10, TimeUnit.SECONDS));
        lanes.add("a", "a2");
        lanes.add("a", "a3");
        lanes.add("a", "gone");
        assertEquals(1, lanes.remove(item -> item.equals("gone")));
        release.countDown();
        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> {
            synchronized (ran) {
                return ran.size() == 5;
            }
        });
        assertEquals(List.of("a1", "a2", "a2", "a2", "a3"), ran);
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
