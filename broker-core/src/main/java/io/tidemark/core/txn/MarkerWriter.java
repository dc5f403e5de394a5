package io.tidemark.core.txn;

import io.tidemark.core.partition.TopicPartition;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/** Writes a transaction marker to a partition, wherever its leader is. */
public interface MarkerWriter {
    /**
     * Appends {@code marker} ({@link io.tidemark.proto.record.TransactionMarker}) to {@code tp} through its leader.
     *
     * @return completes with the marker's offset once stored, or fails with why it could not be
     */
    CompletableFuture<Long> write(TopicPartition tp, ByteBuffer marker);
}
