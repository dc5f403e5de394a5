package io.tidemark.client.api;

import java.util.Arrays;
import java.util.Optional;

/**
 * What a Tracked-mode commit keeps beside its offset, in the commit's metadata text, so that a restart redelivers
 * only the work that was unfinished, not every record above the committed offset.
 *
 * <p>The text, US-ASCII:
 * <pre>
 *   tracked1 END [PENDING,PENDING,...]
 * </pre>
 * {@code tracked1} names the format and its version. {@code END} and each {@code PENDING} are decimal distances
 * above the committed offset {@code C}, separated by one space and by commas: every offset from {@code C + END} on
 * is unfinished (never delivered), and below it the unfinished ones are {@code C} itself and {@code C + PENDING} for
 * each listed distance, ascending, each above 0 and below {@code END}. Every other offset in {@code [C, C + END)} was
 * completed (acknowledged, dropped or copied to a retry topic) or never delivered because the log does not hold it
 * (compacted away, a transaction marker): a reader resuming at {@code C} skips them. {@code END} is at least 1 (a
 * commit with nothing completed above its offset carries no metadata).
 *
 * <p>The text is bounded by {@link #MAX_CHARS}: when the unfinished offsets do not fit, the list stops at the last
 * one that does and {@code END} becomes the first left out, so the restart redelivers that one and everything after
 * it, completed or not: more work done twice, never work lost. With at most {@code maxInFlightPerPartition}
 * deliveries unfinished and distances below 100,000, 1,000 chars hold 140 of them.
 *
 * <p>Metadata that does not start with {@code tracked1 } (another client's) or does not parse as above means no
 * record above the offset is known to be complete: everything from the offset is delivered again.
 *
 * <p>Stateless.
 */
final class TrackedCommitFormat {
    /** The most characters the metadata takes; the broker keeps up to 4,096. */
    static final int MAX_CHARS = 1_000;
    private static final String TAG = "tracked1 ";

    private TrackedCommitFormat() {
    }

    /**
     * What a commit at {@code committed} says of the offsets above it.
     *
     * @param end     the distance from the committed offset at which every offset is unfinished; at least 1
     * @param pending the distances of the unfinished offsets above the committed one and below {@code end},
     *                ascending, each in {@code (0, end)}
     */
    record CompletedAbove(long end, long[] pending) {
        CompletedAbove {
            if (end < 1) {
                throw new IllegalArgumentException("end " + end + " is below 1");
            }
            pending = pending.clone();
            long previous = 0;
            for (long distance : pending) {
                if (distance <= previous || distance >= end) {
                    throw new IllegalArgumentException("unfinished distances " + Arrays.toString(pending)
                            + " must ascend within (0, " + end + ")");
                }
                previous = distance;
            }
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof CompletedAbove c && end == c.end && Arrays.equals(pending, c.pending);
        }

        @Override
        public int hashCode() {
            return 31 * Long.hashCode(end) + Arrays.hashCode(pending);
        }

        @Override
        public String toString() {
            return "CompletedAbove[end=" + end + ", pending=" + Arrays.toString(pending) + "]";
        }
    }

    /** The metadata for {@code above}, cut to {@link #MAX_CHARS} as the class says. */
    static String encode(CompletedAbove above) {
        StringBuilder list = new StringBuilder();
        long end = above.end();
        int fixed = TAG.length() + Long.toString(end).length() + 1;
        for (long distance : above.pending()) {
            String item = (list.isEmpty() ? "" : ",") + distance;
            if (fixed + list.length() + item.length() > MAX_CHARS) {
                end = distance;
                break;
            }
            list.append(item);
        }
        return TAG + end + (list.isEmpty() ? "" : " " + list);
    }

    /** What {@code metadata} says, or empty when it is not this format (everything above is unfinished). */
    static Optional<CompletedAbove> decode(String metadata) {
        if (!metadata.startsWith(TAG) || metadata.length() > MAX_CHARS) {
            return Optional.empty();
        }
        String[] parts = metadata.substring(TAG.length()).split(" ", -1);
        try {
            if (parts.length > 2) {
                return Optional.empty();
            }
            long end = Long.parseLong(parts[0]);
            long[] pending = parts.length == 1 ? new long[0]
                    : Arrays.stream(parts[1].split(",", -1)).mapToLong(Long::parseLong).toArray();
            return Optional.of(new CompletedAbove(end, pending));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
