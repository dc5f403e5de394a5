package io.tidemark.client.api;

import io.tidemark.proto.record.Header;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;

/**
 * The headers a {@link ConsumerRuntime} puts on the copies it writes to a retry or dead-letter topic. Values are
 * UTF-8 text.
 */
public final class RetryHeaders {
    /**
     * Which delivery attempt of the record this is, in decimal: the first delivery is attempt 1 (the header absent or
     * 1); a copy for a retry carries the next; a dead-letter copy carries the attempt that failed last.
     */
    public static final String ATTEMPT = "tidemark.attempt";
    /**
     * On a delayed copy ({@link Outcome#retryAfter}): when it is due, in ms since the epoch on the clock of the runtime
     * that wrote it; it is not delivered before ({@link DelayTiers}).
     */
    public static final String DUE = "tidemark.due";
    /**
     * On a dead-letter copy: why the last attempt failed (the handler's exception, or that it asked for a retry).
     * The name, and those of the topic and partition, are the ones the mirror's dead letters use.
     */
    public static final String DEAD_LETTER_MESSAGE = "tidemark.dead-letter.message";
    /** On a dead-letter copy: the topic of the record whose last attempt failed. */
    public static final String DEAD_LETTER_TOPIC = "tidemark.dead-letter.topic";
    /** On a dead-letter copy: its partition, in decimal. */
    public static final String DEAD_LETTER_PARTITION = "tidemark.dead-letter.partition";
    /** On a dead-letter copy: its offset, in decimal. */
    public static final String DEAD_LETTER_OFFSET = "tidemark.dead-letter.offset";

    private RetryHeaders() {
    }

    /** The due time {@code headers} give ({@link #DUE}); empty without one or when it is not a decimal number. */
    public static OptionalLong due(List<Header> headers) {
        OptionalLong due = OptionalLong.empty();
        for (Header header : headers) {
            if (header.name().equals(DUE)) {
                try {
                    due = OptionalLong.of(Long.parseLong(new String(header.value(), StandardCharsets.UTF_8)));
                } catch (NumberFormatException e) {
                    due = OptionalLong.empty();
                }
            }
        }
        return due;
    }

    /**
     * The attempt {@code headers} say this is: 1 without the header.
     *
     * @throws IllegalArgumentException when the header is not a decimal number from 1 (a copy this runtime did not
     *                                  write)
     */
    public static int attempt(List<Header> headers) {
        String text = null;
        for (Header header : headers) {
            if (header.name().equals(ATTEMPT)) {
                text = new String(header.value(), StandardCharsets.UTF_8);
            }
        }
        if (text == null) {
            return 1;
        }
        int attempt;
        try {
            attempt = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            attempt = 0;
        }
        if (attempt < 1) {
            throw new IllegalArgumentException("header " + ATTEMPT + " is \"" + text + "\"; a decimal number from 1"
                    + " is allowed");
        }
        return attempt;
    }
}
