package io.tidemark.core.server;

import com.google.common.util.concurrent.ThreadFactoryBuilder;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A pool of daemon threads made as tasks need them, up to a bound, and ended after a minute idle: an idle broker holds
 * none, a task under way never keeps the JVM alive, and nothing needs to shut the pool down. A task goes to an idle
 * thread when there is one, else to a new thread, else, at the bound, waits in the pool's queue for a thread. The
 * broker's gRPC calls run on one ({@link GrpcEndpoint}: gRPC's default executor, an unbounded cached pool, grew a
 * thread for every call waiting on a Raft group, as many as clients sent), the partition groups' snapshot writes on
 * another.
 *
 * <p>Why not a plain {@link ThreadPoolExecutor}: with a queue it grows past its core size only when the queue is full,
 * and below its core size it makes a thread for every task even when others are idle (256 threads per broker after
 * creating a topic of 10,000 partitions); without a queue it refuses tasks at its bound. {@link IdleFirstQueue} takes a
 * task only when a thread waits for one, so the pool makes threads as a cached pool does, up to the bound.
 */
public final class BoundedPool {
    private static final long IDLE_MS = 60_000;

    private BoundedPool() {
    }

    /** @param nameFormat the threads' names, {@code %d} their number */
    public static ThreadPoolExecutor create(String nameFormat, int maxThreads) {
        IdleFirstQueue queue = new IdleFirstQueue();
        return new ThreadPoolExecutor(0, maxThreads, IDLE_MS, TimeUnit.MILLISECONDS, queue,
                new ThreadFactoryBuilder().setNameFormat(nameFormat).setDaemon(true).build(),
                (task, pool) -> queue.enqueue(task));
    }

    /**
     * The pool's queue: takes a task offered only while more threads wait for tasks than tasks wait for threads (the
     * pool then makes a thread instead, or refuses the task at its bound, and the refusal {@link #enqueue}s it).
     */
    private static final class IdleFirstQueue extends LinkedBlockingQueue<Runnable> {
        private final AtomicInteger waitingThreads = new AtomicInteger();

        @Override
        public boolean offer(Runnable task) {
            return waitingThreads.get() > size() && super.offer(task);
        }

        /** Queues a task the pool refused at its bound: it runs when a thread is free. */
        void enqueue(Runnable task) {
            super.offer(task);
        }

        @Override
        public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
            waitingThreads.incrementAndGet();
            try {
                return super.poll(timeout, unit);
            } finally {
                waitingThreads.decrementAndGet();
            }
        }

        @Override
        public Runnable take() throws InterruptedException {
            waitingThreads.incrementAndGet();
            try {
                return super.take();
            } finally {
                waitingThreads.decrementAndGet();
            }
        }
    }
}
