package io.tidemark.client.api;

import java.util.ArrayDeque;
import java.util.Optional;
import java.util.UUID;

/**
 * The consumer's state of one assigned partition: its position (the next offset {@code poll} returns), the
 * records fetched and not yet returned, whether a fetch is in flight and when a failed fetch may be retried.
 * A partition is fetched only when nothing of it is buffered, so its next fetch always starts at the position.
 *
 * <p>The topic id it is pinned to: every fetch asks for the topic of that id, so records of a topic deleted and
 * created again under the name never reach the position of the old one. Set by a seek with an id, else by the first
 * fetch answered; a seek without one clears it; a reset after OFFSET_OUT_OF_RANGE keeps it. A fetch refused with
 * UNKNOWN_TOPIC_ID stops the partition: no fetch until the next seek.
 *
 * <p>Not thread-safe: owned by the consumer's thread.
 */
final class PartitionState {
    /** Position of a partition that has none yet (no seek, no committed offset looked up). */
    static final long UNKNOWN = -1;

    final TopicPartition partition;
    final ArrayDeque<ConsumerRecord> buffered = new ArrayDeque<>();
    private long position = UNKNOWN;
    /** The position fell out of the log: reset it by auto.offset.reset, ignoring the committed offset. */
    private boolean resetOnly;
    boolean fetching;
    long retryAtMs;
    /** The high watermark of the last fetch answered, or {@link #UNKNOWN}. */
    long highWatermark = UNKNOWN;
    /** Paused by the application: neither fetched nor returned by poll until resumed; the position stays. */
    boolean paused;
    private Optional<UUID> topicId = Optional.empty();
    /** The topic of the pinned id is gone (UNKNOWN_TOPIC_ID): not fetched until sought. */
    private boolean stopped;

    PartitionState(TopicPartition partition) {
        this.partition = partition;
    }

    long position() {
        return position;
    }

    boolean hasPosition() {
        return position != UNKNOWN;
    }

    boolean resetOnly() {
        return resetOnly;
    }

    /**
     * Moves to {@code offset} of the topic of id {@code pin}, or of whichever topic has the name when empty (the next
     * fetch answered pins it), dropping what was buffered for the old position.
     */
    void seek(long offset, Optional<UUID> pin) {
        reset(offset);
        topicId = pin;
    }

    /** Moves to {@code offset} keeping the pinned topic id: a position looked up, not chosen by the application. */
    void reset(long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset " + offset + " of " + partition + " is negative");
        }
        position = offset;
        resetOnly = false;
        stopped = false;
        buffered.clear();
    }

    Optional<UUID> topicId() {
        return topicId;
    }

    /** Pins the id a fetch answered with, unless one is pinned already. */
    void answeredBy(UUID id) {
        if (topicId.isEmpty()) {
            topicId = Optional.of(id);
        }
    }

    /** The pinned topic is gone (UNKNOWN_TOPIC_ID): nothing more is fetched until a seek. */
    void stop() {
        stopped = true;
        buffered.clear();
    }

    /** Forgets the position after OFFSET_OUT_OF_RANGE; the next poll resets it by auto.offset.reset. */
    void lose() {
        position = UNKNOWN;
        resetOnly = true;
        buffered.clear();
    }

    /**
     * Moves the position up to {@code offset} over batches a fetch returned but no reader gets (transaction markers,
     * aborted transactions' batches); nothing while records are buffered or when the position is there already.
     */
    void passOver(long offset) {
        if (buffered.isEmpty() && offset > position) {
            position = offset;
        }
    }

    /** Takes the next buffered record and moves the position past it. */
    ConsumerRecord next() {
        ConsumerRecord record = buffered.pollFirst();
        if (record.offset() < position) {
            throw new IllegalStateException("buffered offset " + record.offset() + " of " + partition
                    + " is below the position " + position);
        }
        position = record.offset() + 1;
        return record;
    }

    /**
     * Whether a fetch can start now: not paused or stopped, a position, nothing buffered or in flight, and no backoff
     * running.
     */
    boolean fetchable(long nowMs) {
        return !paused && !stopped && hasPosition() && buffered.isEmpty() && !fetching && nowMs >= retryAtMs;
    }
}
