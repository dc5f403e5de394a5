package io.tidemark.core.partition;

import io.tidemark.core.log.AppendResult;
import io.tidemark.core.log.HeldOrigin;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.log.TimeLookup;
import io.tidemark.proto.record.OriginPartition;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A partition as the broker's services see it. Every partition operation of the API goes through this
 * interface; the replication module implements it for a partition of a partition group this broker holds a replica
 * of, and for one held elsewhere.
 *
 * <p>Implementations are thread-safe.
 */
public interface Partition extends Closeable {
    TopicPartition id();

    /**
     * Appends one batch as a producer built it (the buffer between position and limit, read-only and left unchanged:
     * the partition copies what it must stamp): the partition stamps its base offset and ReceiveTime
     * {@code max(now, last ReceiveTime)}, so ReceiveTime never decreases, whatever the clocks do.
     *
     * @return completes once the batch is stored (committed, on a replicated partition), or exceptionally with a
     *         {@link io.tidemark.proto.error.TidemarkException} saying why it was refused
     */
    CompletableFuture<AppendResult> append(ByteBuffer batch);

    /**
     * Throws when clients (Fetch, ListOffsets) must not read this replica now. A replicated partition is read on its
     * leader only, and only once the leader applied every entry its predecessors committed: a new leader's log may
     * lag what the old one answered for a moment, and a client must never see the high watermark go back (a consumer
     * at the old end would be told its position is out of range).
     *
     * @throws io.tidemark.proto.error.TidemarkException NOT_LEADER naming the leader; NOT_AVAILABLE while a new
     *                                                   leader applies its predecessors' entries (retry)
     */
    void checkClientReadable();

    /** Whole batches from the one holding {@code offset}, up to the high watermark. */
    LogReadResult read(long offset, int maxBytes);

    /**
     * Whole batches from the one holding {@code offset}, below the last stable offset, with the aborted transactions
     * among them: what a {@code read_committed} reader may see
     * ({@link io.tidemark.core.log.PartitionLog#readCommitted}).
     */
    LogReadResult readCommitted(long offset, int maxBytes);

    /** Offset after the last record consumers may read. */
    long highWatermark();

    /** The first offset of the oldest transaction open in the partition, or the high watermark when none is. */
    long lastStableOffset();

    long logStartOffset();

    long logEndOffset();

    TimeLookup lookupByReceiveTime(long receiveTimeMs);

    TimeLookup lookupBySendTime(long sendTimeMs);

    /**
     * The last origin offset of {@code origin} the partition holds through mirrored batches, and where it is; only
     * the leader answers (a follower throws NOT_LEADER), since a mirror resumes from it.
     */
    Optional<HeldOrigin> heldOrigin(OriginPartition origin);

    /**
     * Runs {@code onAppend} once when the next batch is appended or the partition goes away from this broker (for
     * long-polling fetches), on the appending thread, so it must only hand off; at once when there is nothing to wait
     * for. Close the waiter when no longer waiting.
     *
     * @throws io.tidemark.proto.error.TidemarkException as a read would, when this broker cannot serve the
     *                                                   partition's reads
     */
    AppendWaiters.Waiter awaitAppend(Runnable onAppend);

    PartitionStatus status();

    /** Deletes segments past retention.ms or retention.bytes; the broker calls it periodically. */
    void applyRetention(long nowMs);

    /**
     * Compacts the log when its cleanup.policy includes compact ({@link LogCompactor}); the broker calls it
     * periodically.
     */
    void compact(long nowMs, LogCompactor compactor) throws IOException;

    /** fsyncs when flush.ms is due; the broker calls it periodically. */
    void flushIfDue(long nowMs);

    /**
     * fsyncs what the replica's active segment took since its last write-back when that is at least
     * {@code minBytes}, off the append path ({@link io.tidemark.core.log.PartitionLog#writeBack}); the broker calls
     * it periodically. A partition with no replica here does nothing.
     *
     * @return whether it fsynced
     */
    boolean writeBack(long minBytes);

    /** Closes the partition cleanly (fsync, clean-shutdown marker). */
    @Override
    void close() throws IOException;
}
