package io.tidemark.core.txn;

import io.tidemark.core.log.AppendResult;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Stores batches of several partitions in one Raft entry, all or none, where one Raft group this broker leads hosts
 * every one of them: a transaction whose partitions sit in the coordinator's group ends in one entry, without two
 * phases.
 */
public interface AllOrNoneAppender {
    /** Why none of the batches was stored: the refusal of the first that could not be. */
    final class Refused extends RuntimeException {
        public Refused(TidemarkException refusal) {
            super(refusal.getMessage(), refusal);
        }
    }

    /** A batch and the partition it goes to. */
    record PartitionBatch(TopicPartition partition, ByteBuffer batch) {
    }

    /**
     * @param batches transaction markers and batches without a producer id, one per partition
     * @return empty, having done nothing, when no one group led here hosts every partition named; else completes with
     *         the batches' results, in order, once all are stored, or fails with {@link Refused} when none was, or
     *         with NOT_AVAILABLE when leadership moved before the entry committed (whether it is stored shows once a
     *         leader is ready)
     */
    Optional<CompletableFuture<List<AppendResult>>> append(List<PartitionBatch> batches);
}
