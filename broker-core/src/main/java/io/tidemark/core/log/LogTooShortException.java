package io.tidemark.core.log;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A log on disk ends below where a state taken of it says it ended ({@link PartitionLog#openAt}): its files were
 * truncated or lost since.
 */
public final class LogTooShortException extends IOException {
    private final long logEndOffset;
    private final long expectedEndOffset;

    public LogTooShortException(Path dir, long logEndOffset, long expectedEndOffset) {
        super("the log in " + dir + " ends at offset " + logEndOffset + ", below " + expectedEndOffset
                + " where its state says it ends: its files were truncated or lost");
        this.logEndOffset = logEndOffset;
        this.expectedEndOffset = expectedEndOffset;
    }

    public long logEndOffset() {
        return logEndOffset;
    }

    public long expectedEndOffset() {
        return expectedEndOffset;
    }
}
