package io.tidemark.core.log;

/**
 * The answer to "first record at or after time t": {@link Found} with the record's offset and both of its
 * times, or {@link NotFound} carrying the log end offset when every record is earlier. Never a null or a -1
 * that a caller could take for an offset.
 */
public sealed interface TimeLookup {
    /** The first record at or after the time asked for. */
    record Found(long offset, long receiveTimeMs, long sendTimeMs) implements TimeLookup {
    }

    /** Every record is earlier than the time asked for; a consumer that seeks there waits at the log end. */
    record NotFound(long logEndOffset) implements TimeLookup {
    }
}
