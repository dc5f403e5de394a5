package io.tidemark.client.api;

import java.util.Objects;

/**
 * A consumer group's committed position in a partition.
 *
 * @param offset   the next offset the group will read, not negative
 * @param metadata free text kept with the offset (the broker keeps at most 4096 bytes); "" for none
 */
public record OffsetAndMetadata(long offset, String metadata) {
    public OffsetAndMetadata {
        if (offset < 0) {
            throw new IllegalArgumentException("offset " + offset + " is negative");
        }
        Objects.requireNonNull(metadata, "metadata");
    }

    public OffsetAndMetadata(long offset) {
        this(offset, "");
    }
}
