package io.tidemark.client.api;

import java.util.concurrent.atomic.LongAdder;

/** What a {@link ConsumerRuntime} did, counted from its start; updated by its threads, read by any. */
final class RuntimeCounts {
    final LongAdder delivered = new LongAdder();
    final LongAdder skipped = new LongAdder();
    final LongAdder acked = new LongAdder();
    final LongAdder dropped = new LongAdder();
    final LongAdder retriedInPlace = new LongAdder();
    final LongAdder retryCopies = new LongAdder();
    final LongAdder deadLettered = new LongAdder();
    final LongAdder delayMoves = new LongAdder();
    final LongAdder exhausted = new LongAdder();
    final LongAdder retriesRefused = new LongAdder();
    final LongAdder handlerErrors = new LongAdder();
    final LongAdder windowsAborted = new LongAdder();

    ConsumerRuntime.Counts snapshot() {
        return new ConsumerRuntime.Counts(delivered.sum(), skipped.sum(), acked.sum(), dropped.sum(),
                retriedInPlace.sum(), retryCopies.sum(), deadLettered.sum(), delayMoves.sum(), exhausted.sum(),
                retriesRefused.sum(), handlerErrors.sum(), windowsAborted.sum());
    }
}
