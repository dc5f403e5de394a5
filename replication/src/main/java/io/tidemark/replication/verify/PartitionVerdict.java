package io.tidemark.replication.verify;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * What {@link ReplicaVerifier} found of one partition.
 *
 * @param fromOffset  where the compared records start: the latest log start of the replicas
 * @param toOffset    where they end: the earliest log end of the replicas (every replica holds only committed records,
 *                    so every record below it is committed)
 * @param records     how many records the reference replica holds in {@code [fromOffset, toOffset)}
 * @param digest      a digest of the reference replica's records there, in hex (the same on replicas that agree
 *                    byte for byte); empty when not compared
 * @param compactedAway records one replica holds and another compacted away, as compaction may (superseded by a
 *                    later record of their key, or tombstones)
 * @param difference  the first record in which two replicas differ, for {@link Outcome#DIFFER}
 * @param unread      why replicas could not be read, for {@link Outcome#NOT_CHECKED}; how far replicas are behind,
 *                    for {@link Outcome#BEHIND}
 */
public record PartitionVerdict(Target target, Outcome outcome, long fromOffset, long toOffset, long records,
                               String digest, long compactedAway, Optional<Difference> difference,
                               List<String> unread) {
    public PartitionVerdict {
        unread = List.copyOf(unread);
    }

    /** A partition to verify: its topic by name and id, its number, its group and its replicas (reference first). */
    public record Target(String topic, UUID topicId, int partition, UUID groupId, List<Integer> replicas) {
        public Target {
            replicas = List.copyOf(replicas);
        }

        @Override
        public String toString() {
            return topic + "-" + partition;
        }
    }

    public enum Outcome {
        /** Every replica holds the same records, byte for byte. */
        AGREE,
        /** Every record two replicas both hold is the same, and each one only one holds is one compaction may remove. */
        AGREE_COMPACTED,
        /** Two replicas hold different records at an offset, or one lacks a record compaction may not remove. */
        DIFFER,
        /**
         * A replica holds fewer records than another held before the catch-up wait, and did not reach them in it; the
         * records every replica holds agree.
         */
        BEHIND,
        /** A replica could not be read. */
        NOT_CHECKED
    }

    /**
     * The first offset at which a replica differs from the reference.
     *
     * @param what which fields differ, with both values, or which replica lacks the record
     */
    public record Difference(long offset, int referenceNodeId, int nodeId, String what) {
    }
}
