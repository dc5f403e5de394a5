package io.tidemark.core.server;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of fetch answers a broker holds, from the read of a partition until the answer left for the client's
 * socket (gRPC holds an answer a client does not read in its outbound buffers). Bounded, so many large fetches, or
 * clients that ask and never read, cannot take the broker's memory: a fetch gets at most the room left, reads that
 * much (and still one whole batch when the first is larger), and is refused NOT_AVAILABLE, retriable, when no room is
 * left. The overshoot of whole first batches is bounded by the threads that read at once.
 *
 * <p>Thread-safe: the total is one atomic counter, shared without a lock; a {@link Lease}, which only the threads of
 * its one fetch touch, locks itself.
 */
final class FetchMemory {
    private final long maxBytes;
    private final AtomicLong heldBytes = new AtomicLong();

    /** @param maxBytes the bytes held at most ({@code fetch.memory.max.bytes}) */
    FetchMemory(long maxBytes) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes " + maxBytes + " must be positive");
        }
        this.maxBytes = maxBytes;
    }

    /** A fetch's hold on the memory, taken once its read starts and given back once ({@link #close}). */
    Lease lease() {
        return new Lease();
    }

    /** The bytes held now. */
    long heldBytes() {
        return heldBytes.get();
    }

    /**
     * One fetch's bytes: {@link #take} before the read, {@link #settle} with what the read returned, {@link #close}
     * when the answer is gone (or the call cancelled), in whatever order the call's threads get there.
     */
    final class Lease implements AutoCloseable {
        private long held;
        private boolean closed;

        private Lease() {
        }

        /**
         * Takes room for a read of up to {@code wantedBytes}: all of it, or what is left when less is.
         *
         * @return the bytes the read may return
         * @throws TidemarkException NOT_AVAILABLE when no room is left, or the call already ended
         */
        synchronized int take(int wantedBytes) {
            if (closed) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the fetch was cancelled");
            }
            long now;
            long granted;
            do {
                now = heldBytes.get();
                granted = Math.min(wantedBytes, maxBytes - now);
                if (granted <= 0) {
                    throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "this broker holds " + now + " bytes of "
                            + "fetch answers not sent yet, all of fetch.memory.max.bytes " + maxBytes + " (clients "
                            + "that do not read what they fetched, or many large fetches at once); retry after a "
                            + "backoff");
                }
            } while (!heldBytes.compareAndSet(now, now + granted));
            held += granted;
            return (int) granted;
        }

        /** Holds exactly {@code readBytes}, what the read returned, instead of the room taken for it. */
        synchronized void settle(int readBytes) {
            if (!closed) {
                heldBytes.addAndGet(readBytes - held);
                held = readBytes;
            }
        }

        /** Gives the bytes back; later calls do nothing. */
        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                heldBytes.addAndGet(-held);
                held = 0;
            }
        }
    }
}
