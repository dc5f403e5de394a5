package io.tidemark.core.server;

import com.google.protobuf.UnsafeByteOperations;
import io.tidemark.core.log.AppendState;
import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.partition.Partition;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.AbortedTransaction;
import io.tidemark.proto.v1.FetchResponse;

import java.util.UUID;

/** A partition's read for a Fetch, or for one partition of a FetchMany: its batches and where the partition stands. */
final class PartitionReads {
    private PartitionReads() {
    }

    /**
     * Reads at most {@code maxBytes} of batches from {@code offset} (at least the whole batch holding it), up to the
     * high watermark, or at {@code readCommitted} up to the last stable offset with the aborted transactions among
     * them.
     *
     * @throws io.tidemark.proto.error.TidemarkException as the partition's read does (OFFSET_OUT_OF_RANGE, NOT_LEADER)
     */
    static FetchResponse.Builder read(Partition partition, UUID topicId, long offset, int maxBytes,
                                      boolean readCommitted) {
        LogReadResult read = readCommitted ? partition.readCommitted(offset, maxBytes)
                : partition.read(offset, maxBytes);
        FetchResponse.Builder response = FetchResponse.newBuilder()
                .setBatches(UnsafeByteOperations.unsafeWrap(read.batches()))
                .setHighWatermark(partition.highWatermark()).setLogStartOffset(read.logStartOffset())
                .setTopicId(TopicIds.toBytes(topicId)).setLastStableOffset(read.lastStableOffset());
        for (AppendState.AbortedTransaction aborted : read.abortedTransactions()) {
            response.addAbortedTransactions(AbortedTransaction.newBuilder().setProducerId(aborted.producerId())
                    .setFirstOffset(aborted.firstOffset()).setLastOffset(aborted.lastOffset()));
        }
        return response;
    }

    /** Where the partition stands, with no batch: for a partition a FetchMany's answer had no more room for. */
    static FetchResponse.Builder standing(Partition partition, UUID topicId) {
        return FetchResponse.newBuilder().setHighWatermark(partition.highWatermark())
                .setLogStartOffset(partition.logStartOffset()).setTopicId(TopicIds.toBytes(topicId))
                .setLastStableOffset(partition.lastStableOffset());
    }
}
