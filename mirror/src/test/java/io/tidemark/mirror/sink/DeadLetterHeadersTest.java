package io.tidemark.mirror.sink;

import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The dead-letter headers, name by name and value by value. */
class DeadLetterHeadersTest {
    private static final DeadLetterHeaders.DeadLetter TOO_LARGE = new DeadLetterHeaders.DeadLetter(
            new TopicPartition("orders", 2), ErrorCode.RECORD_TOO_LARGE, "batch of 9 bytes is above 8");

    private static Header text(String name, String value) {
        return new Header(name, value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theFourHeadersFollowTheRecordsOwn() {
        List<Header> added = DeadLetterHeaders.add(List.of(text("h", "1")), TOO_LARGE);
        assertEquals(List.of(text("h", "1"), text("tidemark.dead-letter.error", "RECORD_TOO_LARGE"),
                text("tidemark.dead-letter.message", "batch of 9 bytes is above 8"),
                text("tidemark.dead-letter.topic", "orders"), text("tidemark.dead-letter.partition", "2")), added);
        assertEquals(Optional.of(TOO_LARGE), DeadLetterHeaders.read(added));
    }

    @Test
    void aDeadLetterRefusedAgainNamesTheLastRefusalOnly() {
        DeadLetterHeaders.DeadLetter again = new DeadLetterHeaders.DeadLetter(new TopicPartition("dead", 0),
                ErrorCode.INVALID_TIMESTAMP, "SendTime outside");
        List<Header> twice = DeadLetterHeaders.add(DeadLetterHeaders.add(List.of(), TOO_LARGE), again);
        assertEquals(4, twice.size());
        assertEquals(Optional.of(again), DeadLetterHeaders.read(twice));
    }

    @Test
    void incompleteOrInvalidHeadersAreNoDeadLetter() {
        List<Header> headers = new ArrayList<>(DeadLetterHeaders.add(List.of(), TOO_LARGE));
        headers.remove(3);
        assertEquals(Optional.empty(), DeadLetterHeaders.read(headers));
        headers.add(text(DeadLetterHeaders.PARTITION, "two"));
        assertEquals(Optional.empty(), DeadLetterHeaders.read(headers));
    }
}
