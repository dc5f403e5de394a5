package io.tidemark.client.api;

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
 * </ul>
 */
public final class Outcome {
    /** The outcomes. */
    public enum Kind {
        ACK, DROP, RETRY
    }

    private static final Outcome ACK = new Outcome(Kind.ACK);
    private static final Outcome DROP = new Outcome(Kind.DROP);
    private static final Outcome RETRY = new Outcome(Kind.RETRY);

    private final Kind kind;

    private Outcome(Kind kind) {
        this.kind = kind;
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

    public Kind kind() {
        return kind;
    }

    @Override
    public String toString() {
        return kind.name().toLowerCase(java.util.Locale.ROOT) + "()";
    }
}
