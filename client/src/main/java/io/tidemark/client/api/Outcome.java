package io.tidemark.client.api;

import java.time.Duration;

/**
 * What a {@link RecordHandler} made of a record, which the {@link ConsumerRuntime} turns into a stored position
 * (seed 002):
 * <ul>
 *   <li>{@link #ack()}: handled. Completes the record.</li>
 *   <li>{@link #drop()}: not handled and never to be: completes it as ack does (the difference is the application's,
 *       counted apart).</li>
 *   <li>{@link #retry()}: not handled yet. With a retry path declared (max attempts, a retry topic or a dead-letter
 *       topic), a copy carrying the next attempt goes to the retry topic, or at the limit to the dead-letter topic,
 *       and the record completes once the copy is stored; without one, Tracked mode delivers the record again before
 *       anything of its partition fetched later (the position waits for it) and Auto mode refuses it (logged and
 *       counted; its position was stored when it was handed out).</li>
 *   <li>{@link #retryAfter(Duration)}: not handled yet, and not to be tried again before the delay is over: a durable
 *       delayed copy, in every mode.</li>
 * </ul>
 */
public final class Outcome {
    /** The outcomes. */
    public enum Kind {
        ACK, DROP, RETRY, RETRY_AFTER
    }

    private static final Outcome ACK = new Outcome(Kind.ACK, Duration.ZERO);
    private static final Outcome DROP = new Outcome(Kind.DROP, Duration.ZERO);
    private static final Outcome RETRY = new Outcome(Kind.RETRY, Duration.ZERO);

    private final Kind kind;
    private final Duration delay;

    private Outcome(Kind kind, Duration delay) {
        this.kind = kind;
        this.delay = delay;
    }

    public static Outcome ack() {
        return ACK;
    }

    public static Outcome drop() {
        return DROP;
    }

    public static Outcome retry() {
        return RETRY;
    }

    /**
     * Not handled yet; deliver it again no sooner than {@code delay} from now, through a topic in every mode: a copy
     * carrying the next attempt and its due time ({@link RetryHeaders#DUE}) is written at once to the delay tier
     * ({@link ConsumerRuntime.Builder#delayTiers}), so no crash loses it, and the record completes once the copy is
     * stored; at the attempt limit it goes to the dead-letter topic as a retry would.
     *
     * @throws IllegalArgumentException when {@code delay} is negative or above 7 days
     */
    public static Outcome retryAfter(Duration delay) {
        if (delay.isNegative() || delay.compareTo(Duration.ofDays(7)) > 0) {
            throw new IllegalArgumentException("retryAfter(" + delay + ") is not allowed; the delay must be from 0 "
                    + "to 7 days");
        }
        return new Outcome(Kind.RETRY_AFTER, delay);
    }

    public Kind kind() {
        return kind;
    }

    /** The delay of {@link #retryAfter}; zero for the others. */
    public Duration delay() {
        return delay;
    }

    @Override
    public String toString() {
        return kind == Kind.RETRY_AFTER ? "retryAfter(" + delay + ")"
                : kind.name().toLowerCase(java.util.Locale.ROOT) + "()";
    }
}
