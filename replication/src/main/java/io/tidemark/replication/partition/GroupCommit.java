package io.tidemark.replication.partition;

import io.tidemark.core.log.AppendResult;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * Group commit for one partition group: the batches produced for any of its partitions while the group's previous
 * Raft entries are in flight wait here and then go together as one entry ({@link GroupEntryFormat}), so the group pays
 * one Raft round (a gRPC append to each follower, an fsync on each replica) for many produce requests of many
 * partitions instead of one each. shared/notes/ratis.md measured a Raft group at 0.3 MB/s with 1 KiB entries and
 * 30 MB/s with 256 KiB ones: the size of an entry is the lever, and the number of partitions does not change it.
 * Each produce request still gets its own answer: its batch's outcome in the entry's reply.
 *
 * <p>At most {@code maxInFlight} entries are in flight; when one is answered, everything that waits (up to
 * {@code maxEntryBytes}, and always at least one batch) becomes the next entry. Batches keep their arrival order,
 * which is the order they are appended in, also across entries: an entry is taken off the queue and submitted under
 * one lock, so with two entries in flight the one taken first is submitted first (the group's Raft log keeps the
 * order of submission). A producer with several batches of a partition in flight relies on it: its batches reach the
 * log in the order they were appended, so the partition does not refuse them as out of sequence.
 *
 * <p>The order holds through a handover too ({@link Handovers}: Ratis refused an entry, appending nothing, because
 * leadership is changing hands here). The refused entries' batches are held back, nothing more is submitted, and once
 * the handover settled with this replica leading and no entry in flight, they go again ahead of every batch that
 * arrived since, in their first order; when another replica leads, they fail with its name. Each batch goes through
 * {@value #HANDOVERS} handovers at most. Batches that waited out handovers each on their own once went back in
 * whatever order their waits ended: a producer's later batch was then refused as out of sequence, its earlier one
 * stored after it, and both answers came in one response, the refusal seemingly of a batch whose predecessor was
 * stored (issue 23: 253 records failed that the producer never gave up on).
 *
 * <p>Replies are handled on {@code callbacks}, never on the thread that completes them: Ratis completes a reply on its
 * apply thread, or on a thread holding its server's lock while it steps down; submitting the next entry from there
 * waited for that lock, or for this one's submitting lock held by a thread waiting for Ratis, and the group's replica
 * stopped for good (a deadlock found by a 100-partition benchmark, issue 23). {@code callbacks} must run one task at a
 * time, in order.
 *
 * <p>What waits is bounded by the broker's {@link ProduceBacklog}, shared by its groups: a batch that does not fit is
 * refused NOT_AVAILABLE at once, before it joins the queue, and room is given back when a batch is answered.
 *
 * <p>Thread-safe: {@link #append} may be called from any thread; the queue's lock is held briefly, the submitting
 * lock while an entry is built and handed to the group (which may wait for room in the Raft log's queue: a thread
 * that would submit next waits for it, as its entry must go after).
 */
final class GroupCommit {
    /** Handovers a batch is submitted again after, at most. */
    static final int HANDOVERS = 6;

    /** How the group tells a handover, and when one has settled. */
    interface Handovers {
        /** Whether an entry's failure is a handover: nothing was appended and the entry may be submitted again. */
        boolean isHandover(Throwable failure);

        /**
         * Completes once the handover settled with this replica leading and ready, for the held batches to go again;
         * fails with what they are answered otherwise (NOT_LEADER naming the new leader, NOT_AVAILABLE when it did
         * not settle in time).
         */
        CompletableFuture<Void> settled(Throwable handover);
    }

    private final int maxEntryBytes;
    private final int maxInFlight;
    private final Function<ByteString, CompletableFuture<ByteBuffer>> submit;
    private final Handovers handovers;
    private final Executor callbacks;
    private final ProduceBacklog backlog;
    private final ArrayDeque<Waiting> queue = new ArrayDeque<>();
    /** Held from taking an entry off the queue until it is submitted, so entries are submitted in the queue's order. */
    private final Object submitting = new Object();
    private int inFlight;
    private long nextEntry;
    /** Entries refused by a handover, by submission order, held back until it settles. */
    private final TreeMap<Long, List<Waiting>> held = new TreeMap<>();
    /** Whether a handover is being waited out; then nothing is submitted. */
    private boolean settling;

    /**
     * @param maxEntryBytes the size an entry grows to at most by coalescing (a single larger batch still goes)
     * @param maxInFlight   how many entries may be in flight at once
     * @param submit        submits a request ({@link GroupEntryFormat}) to the group; completes with its reply, or fails
     *                      with the error every batch of it gets
     * @param callbacks     where replies are handled: one task at a time, in order
     * @param backlog       the broker's bound on batches taken and not answered, shared by its groups
     */
    GroupCommit(int maxEntryBytes, int maxInFlight, Function<ByteString, CompletableFuture<ByteBuffer>> submit,
                Handovers handovers, Executor callbacks, ProduceBacklog backlog) {
        this.maxEntryBytes = maxEntryBytes;
        this.maxInFlight = maxInFlight;
        this.submit = submit;
        this.handovers = handovers;
        this.callbacks = callbacks;
        this.backlog = backlog;
    }

    /**
     * Appends a batch (admitted by the caller, not modified) with the next entry; completes with its outcome, or fails
     * at once with NOT_AVAILABLE when the broker's backlog has no room for it.
     */
    CompletableFuture<AppendResult> append(GroupEntryFormat.Submitted batch) {
        int bytes = batch.batch().remaining();
        try {
            backlog.take(bytes);
        } catch (TidemarkException e) {
            return CompletableFuture.failedFuture(e);
        }
        Waiting waiting = new Waiting(batch, new CompletableFuture<>());
        waiting.result.whenComplete((result, failure) -> backlog.release(bytes));
        synchronized (this) {
            queue.add(waiting);
        }
        sendNext();
        return waiting.result;
    }

    /** Submits the next entry when one may go. */
    private void sendNext() {
        synchronized (submitting) {
            Entry entry;
            synchronized (this) {
                entry = nextEntry();
            }
            if (entry != null) {
                send(entry);
            }
        }
    }

    /** Takes the next entry off the queue when one may go; null when none may or nothing waits. */
    private Entry nextEntry() {
        if (settling || !held.isEmpty() || inFlight >= maxInFlight || queue.isEmpty()) {
            return null;
        }
        List<Waiting> batches = new ArrayList<>();
        long bytes = GroupEntryFormat.tableBytes(0);
        while (!queue.isEmpty()) {
            long framed = GroupEntryFormat.SLOT_BYTES + queue.peek().batch.batch().remaining();
            if (!batches.isEmpty() && bytes + framed > maxEntryBytes) {
                break;
            }
            batches.add(queue.poll());
            bytes += framed;
        }
        inFlight++;
        return new Entry(nextEntry++, batches);
    }

    private void send(Entry entry) {
        List<GroupEntryFormat.Submitted> batches = new ArrayList<>(entry.batches.size());
        entry.batches.forEach(w -> batches.add(w.batch));
        CompletableFuture<ByteBuffer> reply;
        try {
            reply = submit.apply(GroupEntryFormat.request(batches));
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenCompleteAsync((bytes, failure) -> replied(entry, bytes, failure), callbacks);
    }

    private void replied(Entry entry, ByteBuffer reply, Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause != null && handovers.isHandover(cause)) {
            hold(entry, cause);
        } else {
            answer(entry.batches, reply, cause);
        }
        synchronized (this) {
            inFlight--;
            if (!settling && inFlight == 0) {
                requeueHeld();
            }
        }
        sendNext();
    }

    /** Holds an entry a handover refused back, and starts waiting for the handover to settle if none is waited. */
    private void hold(Entry entry, Throwable handover) {
        List<Waiting> again = new ArrayList<>();
        for (Waiting waiting : entry.batches) {
            if (waiting.handoversLeft-- > 0) {
                again.add(waiting);
            } else {
                waiting.result.completeExceptionally(handover);
            }
        }
        boolean wait;
        synchronized (this) {
            held.put(entry.number, again);
            wait = !settling;
            settling = true;
        }
        if (wait) {
            CompletableFuture<Void> settled;
            try {
                settled = handovers.settled(handover);
            } catch (RuntimeException e) {
                settled = CompletableFuture.failedFuture(e);
            }
            settled.whenCompleteAsync((ignored, error) -> settledWith(error), callbacks);
        }
    }

    /** The handover settled: the held batches go again once no entry is in flight, or fail with {@code error}. */
    private void settledWith(Throwable error) {
        List<Waiting> failed = new ArrayList<>();
        synchronized (this) {
            settling = false;
            if (error != null) {
                held.values().forEach(failed::addAll);
                held.clear();
            } else if (inFlight == 0) {
                requeueHeld();
            }
        }
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        failed.forEach(w -> w.result.completeExceptionally(cause));
        sendNext();
    }

    /** Puts the held batches back at the head of the queue, in their first order; under this object's lock. */
    private void requeueHeld() {
        held.descendingMap().values().forEach(batches -> {
            for (int i = batches.size() - 1; i >= 0; i--) {
                queue.addFirst(batches.get(i));
            }
        });
        held.clear();
    }

    private static void answer(List<Waiting> entry, ByteBuffer reply, Throwable failure) {
        if (failure != null) {
            entry.forEach(w -> w.result.completeExceptionally(failure));
            return;
        }
        List<GroupEntryFormat.Outcome> outcomes;
        try {
            outcomes = GroupEntryFormat.readReply(reply, entry.size());
        } catch (RuntimeException e) {
            entry.forEach(w -> w.result.completeExceptionally(e));
            return;
        }
        for (int i = 0; i < entry.size(); i++) {
            GroupEntryFormat.Outcome outcome = outcomes.get(i);
            CompletableFuture<AppendResult> result = entry.get(i).result;
            if (outcome.refused() != null) {
                result.completeExceptionally(outcome.refused());
            } else {
                result.complete(outcome.appended());
            }
        }
    }

    /** An entry submitted: its number in submission order and its batches. */
    private record Entry(long number, List<Waiting> batches) {
    }

    /** A batch waiting for its outcome, and the handovers it may still go through. */
    private static final class Waiting {
        private final GroupEntryFormat.Submitted batch;
        private final CompletableFuture<AppendResult> result;
        private int handoversLeft = HANDOVERS;

        private Waiting(GroupEntryFormat.Submitted batch, CompletableFuture<AppendResult> result) {
            this.batch = batch;
            this.result = result;
        }
    }
}
