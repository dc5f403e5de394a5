package io.tidemark.mirror.sink;

import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The headers that say why a record is in a mirror's dead-letter topic ({@code tidemark mirror --dead-letter-topic}):
 * a dead letter is the copy the target refused (key, value, SendTime, its own headers and the
 * {@code tidemark.origin} provenance of the copy), with these four between its own headers and the provenance:
 * <pre>
 * tidemark.dead-letter.error      the target's error code, e.g. RECORD_TOO_LARGE        (UTF-8 text, as all four)
 * tidemark.dead-letter.message    the target's message
 * tidemark.dead-letter.topic      the target topic the copy was meant for
 * tidemark.dead-letter.partition  its partition, in decimal
 * </pre>
 * Headers of these names that the record carried are dropped (a dead letter copied on and refused again names the
 * last refusal only), as a copy drops the provenance it carried.
 *
 * <p>Stateless.
 */
public final class DeadLetterHeaders {
    public static final String ERROR = "tidemark.dead-letter.error";
    public static final String MESSAGE = "tidemark.dead-letter.message";
    public static final String TOPIC = "tidemark.dead-letter.topic";
    public static final String PARTITION = "tidemark.dead-letter.partition";
    private static final List<String> NAMES = List.of(ERROR, MESSAGE, TOPIC, PARTITION);

    /** What the headers of a dead letter say. */
    public record DeadLetter(TopicPartition meantFor, ErrorCode code, String message) {
    }

    private DeadLetterHeaders() {
    }

    /** {@code headers} without dead-letter headers, then the four of {@code deadLetter}. */
    public static List<Header> add(List<Header> headers, DeadLetter deadLetter) {
        List<Header> added = new ArrayList<>(headers.size() + NAMES.size());
        for (Header header : headers) {
            if (!NAMES.contains(header.name())) {
                added.add(header);
            }
        }
        added.add(text(ERROR, deadLetter.code().name()));
        added.add(text(MESSAGE, deadLetter.message()));
        added.add(text(TOPIC, deadLetter.meantFor().topic()));
        added.add(text(PARTITION, Integer.toString(deadLetter.meantFor().partition())));
        return added;
    }

    /** The dead letter {@code headers} describe; empty when they lack one of the four or hold one that is not valid. */
    public static Optional<DeadLetter> read(List<Header> headers) {
        String[] values = new String[NAMES.size()];
        for (Header header : headers) {
            int index = NAMES.indexOf(header.name());
            if (index >= 0) {
                values[index] = new String(header.value(), StandardCharsets.UTF_8);
            }
        }
        for (String value : values) {
            if (value == null) {
                return Optional.empty();
            }
        }
        try {
            return Optional.of(new DeadLetter(new TopicPartition(values[2], Integer.parseInt(values[3])),
                    ErrorCode.valueOf(values[0]), values[1]));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static Header text(String name, String value) {
        return new Header(name, value.getBytes(StandardCharsets.UTF_8));
    }
}
