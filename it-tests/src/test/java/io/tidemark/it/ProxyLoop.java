package io.tidemark.it;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One thread and one {@link Selector} that run every {@link LinkProxy} opened on it: accepting, connecting and
 * copying bytes for all their connections, so a whole cluster's links cost one thread however many connections
 * the brokers open.
 *
 * <p>Threading: the loop thread owns every channel, buffer and link state (single writer). Other threads reach them
 * only through {@link #call}, which queues a task, wakes the selector and waits until the loop ran it; a
 * {@link LinkProxy#cut()} is therefore in effect when it returns. {@link #close()} stops the thread and closes every
 * link and connection.
 */
final class ProxyLoop implements Closeable {
    /** How long a caller waits for the loop to run its task: the loop only copies bytes, so this is generous. */
    private static final long TASK_WAIT_MS = 10_000;
    /** How long {@link #close()} waits for the thread to end. */
    private static final long STOP_WAIT_MS = 10_000;

    /** What the loop calls when a channel's key is ready. */
    interface Handler {
        void ready(SelectionKey key) throws IOException;
    }

    private final Selector selector;
    private final Thread thread;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** Loop thread only. */
    private final List<LinkProxy> links = new ArrayList<>();
    private volatile boolean running = true;

    private ProxyLoop(String name) throws IOException {
        this.selector = Selector.open();
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
    }

    static ProxyLoop start(String name) throws IOException {
        ProxyLoop loop = new ProxyLoop(name);
        loop.thread.start();
        return loop;
    }

    /** A link listening on 127.0.0.1 at a free port (below the ephemeral range), forwarding to 127.0.0.1:targetPort. */
    LinkProxy open(String name, int targetPort) {
        return call(() -> {
            try {
                LinkProxy link = LinkProxy.open(this, name, targetPort);
                links.add(link);
                return link;
            } catch (IOException e) {
                throw new UncheckedIOException("opening link " + name, e);
            }
        });
    }

    Selector selector() {
        return selector;
    }

    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /**
     * Runs {@code task} on the loop thread and returns its result, waiting at most 10 s. Called on the loop thread,
     * it runs the task at once.
     */
    <T> T call(Supplier<T> task) {
        if (inLoop()) {
            return task.get();
        }
        if (!running) {
            throw new IllegalStateException(thread.getName() + " is closed");
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        tasks.add(() -> {
            try {
                result.complete(task.get());
            } catch (RuntimeException | Error e) {
                result.completeExceptionally(e);
            }
        });
        selector.wakeup();
        try {
            return result.get(TASK_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for " + thread.getName(), e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException(thread.getName() + " did not run a task within " + TASK_WAIT_MS + " ms");
        }
    }

    void run(Runnable task) {
        call(() -> {
            task.run();
            return null;
        });
    }

    private void run() {
        try {
            while (running) {
                selector.select();
                runTasks();
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    dispatch(key);
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            System.err.println(thread.getName() + " stopped: " + e);
        } finally {
            running = false;
            links.forEach(LinkProxy::closeNow);
            runTasks();
            try {
                selector.close();
            } catch (IOException e) {
                System.err.println(thread.getName() + ": closing the selector failed: " + e);
            }
        }
    }

    private void runTasks() {
        for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
            task.run();
        }
    }

    private static void dispatch(SelectionKey key) {
        if (!key.isValid()) {
            return;
        }
        try {
            ((Handler) key.attachment()).ready(key);
        } catch (IOException | RuntimeException e) {
            // A connection's failure ends that connection only (its handler aborted it); the loop goes on.
            System.err.println("proxy: " + key.attachment() + ": " + e);
        }
    }

    /** Stops the thread (waiting up to 10 s), which closes every link and connection. */
    @Override
    public void close() {
        running = false;
        selector.wakeup();
        try {
            thread.join(STOP_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            throw new IllegalStateException(thread.getName() + " did not stop within " + STOP_WAIT_MS + " ms");
        }
    }
}
