package io.tidemark.core.log;

import java.nio.ByteBuffer;

/**
 * Batches read from a log and the log's bounds when they were read.
 *
 * @param batches whole batches; the first is the one holding the offset asked for, so it may start before
 *                it (readers skip the earlier records). Empty when the offset is the log end offset.
 */
public record LogReadResult(ByteBuffer batches, long logStartOffset, long logEndOffset) {
}
