package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What a partition knows of its idempotent producers, so a batch sent again (after a lost reply or a leader
 * change) is not stored twice: per producer id, the epoch, the last sequence stored and the offsets of the last
 * {@value #BATCHES_KEPT} batches. A producer has at most 5 batches of a partition in flight
 * ({@code max.in.flight.requests.per.partition}), so a resent batch is always among them.
 * <ul>
 *   <li>a batch equal in sequences to a kept one is a duplicate: the partition answers with that batch's
 *       offsets and ReceiveTime and stores nothing;</li>
 *   <li>otherwise its base sequence must follow the last one (OUT_OF_ORDER_SEQUENCE), unless the partition
 *       never saw the producer or the epoch is newer;</li>
 *   <li>an epoch older than the one seen is refused (INVALID_PRODUCER_EPOCH).</li>
 * </ul>
 * The table is derived from the log alone (rebuilt from the batch headers when the log opens), so every replica
 * of a partition holds the same table and decides the same. Sequences wrap from {@link Integer#MAX_VALUE} to 0,
 * as the producer's do.
 *
 * <p>Not thread-safe: used under the log's append lock.
 */
final class ProducerStateTable {
    static final int BATCHES_KEPT = 5;

    private record StoredBatch(int firstSequence, int lastSequence, long baseOffset, long lastOffset,
                               long receiveTimeMs) {
    }

    private static final class ProducerState {
        private short epoch;
        private int lastSequence;
        private final ArrayDeque<StoredBatch> batches = new ArrayDeque<>(BATCHES_KEPT);
    }

    private final Map<Long, ProducerState> producers = new HashMap<>();

    /**
     * Checks a producer's batch before it is stored.
     *
     * @return the stored batch's result when this one is a duplicate of it, else empty
     * @throws TidemarkException OUT_OF_ORDER_SEQUENCE or INVALID_PRODUCER_EPOCH
     */
    Optional<AppendResult> check(long producerId, short epoch, int baseSequence, int recordCount) {
        ProducerState state = producers.get(producerId);
        if (state == null || epoch > state.epoch) {
            return Optional.empty();
        }
        if (epoch < state.epoch) {
            throw new TidemarkException(ErrorCode.INVALID_PRODUCER_EPOCH, "producer " + producerId + " sent epoch "
                    + epoch + ", older than epoch " + state.epoch + " this partition saw: a newer instance of the "
                    + "producer took over");
        }
        int lastSequence = advance(baseSequence, recordCount - 1);
        for (StoredBatch batch : state.batches) {
            if (batch.firstSequence() == baseSequence && batch.lastSequence() == lastSequence) {
                return Optional.of(new AppendResult(batch.baseOffset(), batch.lastOffset(), batch.receiveTimeMs()));
            }
        }
        if (baseSequence != advance(state.lastSequence, 1)) {
            throw new TidemarkException(ErrorCode.OUT_OF_ORDER_SEQUENCE, "producer " + producerId + " sent sequence "
                    + baseSequence + "; this partition expects " + advance(state.lastSequence, 1)
                    + " (its last stored batch ended at " + state.lastSequence + ")");
        }
        return Optional.empty();
    }

    /** Records a stored batch of a producer. */
    void stored(long producerId, short epoch, int baseSequence, AppendResult result) {
        ProducerState state = producers.computeIfAbsent(producerId, id -> new ProducerState());
        if (epoch != state.epoch) {
            state.batches.clear();
        }
        int lastSequence = advance(baseSequence, result.lastOffset() - result.baseOffset());
        state.epoch = epoch;
        state.lastSequence = lastSequence;
        if (state.batches.size() == BATCHES_KEPT) {
            state.batches.removeFirst();
        }
        state.batches.addLast(new StoredBatch(baseSequence, lastSequence, result.baseOffset(), result.lastOffset(),
                result.receiveTimeMs()));
    }

    /** {@code sequence + steps}, wrapping from {@link Integer#MAX_VALUE} to 0. */
    static int advance(int sequence, long steps) {
        return (int) ((sequence + steps) % (Integer.MAX_VALUE + 1L));
    }

    void clear() {
        producers.clear();
    }
}
