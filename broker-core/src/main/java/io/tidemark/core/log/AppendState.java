package io.tidemark.core.log;

import io.tidemark.proto.record.OriginPartition;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What a log's next appends depend on besides the batches they bring: where it ends, its last ReceiveTime (the floor
 * of the next), its idempotent producers, the origin offsets it holds through mirrored batches and its transactions
 * (open ones, and the aborted ones a {@code read_committed} reader must skip). Appending the
 * same batches to two logs in the same state gives the same offsets, times and refusals, whatever else the logs hold
 * (segments compacted or deleted on one and not the other). A replicated partition keeps it in its group's snapshot
 * and opens from it ({@link PartitionLog#openAt}), so replicas never rebuild it from their own segments.
 *
 * @param lastReceiveTimeMs the ReceiveTime of the last batch appended; empty when the log never held one
 * @param producers         the idempotent producers, least recently stored first
 * @param origins           per origin partition, the last origin offset held and where
 * @param openTransactions  the producers with a transaction open, in the order they opened
 * @param abortedTransactions the aborted transactions the log holds, by marker offset
 */
public record AppendState(long logEndOffset, OptionalLong lastReceiveTimeMs, List<Producer> producers,
                          Map<OriginPartition, HeldOrigin> origins, List<OpenTransaction> openTransactions,
                          List<AbortedTransaction> abortedTransactions) {
    public AppendState {
        if (logEndOffset < 0) {
            throw new IllegalArgumentException("log end offset " + logEndOffset + " is negative");
        }
        Objects.requireNonNull(lastReceiveTimeMs, "lastReceiveTimeMs");
        producers = List.copyOf(producers);
        origins = Map.copyOf(origins);
        openTransactions = List.copyOf(openTransactions);
        abortedTransactions = List.copyOf(abortedTransactions);
    }

    /** A state without transactions. */
    public AppendState(long logEndOffset, OptionalLong lastReceiveTimeMs, List<Producer> producers,
                       Map<OriginPartition, HeldOrigin> origins) {
        this(logEndOffset, lastReceiveTimeMs, producers, origins, List.of(), List.of());
    }

    /** The state of an empty log ending at {@code logEndOffset}. */
    public static AppendState empty(long logEndOffset) {
        return new AppendState(logEndOffset, OptionalLong.empty(), List.of(), Map.of());
    }

    /** A producer's transaction open in the partition since its first batch, at {@code firstOffset}. */
    public record OpenTransaction(long producerId, long firstOffset) {
        public OpenTransaction {
            if (producerId < 0 || firstOffset < 0) {
                throw new IllegalArgumentException("an open transaction of producer " + producerId + " at offset "
                        + firstOffset + ": neither may be negative");
            }
        }
    }

    /** A producer's transaction aborted in the partition: its batches from {@code firstOffset}, its marker last. */
    public record AbortedTransaction(long producerId, long firstOffset, long lastOffset) {
        public AbortedTransaction {
            if (producerId < 0 || firstOffset < 0 || lastOffset <= firstOffset) {
                throw new IllegalArgumentException("an aborted transaction of producer " + producerId + " at offsets "
                        + firstOffset + ".." + lastOffset + ": none may be negative, and its marker follows its "
                        + "first batch");
            }
        }
    }

    /**
     * An idempotent producer as a partition knows it: its epoch and its last stored batches of that epoch, oldest first
     * (at most {@value ProducerStateTable#BATCHES_KEPT}; none when a transaction marker moved it to its epoch), when it
     * was last heard of (the ReceiveTime of its last batch or marker) and the coordinator epoch of its last marker.
     */
    public record Producer(long producerId, short epoch, List<StoredBatch> batches, long lastReceiveTimeMs,
                           int coordinatorEpoch) {
        /** The coordinator epoch of a producer no marker was stored for. */
        public static final int NO_COORDINATOR_EPOCH = -1;

        public Producer {
            batches = List.copyOf(batches);
            if (batches.size() > ProducerStateTable.BATCHES_KEPT) {
                throw new IllegalArgumentException("producer " + producerId + " is kept with " + batches.size()
                        + " batches; at most " + ProducerStateTable.BATCHES_KEPT + " are");
            }
        }

        /** A producer without markers, last heard of at its last batch. */
        public Producer(long producerId, short epoch, List<StoredBatch> batches) {
            this(producerId, epoch, batches, batches.get(batches.size() - 1).receiveTimeMs(), NO_COORDINATOR_EPOCH);
        }

        /** The last stored batch. */
        public StoredBatch last() {
            return batches.get(batches.size() - 1);
        }
    }

    /** A batch of an idempotent producer the partition stored: its sequences, offsets and ReceiveTime. */
    public record StoredBatch(int firstSequence, int lastSequence, long baseOffset, long lastOffset,
                              long receiveTimeMs) {
        public StoredBatch {
            if (firstSequence < 0 || lastSequence < 0 || baseOffset < 0 || lastOffset < baseOffset) {
                throw new IllegalArgumentException("a stored batch has sequences " + firstSequence + ".."
                        + lastSequence + " at offsets " + baseOffset + ".." + lastOffset
                        + ": none may be negative, and offsets increase");
            }
        }

        AppendResult result() {
            return new AppendResult(baseOffset, lastOffset, receiveTimeMs);
        }
    }
}
