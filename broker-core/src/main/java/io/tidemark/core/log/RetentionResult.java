package io.tidemark.core.log;

/** What a retention pass deleted, and the log start offset after it. */
public record RetentionResult(int deletedSegments, long deletedBytes, long logStartOffset) {
}
