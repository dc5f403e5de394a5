package io.tidemark.mirror.sink;

import io.tidemark.proto.v1.ErrorCode;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * Why a copier stopped its partition: the error that stopped it and, when a record was refused, that record's source
 * offset. A stopped partition copies nothing more until the mirror restarts.
 *
 * @param sourceOffset the refused record's offset on the source; empty when the partition could not be copied at all
 *                     (its target partition does not exist)
 * @param code         the target's error code (RECORD_TOO_LARGE, INVALID_TIMESTAMP, CORRUPT_BATCH, ...), or the
 *                     one that names why the partition has nowhere to go (UNKNOWN_PARTITION)
 * @param message      what the target said, or what the mirror found
 */
public record StopReason(OptionalLong sourceOffset, ErrorCode code, String message) {
    public StopReason {
        Objects.requireNonNull(sourceOffset, "sourceOffset");
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(message, "message");
    }

    /** A record at {@code sourceOffset} refused with {@code code} and {@code message}. */
    public static StopReason refused(long sourceOffset, ErrorCode code, String message) {
        return new StopReason(OptionalLong.of(sourceOffset), code, message);
    }

    /** A partition that has nowhere to go. */
    public static StopReason uncopyable(ErrorCode code, String message) {
        return new StopReason(OptionalLong.empty(), code, message);
    }

    /** One line: "RECORD_TOO_LARGE at source offset 417: message", or "UNKNOWN_PARTITION: message". */
    public String describe() {
        return code + (sourceOffset.isPresent() ? " at source offset " + sourceOffset.getAsLong() : "") + ": "
                + message;
    }
}
