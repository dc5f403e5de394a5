package io.tidemark.client.api;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Runs work in order within a lane and in parallel across lanes, on a shared executor: a lane is a queue that at
 * most one worker drains at a time, for up to {@value #TURN} items before it yields its worker to other lanes.
 * A {@link ConsumerRuntime} makes a lane per partition (records of a partition handled one at a time, in offset
 * order) or per partition and key.
 *
 * <p>Items are added by one thread ({@link #add}, the runtime's polling thread) and put back at the front of their
 * lane by the worker running it ({@link #putBack}); a lane left empty is retired, and the next item for its key
 * makes a new one, so lanes per key do not accumulate. Once the executor refuses work (shut down), the items still
 * queued stay unrun.
 *
 * @param <T> the work item
 */
final class WorkLanes<T> {
    /** Items a lane runs before it yields its worker. */
    static final int TURN = 64;

    private final Executor workers;
    private final Consumer<T> run;
    private final Map<Object, Lane> lanes = new ConcurrentHashMap<>();

    /** @param run runs an item, on a worker, never two of one lane at once; it must not throw */
    WorkLanes(Executor workers, Consumer<T> run) {
        this.workers = workers;
        this.run = run;
    }

    /** Queues {@code item} at the end of lane {@code key}. */
    void add(Object key, T item) {
        while (true) {
            Lane lane = lanes.computeIfAbsent(key, Lane::new);
            synchronized (lane) {
                if (lane.retired) {
                    continue;
                }
                lane.items.addLast(item);
                if (!lane.scheduled) {
                    lane.scheduled = true;
                    workers.execute(lane);
                }
                return;
            }
        }
    }

    /** Puts {@code item} back at the front of lane {@code key}, from the worker running that lane. */
    void putBack(Object key, T item) {
        Lane lane = lanes.get(key);
        synchronized (lane) {
            lane.items.addFirst(item);
        }
    }

    /** Removes the queued items that {@code drop} matches, from every lane; returns how many. */
    int remove(Predicate<T> drop) {
        int removed = 0;
        for (Lane lane : lanes.values()) {
            synchronized (lane) {
                int before = lane.items.size();
                lane.items.removeIf(drop);
                removed += before - lane.items.size();
            }
        }
        return removed;
    }

    private final class Lane implements Runnable {
        private final Object key;
        private final Deque<T> items = new ArrayDeque<>();
        private boolean scheduled;
        private boolean retired;

        Lane(Object key) {
            this.key = key;
        }

        @Override
        public void run() {
            for (int i = 0; i < TURN; i++) {
                T item;
                synchronized (this) {
                    item = items.pollFirst();
                    if (item == null) {
                        scheduled = false;
                        retired = true;
                        lanes.remove(key, this);
                        return;
                    }
                }
                run.accept(item);
            }
            try {
                workers.execute(this);
            } catch (RejectedExecutionException e) {
                synchronized (this) {
                    scheduled = false;
                }
            }
        }
    }
}
