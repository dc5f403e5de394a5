package io.tidemark.core.server;

import com.google.common.util.concurrent.ThreadFactoryBuilder;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A pool of daemon threads made as tasks need them, up to a bound, and ended after a minute idle: an idle broker holds
 * none, a task under way never keeps the JVM alive, and nothing needs to shut the pool down. Tasks beyond the bound wait
 * in the pool's queue for a thread. The broker's gRPC calls run on one ({@link GrpcEndpoint}: gRPC's default
 * executor, an unbounded cached pool, grew a thread for every call waiting on a Raft group, as many as clients sent),
 * the partition groups' snapshot writes on another.
 */
public final class BoundedPool {
    private static final long IDLE_MS = 60_000;

    private BoundedPool() {
    }

    /** @param nameFormat the threads' names, {@code %d} their number */
    public static ThreadPoolExecutor create(String nameFormat, int maxThreads) {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(maxThreads, maxThreads, IDLE_MS, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), new ThreadFactoryBuilder().setNameFormat(nameFormat).setDaemon(true)
                .build());
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
