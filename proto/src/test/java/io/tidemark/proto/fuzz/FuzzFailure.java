package io.tidemark.proto.fuzz;

/**
 * A property a target checks did not hold for an input: an accepted input not read back whole, a refusal that changed
 * state, two checks that disagree. Thrown by targets; {@link FuzzCampaign} reports it with the seed, the input's index
 * and its bytes.
 */
public final class FuzzFailure extends AssertionError {
    public FuzzFailure(String message) {
        super(message);
    }

    /** Throws a failure saying {@code message} unless {@code condition} holds. */
    public static void check(boolean condition, String message) {
        if (!condition) {
            throw new FuzzFailure(message);
        }
    }

    /** Throws a failure naming both values unless they are equal. */
    public static void checkEquals(Object expected, Object actual, String what) {
        if (!java.util.Objects.equals(expected, actual)) {
            throw new FuzzFailure(what + ": expected " + expected + ", got " + actual);
        }
    }
}
