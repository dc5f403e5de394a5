package io.tidemark.core.log.segment;

import java.io.IOException;
import java.nio.file.Path;

/** A segment's files were asked for after the segment closed: deleted by retention or truncation, or its log closed. */
public final class SegmentClosedException extends IOException {
    SegmentClosedException(Path logFile) {
        super(logFile + " is closed: its segment was deleted or its log closed");
    }
}
