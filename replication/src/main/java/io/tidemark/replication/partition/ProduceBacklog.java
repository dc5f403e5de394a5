package io.tidemark.replication.partition;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of produced batches a broker holds for its Raft groups, from the moment group commit takes one until it
 * is answered: waiting for an entry, in one, or held through a handover. Bounded, so producers that outrun the
 * groups (a slow disk, a follower that cannot keep up, a group without a majority) get a retriable refusal instead
 * of growing the heap until the broker dies of it. A batch is always taken when nothing else is held, so one larger
 * than the bound still goes, alone.
 *
 * <p>Thread-safe, without a lock.
 */
public final class ProduceBacklog {
    private final long maxBytes;
    private final AtomicLong heldBytes = new AtomicLong();

    /** @param maxBytes the bytes held at most ({@code produce.backlog.max.bytes}) */
    public ProduceBacklog(long maxBytes) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes " + maxBytes + " must be positive");
        }
        this.maxBytes = maxBytes;
    }

    /**
     * Takes room for a batch of {@code bytes}, to be given back with {@link #release} once it is answered.
     *
     * @throws TidemarkException NOT_AVAILABLE (retriable) when it does not fit, naming what is held and the bound
     */
    public void take(int bytes) {
        long held;
        do {
            held = heldBytes.get();
            if (held > 0 && held + bytes > maxBytes) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "this broker holds " + held + " bytes of "
                        + "produced batches not stored yet, and a batch of " + bytes + " more would pass "
                        + "produce.backlog.max.bytes " + maxBytes + ": its partition groups are not keeping up; "
                        + "retry after a backoff");
            }
        } while (!heldBytes.compareAndSet(held, held + bytes));
    }

    /** Gives back the room of a batch taken with {@link #take}. */
    public void release(int bytes) {
        heldBytes.addAndGet(-bytes);
    }

    /** The bytes held now. */
    public long heldBytes() {
        return heldBytes.get();
    }
}
