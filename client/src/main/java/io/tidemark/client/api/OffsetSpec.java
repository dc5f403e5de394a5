package io.tidemark.client.api;

import io.tidemark.proto.v1.ListOffsetsRequest;

import java.util.Objects;

/**
 * What a ListOffsets lookup asks for: the log's earliest or latest offset, or the first record whose ReceiveTime
 * (or, in log order, SendTime) is at or after a time.
 *
 * @param kind   what to look up
 * @param timeMs for {@link Kind#RECEIVE_TIME} and {@link Kind#SEND_TIME}: ms since the epoch, not negative;
 *               {@link #NO_TIME} for the others
 */
public record OffsetSpec(Kind kind, long timeMs) {
    /** {@link #timeMs} of the specs that carry no time. */
    public static final long NO_TIME = -1;

    public enum Kind { EARLIEST, LATEST, RECEIVE_TIME, SEND_TIME }

    public OffsetSpec {
        Objects.requireNonNull(kind, "kind");
        boolean timed = kind == Kind.RECEIVE_TIME || kind == Kind.SEND_TIME;
        if (timed && timeMs < 0) {
            throw new IllegalArgumentException(kind + " lookup time " + timeMs + " is negative; it is ms since"
                    + " the epoch");
        }
        if (!timed && timeMs != NO_TIME) {
            throw new IllegalArgumentException(kind + " takes no time, but " + timeMs + " was given");
        }
    }

    /** The log start offset. */
    public static OffsetSpec earliest() {
        return new OffsetSpec(Kind.EARLIEST, NO_TIME);
    }

    /** The log end offset: where the next record will go. */
    public static OffsetSpec latest() {
        return new OffsetSpec(Kind.LATEST, NO_TIME);
    }

    /** The first record whose ReceiveTime is at or after {@code timeMs}. */
    public static OffsetSpec receiveTime(long timeMs) {
        return new OffsetSpec(Kind.RECEIVE_TIME, timeMs);
    }

    /** The first record, in log order, whose SendTime is at or after {@code timeMs}. */
    public static OffsetSpec sendTime(long timeMs) {
        return new OffsetSpec(Kind.SEND_TIME, timeMs);
    }

    ListOffsetsRequest toRequest(TopicPartition tp) {
        ListOffsetsRequest.Builder request = ListOffsetsRequest.newBuilder().setTopic(tp.topic())
                .setPartition(tp.partition());
        switch (kind) {
            case EARLIEST -> request.setEarliest(true);
            case LATEST -> request.setLatest(true);
            case RECEIVE_TIME -> request.setReceiveTimeMs(timeMs);
            case SEND_TIME -> request.setSendTimeMs(timeMs);
            default -> throw new IllegalStateException("unhandled kind " + kind);
        }
        return request.build();
    }
}
