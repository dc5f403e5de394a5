package io.tidemark.client.api;

import io.tidemark.proto.record.Header;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * Collects records into batches, one queue of {@link ProducerBatch}es per partition, and tells the sender which
 * batches are ready: the head of a queue is ready once it is full, has a batch behind it, is {@code linger.ms}
 * old, or a flush or close is under way; a batch waiting to be retried is ready again at its retry time, and the
 * parts of a batch split because the broker refused one of its records are ready at once (they count as
 * attempted). Retried batches and split parts go back into their queue by their {@link ProducerBatch#order}, ahead of
 * every batch sent after them and of those never sent, so the partition keeps the order of sends also when several
 * of its batches were in flight. It also keeps the set of batches not yet ended, which {@code flush} and
 * {@code close} wait for.
 *
 * <p>Thread-safe: one lock guards the queues and the flags; its condition wakes the sender when there is work
 * (a new or full batch, a flush, a response). The lock is held per record appended, never across I/O.
 */
final class RecordAccumulator {
    private final int batchSizeBytes;
    private final int maxRequestBytes;
    private final long lingerMs;
    private final long deliveryTimeoutMs;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Map<TopicPartition, ArrayDeque<ProducerBatch>> queues = new LinkedHashMap<>();
    private final Set<ProducerBatch> incomplete = ConcurrentHashMap.newKeySet();
    private int flushesInProgress;
    private boolean closing;
    private boolean woken;

    RecordAccumulator(int batchSizeBytes, int maxRequestBytes, long lingerMs, long deliveryTimeoutMs) {
        this.batchSizeBytes = batchSizeBytes;
        this.maxRequestBytes = maxRequestBytes;
        this.lingerMs = lingerMs;
        this.deliveryTimeoutMs = deliveryTimeoutMs;
    }

    /**
     * Adds a record to the last open batch of {@code tp}, or to a new batch when it does not fit there.
     *
     * @param reserved bytes the record holds in the memory budget
     * @throws IllegalStateException when the producer is closing
     */
    void append(TopicPartition tp, long sendTimeMs, byte[] key, byte[] value, List<Header> headers, long reserved,
                CompletableFuture<RecordMetadata> future, long nowMs) {
        lock.lock();
        try {
            if (closing) {
                throw new IllegalStateException("the producer is closed; " + tp + " takes no more records");
            }
            ArrayDeque<ProducerBatch> queue = queues.computeIfAbsent(tp, p -> new ArrayDeque<>());
            ProducerBatch last = queue.peekLast();
            if (last != null && last.tryAppend(sendTimeMs, key, value, headers, reserved, future)) {
                if (last.isFull()) {
                    wake();
                }
                return;
            }
            if (last != null) {
                last.close();
            }
            ProducerBatch batch = new ProducerBatch(tp, nowMs, deliveryTimeoutMs, batchSizeBytes, maxRequestBytes);
            if (!batch.tryAppend(sendTimeMs, key, value, headers, reserved, future)) {
                throw new IllegalStateException("a record of " + ProducerBatch.singleRecordBatchBytes(key, value,
                        headers) + " bytes passed the max.request.bytes check but does not fit an empty batch");
            }
            queue.addLast(batch);
            incomplete.add(batch);
            wake();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the ready batches at the head of every partition's queue, in queue order, as long as {@code claim} takes
     * them (the sender's test of whether a batch may go now, which counts it as in flight when it may).
     */
    List<ProducerBatch> drain(long nowMs, Predicate<ProducerBatch> claim) {
        lock.lock();
        try {
            List<ProducerBatch> ready = new ArrayList<>();
            for (ArrayDeque<ProducerBatch> queue : queues.values()) {
                ProducerBatch head = queue.peekFirst();
                while (head != null && readyInMs(head, queue, nowMs) == 0 && claim.test(head)) {
                    ready.add(queue.pollFirst());
                    head = queue.peekFirst();
                }
            }
            return ready;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Puts batches back into their partition's queue, each before the first queued batch of a higher
     * {@link ProducerBatch#order} or of none (given in order, batches of one order keep theirs): a batch after a
     * retriable error, the parts of a split batch, a batch rebuilt with a new sequence.
     */
    void reenqueue(List<ProducerBatch> batches) {
        lock.lock();
        try {
            for (ProducerBatch batch : batches) {
                ArrayDeque<ProducerBatch> queue = queues.computeIfAbsent(batch.partition, p -> new ArrayDeque<>());
                ArrayDeque<ProducerBatch> behind = new ArrayDeque<>();
                while (!queue.isEmpty() && goesBefore(batch, queue.peekLast())) {
                    behind.addFirst(queue.pollLast());
                }
                queue.addLast(batch);
                queue.addAll(behind);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Whether {@code batch}, put back, goes before {@code queued}: sent before it, or {@code queued} never was. */
    private static boolean goesBefore(ProducerBatch batch, ProducerBatch queued) {
        return queued.order() == null || batch.order() == null || queued.order().compareTo(batch.order()) > 0;
    }

    /**
     * Queues the parts of a batch split after the broker refused it for one of its records, in place of the
     * batch: at the head of the partition's queue, in record order. The batch stays incomplete until every part
     * has ended, so a flush or close that is waiting for it waits for them.
     */
    void replaceBySplit(ProducerBatch batch, List<ProducerBatch> parts) {
        incomplete.addAll(parts);
        reenqueue(parts);
        batch.done().thenRun(() -> incomplete.remove(batch));
    }

    /** Removes and returns the queued batches whose delivery deadline has passed. */
    List<ProducerBatch> removeExpired(long nowMs) {
        lock.lock();
        try {
            List<ProducerBatch> expired = new ArrayList<>();
            for (ArrayDeque<ProducerBatch> queue : queues.values()) {
                for (Iterator<ProducerBatch> it = queue.iterator(); it.hasNext(); ) {
                    ProducerBatch batch = it.next();
                    if (nowMs >= batch.deadlineMs) {
                        it.remove();
                        expired.add(batch);
                    }
                }
            }
            return expired;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ms until the next queued head batch that {@code sendable} allows becomes ready or a queued batch expires;
     * {@link Long#MAX_VALUE} when none will.
     */
    long nextEventInMs(long nowMs, Predicate<ProducerBatch> sendable) {
        lock.lock();
        try {
            long next = Long.MAX_VALUE;
            for (ArrayDeque<ProducerBatch> queue : queues.values()) {
                ProducerBatch head = queue.peekFirst();
                if (head == null) {
                    continue;
                }
                if (sendable.test(head)) {
                    next = Math.min(next, readyInMs(head, queue, nowMs));
                }
                for (ProducerBatch batch : queue) {
                    next = Math.min(next, Math.max(0, batch.deadlineMs - nowMs));
                }
            }
            return next;
        } finally {
            lock.unlock();
        }
    }

    /** Blocks the sender until {@link #wake} or {@code maxWaitMs} passes. */
    void awaitWork(long maxWaitMs) {
        lock.lock();
        try {
            if (!woken && maxWaitMs > 0) {
                work.await(maxWaitMs, TimeUnit.MILLISECONDS);
            }
            woken = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the sender: there is new work (a batch, a response, a flush, a close). */
    void wakeup() {
        lock.lock();
        try {
            wake();
        } finally {
            lock.unlock();
        }
    }

    /** Makes every batch ready at once until {@link #endFlush}. */
    void beginFlush() {
        lock.lock();
        try {
            flushesInProgress++;
            wake();
        } finally {
            lock.unlock();
        }
    }

    void endFlush() {
        lock.lock();
        try {
            flushesInProgress--;
        } finally {
            lock.unlock();
        }
    }

    /** Refuses new records from now on and makes every batch ready at once. */
    void close() {
        lock.lock();
        try {
            closing = true;
            wake();
        } finally {
            lock.unlock();
        }
    }

    /** The batches not yet acknowledged or failed, queued or in flight. */
    List<ProducerBatch> incomplete() {
        return new ArrayList<>(incomplete);
    }

    boolean hasIncomplete() {
        return !incomplete.isEmpty();
    }

    /** Forgets a batch that has ended. */
    void ended(ProducerBatch batch) {
        incomplete.remove(batch);
    }

    private long readyInMs(ProducerBatch head, ArrayDeque<ProducerBatch> queue, long nowMs) {
        if (head.attempts() > 0) {
            return Math.max(0, head.retryAtMs() - nowMs);
        }
        if (head.isFull() || queue.size() > 1 || flushesInProgress > 0 || closing) {
            return 0;
        }
        return Math.max(0, head.createdMs + lingerMs - nowMs);
    }

    private void wake() {
        woken = true;
        work.signalAll();
    }
}
