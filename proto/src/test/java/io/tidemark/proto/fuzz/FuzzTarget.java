package io.tidemark.proto.fuzz;

import java.io.IOException;
import java.util.SplittableRandom;

/**
 * A decoder, or a path of the broker, fed bytes by a {@link FuzzCampaign}, with what it must do with any of them: end
 * with one of the outcomes its documentation names (an accepted input, or a refusal of a documented exception type and
 * error code), and, for an accepted input, give back what the input holds. Anything else (an exception of another
 * type, a refusal that changed state, an accepted input read back otherwise) is a finding.
 *
 * <p>A target does not time its calls: each check is held to the input's size instead (a length read from the input is
 * never trusted before the bytes that hold it are there), so a call's work is bounded by what it was given. A call
 * that never returns is caught by the JUnit test's timeout, not here.
 *
 * <p>Targets are not thread-safe: a campaign runs one on one thread. A stateful target (a partition log) closes what it
 * opened in {@link #close}.
 */
public interface FuzzTarget extends AutoCloseable {
    /** What the outcome label of an accepted input starts with. */
    String ACCEPTED = "accepted";
    /** What the outcome label of a refused input starts with. */
    String REFUSED = "refused";

    /** A short name for reports and the runner's {@code --targets}. */
    String name();

    /**
     * A well-formed input, as a correct writer makes it: the campaign runs some as they are and mutates the others.
     *
     * @param how what the input is, appended for the report of a finding
     */
    byte[] valid(SplittableRandom random, StringBuilder how);

    /**
     * Mutates an input: by default blindly ({@link Mutator#mutate}); a target that knows its format also aims at its
     * fields (a batch's header fields and record lengths).
     */
    default byte[] mutate(byte[] input, SplittableRandom random, StringBuilder how) {
        return Mutator.mutate(input, random, how);
    }

    /**
     * The last step on a mutated, spliced or random input: lets some of them past the check that would stop nearly
     * every one of them first (a batch's CRC, which a mutation almost always breaks), so that the checks behind it are
     * reached. By default the input as it is.
     */
    default byte[] repair(byte[] input, SplittableRandom random, StringBuilder how) {
        return input;
    }

    /**
     * Runs one input and checks what came of it.
     *
     * @return the outcome's label: {@value #ACCEPTED} or {@value #REFUSED}, then what kind (an error code, an exception
     *         type), for the tally of outcomes
     * @throws Throwable anything else than a documented refusal, or a {@link FuzzFailure} when an accepted input is
     *                   not read back whole, or a refusal changed state
     */
    String run(byte[] input) throws Exception;

    @Override
    default void close() throws IOException {
    }
}
