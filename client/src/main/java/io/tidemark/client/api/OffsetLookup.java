package io.tidemark.client.api;

import io.tidemark.proto.v1.ListOffsetsResponse;

/**
 * The answer of a ListOffsets lookup ({@link OffsetSpec}).
 *
 * @param found          true when a record is at {@code offset} (its times are then set); false for
 *                       {@link OffsetSpec#latest()}, an empty log, and when no record is at or after the time asked
 *                       for: then {@code offset} is the log end offset
 * @param offset         the offset found, or the log end offset when {@code found} is false; never -1
 * @param receiveTimeMs  ReceiveTime of the record at {@code offset} when found
 * @param sendTimeMs     SendTime of the record at {@code offset} when found
 * @param logStartOffset the partition's first offset
 * @param logEndOffset   where the partition's next record will go
 */
public record OffsetLookup(boolean found, long offset, long receiveTimeMs, long sendTimeMs, long logStartOffset,
                           long logEndOffset) {
    static OffsetLookup of(ListOffsetsResponse response) {
        return new OffsetLookup(response.getFound(), response.getOffset(), response.getReceiveTimeMs(),
                response.getSendTimeMs(), response.getLogStartOffset(), response.getLogEndOffset());
    }

    /**
     * Where a consumer starting from this lookup reads next: the offset found, or the log end offset when no
     * record is at or after the time (so it waits for the next record).
     */
    long position() {
        return found ? offset : Math.max(offset, logEndOffset);
    }
}
