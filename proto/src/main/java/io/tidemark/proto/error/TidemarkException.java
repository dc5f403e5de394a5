package io.tidemark.proto.error;

import io.tidemark.proto.v1.ErrorCode;

import java.util.Objects;

/**
 * An operating error a user or a peer can cause: bad input, a request outside what the log holds, a bad
 * configuration value. It carries the API error code it maps to and a message that says what was wrong and
 * what is allowed. The gRPC layer maps it to a response in one place; nothing below that layer catches it to
 * hide it.
 *
 * <p>Programmer errors (broken invariants) are {@link IllegalStateException}s, never this type.
 */
public final class TidemarkException extends RuntimeException {
    private final ErrorCode code;

    public TidemarkException(ErrorCode code, String message) {
        super(Objects.requireNonNull(message, "message"));
        this.code = Objects.requireNonNull(code, "code");
    }

    public ErrorCode code() {
        return code;
    }

    @Override
    public String toString() {
        return code + ": " + getMessage();
    }
}
