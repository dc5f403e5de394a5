package io.tidemark.core.log;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Batches read from a log and the log's bounds when they were read.
 *
 * @param batches             whole batches; the first is the one holding the offset asked for, so it may start before
 *                            it (readers skip the earlier records). Empty when the offset is the log end offset.
 * @param lastStableOffset    the first offset of the oldest transaction open in the log, or its end when none is
 * @param abortedTransactions for a {@code read_committed} read, the aborted transactions among the batches
 */
public record LogReadResult(ByteBuffer batches, long logStartOffset, long logEndOffset, long lastStableOffset,
                            List<AppendState.AbortedTransaction> abortedTransactions) {
    public LogReadResult {
        abortedTransactions = List.copyOf(abortedTransactions);
    }
}
