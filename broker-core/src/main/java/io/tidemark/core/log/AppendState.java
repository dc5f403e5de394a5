package io.tidemark.core.log;

import io.tidemark.proto.record.OriginPartition;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What a log's next appends depend on besides the batches they bring: where it ends, its last ReceiveTime (the floor
 * of the next), its idempotent producers and the origin offsets it holds through mirrored batches. Appending the
 * same batches to two logs in the same state gives the same offsets, times and refusals, whatever else the logs hold
 * (segments compacted or deleted on one and not the other). A replicated partition keeps it in its group's snapshot
 * and opens from it ({@link PartitionLog#openAt}), so replicas never rebuild it from their own segments.
 *
 * @param lastReceiveTimeMs the ReceiveTime of the last batch appended; empty when the log never held one
 * @param producers         the idempotent producers, least recently stored first
 * @param origins           per origin partition, the last origin offset held and where
 */
public record AppendState(long logEndOffset, OptionalLong lastReceiveTimeMs, List<Producer> producers,
                          Map<OriginPartition, HeldOrigin> origins) {
    public AppendState {
        if (logEndOffset < 0) {
            throw new IllegalArgumentException("log end offset " + logEndOffset + " is negative");
        }
        Objects.requireNonNull(lastReceiveTimeMs, "lastReceiveTimeMs");
        producers = List.copyOf(producers);
        origins = Map.copyOf(origins);
    }

    /** The state of an empty log ending at {@code logEndOffset}. */
    public static AppendState empty(long logEndOffset) {
        return new AppendState(logEndOffset, OptionalLong.empty(), List.of(), Map.of());
    }

    /**
     * An idempotent producer as a partition knows it: its epoch and its last stored batches, oldest first (at most
     * {@value ProducerStateTable#BATCHES_KEPT}, never none); the last one's ReceiveTime says when it was last heard of.
     */
    public record Producer(long producerId, short epoch, List<StoredBatch> batches) {
        public Producer {
            batches = List.copyOf(batches);
            if (batches.isEmpty() || batches.size() > ProducerStateTable.BATCHES_KEPT) {
                throw new IllegalArgumentException("producer " + producerId + " is kept with " + batches.size()
                        + " batches; 1 to " + ProducerStateTable.BATCHES_KEPT + " are");
            }
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
