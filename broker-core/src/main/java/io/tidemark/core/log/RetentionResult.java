package io.tidemark.core.log;

/**
 * What a retention pass deleted, the log start offset after it, and how many more segments were past retention but
 * kept because they hold offsets at or above the pass's keep-from offset (a replicated partition's last snapshot end:
 * a snapshot that covers them lets the next pass delete them).
 */
public record RetentionResult(int deletedSegments, long deletedBytes, long logStartOffset, int heldSegments) {
}
