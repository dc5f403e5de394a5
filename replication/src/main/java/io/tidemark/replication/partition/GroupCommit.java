package io.tidemark.replication.partition;

import io.tidemark.core.log.AppendResult;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
 * <p>Thread-safe: {@link #append} may be called from any thread; the queue's lock is held briefly, the submitting
 * lock while an entry is built and handed to the group (which may wait for room in the Raft log's queue: a thread
 * that would submit next waits for it, as its entry must go after).
 */
final class GroupCommit {
    private final int maxEntryBytes;
    private final int maxInFlight;
    private final Function<ByteString, CompletableFuture<ByteBuffer>> submit;
    private final ArrayDeque<Waiting> queue = new ArrayDeque<>();
    /** Held from taking an entry off the queue until it is submitted, so entries are submitted in the queue's order. */
    private final Object submitting = new Object();
    private int inFlight;

    /**
     * @param maxEntryBytes the size an entry grows to at most by coalescing (a single larger batch still goes)
     * @param maxInFlight   how many entries may be in flight at once
     * @param submit        submits a request ({@link GroupEntryFormat}) to the group; completes with its reply, or fails
     *                      with the error every batch of it gets
     */
    GroupCommit(int maxEntryBytes, int maxInFlight, Function<ByteString, CompletableFuture<ByteBuffer>> submit) {
        this.maxEntryBytes = maxEntryBytes;
        this.maxInFlight = maxInFlight;
        this.submit = submit;
    }

    /** Appends a batch (admitted by the caller, not modified) with the next entry; completes with its outcome. */
    CompletableFuture<AppendResult> append(GroupEntryFormat.Submitted batch) {
        Waiting waiting = new Waiting(batch, new CompletableFuture<>());
        synchronized (this) {
            queue.add(waiting);
        }
        sendNext();
        return waiting.result;
    }

    /** Submits the next entry when one may go. */
    private void sendNext() {
        synchronized (submitting) {
            List<Waiting> entry;
            synchronized (this) {
                entry = nextEntry();
            }
            if (entry != null) {
                send(entry);
            }
        }
    }

    /** Takes the next entry off the queue when one may go; null when none may or nothing waits. */
    private List<Waiting> nextEntry() {
        if (inFlight >= maxInFlight || queue.isEmpty()) {
            return null;
        }
        List<Waiting> entry = new ArrayList<>();
        long bytes = GroupEntryFormat.tableBytes(0);
        while (!queue.isEmpty()) {
            long framed = GroupEntryFormat.SLOT_BYTES + queue.peek().batch.batch().remaining();
            if (!entry.isEmpty() && bytes + framed > maxEntryBytes) {
                break;
            }
            entry.add(queue.poll());
            bytes += framed;
        }
        inFlight++;
        return entry;
    }

    private void send(List<Waiting> entry) {
        List<GroupEntryFormat.Submitted> batches = new ArrayList<>(entry.size());
        entry.forEach(w -> batches.add(w.batch));
        CompletableFuture<ByteBuffer> reply;
        try {
            reply = submit.apply(GroupEntryFormat.request(batches));
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((bytes, failure) -> {
            answer(entry, bytes, failure);
            synchronized (this) {
                inFlight--;
            }
            sendNext();
        });
    }

    private static void answer(List<Waiting> entry, ByteBuffer reply, Throwable failure) {
        if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            entry.forEach(w -> w.result.completeExceptionally(cause));
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

    private record Waiting(GroupEntryFormat.Submitted batch, CompletableFuture<AppendResult> result) {
    }
}
