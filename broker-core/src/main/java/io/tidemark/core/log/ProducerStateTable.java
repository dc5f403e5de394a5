package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
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
 *       never saw the producer (or forgot it, below) or the epoch is newer;</li>
 *   <li>an epoch older than the one seen is refused (INVALID_PRODUCER_EPOCH).</li>
 * </ul>
 * A producer whose last stored batch's ReceiveTime is more than the expiry older than the batch being appended is
 * forgotten ({@code producer.id.expiration.ms}, Kafka's rule, measured here on ReceiveTimes so that every replica
 * forgets it at the same batch): its next batch is taken as a new producer's. Producers are kept in the order they
 * were last stored, so forgetting the expired ones takes no scan.
 *
 * <p>The table changes only by appends, so replicas that append the same batches from the same state hold the same
 * table and decide the same; it is carried over restarts in {@link AppendState} (a replicated partition's group
 * snapshot), or rebuilt from the batch headers of a log opened on its own. Sequences wrap from
 * {@link Integer#MAX_VALUE} to 0, as the producer's do.
 *
 * <p>Not thread-safe: used under the log's append lock.
 */
final class ProducerStateTable {
    static final int BATCHES_KEPT = 5;
    /** Kafka's default producer.id.expiration.ms: one day. */
    static final long DEFAULT_EXPIRY_MS = 86_400_000L;

    private static final class ProducerState {
        private short epoch;
        private int lastSequence;
        private long lastReceiveTimeMs;
        private int coordinatorEpoch = AppendState.Producer.NO_COORDINATOR_EPOCH;
        private final ArrayDeque<AppendState.StoredBatch> batches = new ArrayDeque<>(BATCHES_KEPT);
    }

    /** In the order producers were last stored: the least recently stored first. */
    private final LinkedHashMap<Long, ProducerState> producers = new LinkedHashMap<>(16, 0.75f, false);
    private long expiryMs = DEFAULT_EXPIRY_MS;

    /** How long after its last stored batch (in ReceiveTime) a producer is forgotten. */
    void expiryMs(long expiryMs) {
        if (expiryMs < 1) {
            throw new IllegalArgumentException("producer.id.expiration.ms must be at least 1, not " + expiryMs);
        }
        this.expiryMs = expiryMs;
    }

    /**
     * Checks a producer's batch before it is stored at {@code receiveTimeMs}.
     *
     * @return the stored batch's result when this one is a duplicate of it, else empty
     * @throws TidemarkException OUT_OF_ORDER_SEQUENCE or INVALID_PRODUCER_EPOCH
     */
    Optional<AppendResult> check(long producerId, short epoch, int baseSequence, int recordCount,
                                 long receiveTimeMs) {
        expire(receiveTimeMs);
        ProducerState state = producers.get(producerId);
        if (state == null || epoch > state.epoch) {
            return Optional.empty();
        }
        if (epoch < state.epoch) {
            throw new TidemarkException(ErrorCode.INVALID_PRODUCER_EPOCH, "producer " + producerId + " sent epoch "
                    + epoch + ", older than epoch " + state.epoch + " this partition saw: a newer instance of the "
                    + "producer took over");
        }
        Optional<AppendResult> stored = storedAs(state, baseSequence, recordCount);
        if (stored.isPresent()) {
            return stored;
        }
        if (baseSequence != advance(state.lastSequence, 1)) {
            throw new TidemarkException(ErrorCode.OUT_OF_ORDER_SEQUENCE, "producer " + producerId + " sent sequence "
                    + baseSequence + "; this partition expects " + advance(state.lastSequence, 1)
                    + " (its last stored batch ended at " + state.lastSequence + ")");
        }
        return Optional.empty();
    }

    /**
     * Checks a transaction marker of a producer: neither its producer epoch nor its coordinator epoch may be older
     * than the last this partition saw of the producer (a deposed coordinator's late marker would end a later
     * transaction).
     *
     * @throws TidemarkException INVALID_PRODUCER_EPOCH
     */
    void checkMarker(long producerId, short epoch, int coordinatorEpoch) {
        ProducerState state = producers.get(producerId);
        if (state != null && epoch < state.epoch) {
            throw new TidemarkException(ErrorCode.INVALID_PRODUCER_EPOCH, "a transaction marker of producer "
                    + producerId + " carries epoch " + epoch + ", older than epoch " + state.epoch
                    + " this partition saw");
        }
        if (state != null && coordinatorEpoch < state.coordinatorEpoch) {
            throw new TidemarkException(ErrorCode.INVALID_PRODUCER_EPOCH, "a transaction marker of producer "
                    + producerId + " comes from coordinator epoch " + coordinatorEpoch + ", older than epoch "
                    + state.coordinatorEpoch + " whose marker this partition took: a deposed coordinator sent it");
        }
    }

    /**
     * Records a stored transaction marker of a producer: it becomes the most recently stored, and a marker of a newer
     * epoch than the producer's (the coordinator fenced the producer, or a new instance took its transactional id)
     * moves the producer to that epoch, so the older one's batches are refused from then on; the new epoch's
     * sequences start at 0.
     */
    void markerStored(long producerId, short epoch, int coordinatorEpoch, long receiveTimeMs) {
        ProducerState state = producers.remove(producerId);
        if (state == null || epoch != state.epoch) {
            state = new ProducerState();
            state.epoch = epoch;
            state.lastSequence = -1;
        }
        producers.put(producerId, state);
        state.lastReceiveTimeMs = receiveTimeMs;
        state.coordinatorEpoch = coordinatorEpoch;
    }

    /**
     * The result of a kept batch this one repeats (same producer, epoch and sequences), without expiring or checking
     * anything: for a batch the leader refused that an earlier attempt may have stored.
     */
    Optional<AppendResult> storedAs(long producerId, short epoch, int baseSequence, int recordCount) {
        ProducerState state = producers.get(producerId);
        return state == null || state.epoch != epoch ? Optional.empty()
                : storedAs(state, baseSequence, recordCount);
    }

    private static Optional<AppendResult> storedAs(ProducerState state, int baseSequence, int recordCount) {
        int lastSequence = advance(baseSequence, recordCount - 1);
        for (AppendState.StoredBatch batch : state.batches) {
            if (batch.firstSequence() == baseSequence && batch.lastSequence() == lastSequence) {
                return Optional.of(batch.result());
            }
        }
        return Optional.empty();
    }

    /** Records a stored batch of a producer; it becomes the most recently stored. */
    void stored(long producerId, short epoch, int baseSequence, AppendResult result) {
        ProducerState state = producers.remove(producerId);
        if (state == null) {
            state = new ProducerState();
        }
        producers.put(producerId, state);
        if (epoch != state.epoch) {
            state.batches.clear();
        }
        int lastSequence = advance(baseSequence, result.lastOffset() - result.baseOffset());
        state.epoch = epoch;
        state.lastSequence = lastSequence;
        state.lastReceiveTimeMs = result.receiveTimeMs();
        if (state.batches.size() == BATCHES_KEPT) {
            state.batches.removeFirst();
        }
        state.batches.addLast(new AppendState.StoredBatch(baseSequence, lastSequence, result.baseOffset(),
                result.lastOffset(), result.receiveTimeMs()));
    }

    /** Forgets the producers last stored more than the expiry before {@code receiveTimeMs}. */
    private void expire(long receiveTimeMs) {
        Iterator<ProducerState> oldestFirst = producers.values().iterator();
        while (oldestFirst.hasNext()) {
            if (receiveTimeMs - oldestFirst.next().lastReceiveTimeMs <= expiryMs) {
                return;
            }
            oldestFirst.remove();
        }
    }

    /** {@code sequence + steps}, wrapping from {@link Integer#MAX_VALUE} to 0. */
    static int advance(int sequence, long steps) {
        return (int) ((sequence + steps) % (Integer.MAX_VALUE + 1L));
    }

    /** Every producer, the least recently stored first. */
    List<AppendState.Producer> entries() {
        List<AppendState.Producer> entries = new ArrayList<>(producers.size());
        for (Map.Entry<Long, ProducerState> entry : producers.entrySet()) {
            ProducerState state = entry.getValue();
            entries.add(new AppendState.Producer(entry.getKey(), state.epoch, List.copyOf(state.batches),
                    state.lastReceiveTimeMs, state.coordinatorEpoch));
        }
        return entries;
    }

    /** Replaces every producer by {@code entries}, kept in their order (least recently stored first). */
    void reset(List<AppendState.Producer> entries) {
        producers.clear();
        for (AppendState.Producer producer : entries) {
            ProducerState state = new ProducerState();
            state.epoch = producer.epoch();
            state.lastSequence = producer.batches().isEmpty() ? -1 : producer.last().lastSequence();
            state.lastReceiveTimeMs = producer.lastReceiveTimeMs();
            state.coordinatorEpoch = producer.coordinatorEpoch();
            state.batches.addAll(producer.batches());
            producers.put(producer.producerId(), state);
        }
    }

    void clear() {
        producers.clear();
    }
}
