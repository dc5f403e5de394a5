package io.tidemark.proto.error;

import io.tidemark.proto.v1.ErrorCode;

import java.util.Objects;

/**
 * An operating error a user or a peer can cause: bad input, a request outside what the log holds, a bad
 * configuration value, a request sent to a broker that does not lead the partition. It carries the API error
 * code it maps to and a message that says what was wrong and what is allowed. {@link GrpcErrors} turns it
 * into a gRPC status on the broker and back into this exception in the client; nothing else catches it to
 * hide it.
 *
 * <p>Programmer errors (broken invariants) are {@link IllegalStateException}s, never this type.
 */
public final class TidemarkException extends RuntimeException {
    /** Leader node id when none is known. */
    public static final int NO_LEADER = -1;

    private final ErrorCode code;
    private final int leaderNodeId;
    private final long leaderEpoch;
    private final String leaderAddress;

    public TidemarkException(ErrorCode code, String message) {
        this(code, message, NO_LEADER, 0, "");
    }

    private TidemarkException(ErrorCode code, String message, int leaderNodeId, long leaderEpoch,
                              String leaderAddress) {
        super(Objects.requireNonNull(message, "message"));
        this.code = Objects.requireNonNull(code, "code");
        this.leaderNodeId = leaderNodeId;
        this.leaderEpoch = leaderEpoch;
        this.leaderAddress = Objects.requireNonNull(leaderAddress, "leaderAddress");
    }

    /** A NOT_LEADER error naming the leader ({@link #NO_LEADER} and "" when unknown), of an unknown epoch. */
    public static TidemarkException notLeader(String message, int leaderNodeId, String leaderAddress) {
        return notLeader(message, leaderNodeId, 0, leaderAddress);
    }

    /** A NOT_LEADER error naming the leader and the epoch of its leadership (0 when unknown). */
    public static TidemarkException notLeader(String message, int leaderNodeId, long leaderEpoch,
                                              String leaderAddress) {
        return new TidemarkException(ErrorCode.NOT_LEADER, message, leaderNodeId, leaderEpoch, leaderAddress);
    }

    static TidemarkException of(ErrorCode code, String message, int leaderNodeId, long leaderEpoch,
                                String leaderAddress) {
        return new TidemarkException(code, message, leaderNodeId, leaderEpoch, leaderAddress);
    }

    public ErrorCode code() {
        return code;
    }

    /** For NOT_LEADER: the leader's node id, or {@link #NO_LEADER}. */
    public int leaderNodeId() {
        return leaderNodeId;
    }

    /**
     * For NOT_LEADER naming a leader: the epoch of its leadership, the Raft term of the partition's group in which it
     * leads, as the refusing broker knows it; 0 when unknown.
     */
    public long leaderEpoch() {
        return leaderEpoch;
    }

    /** For NOT_LEADER: the leader's client address (host:port), or "" when unknown. */
    public String leaderAddress() {
        return leaderAddress;
    }

    /**
     * Whether the same request may succeed when retried (after a metadata refresh for NOT_LEADER): the one definition
     * of "retriable" every retry in Tidemark uses ({@link #retriable(ErrorCode)}).
     */
    public boolean retriable() {
        return retriable(code);
    }

    /**
     * Whether an error of {@code code} may go away by itself: NOT_AVAILABLE (the broker could not answer, or the call
     * was cut: {@link GrpcErrors#fromThrowable}) and NOT_LEADER (another broker leads the partition). Every other code
     * is an answer the same request gets again. UNKNOWN_TOPIC and UNKNOWN_PARTITION are not retriable: where they may
     * only mean that the client's metadata is older than a topic, the client retries them after a refresh itself.
     */
    public static boolean retriable(ErrorCode code) {
        return code == ErrorCode.NOT_LEADER || code == ErrorCode.NOT_AVAILABLE;
    }

    @Override
    public String toString() {
        return code + ": " + getMessage();
    }
}
