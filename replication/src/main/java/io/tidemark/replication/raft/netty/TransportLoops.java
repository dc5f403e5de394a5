package io.tidemark.replication.raft.netty;

import io.tidemark.core.server.EventLoops;

import java.io.Closeable;
import java.util.Optional;

/**
 * The event loops one side of the Raft transport runs its connections on: the broker's ({@link EventLoops}, shared
 * with its client API), which it leaves running when it closes, or, where it runs without a broker (a test, a tool),
 * threads of its own, which it stops.
 */
final class TransportLoops implements Closeable {
    private final EventLoops loops;
    private final boolean own;

    private TransportLoops(EventLoops loops, boolean own) {
        this.loops = loops;
        this.own = own;
    }

    /**
     * The broker's loops when there are any, else {@code threads} of its own named {@code name-N}.
     */
    static TransportLoops of(Optional<EventLoops> broker, String name, int threads) {
        return broker.map(loops -> new TransportLoops(loops, false))
                .orElseGet(() -> new TransportLoops(EventLoops.start(name, threads), true));
    }

    EventLoops loops() {
        return loops;
    }

    /** Stops the threads when they are its own. */
    @Override
    public void close() {
        if (own) {
            loops.close();
        }
    }
}
