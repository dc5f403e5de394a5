package io.tidemark.client.api;

import io.tidemark.proto.fuzz.FuzzTarget;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.check;
import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

/**
 * {@link TrackedCommitFormat#decode} on any commit metadata (any member of a group may commit any text): it never
 * throws, and what it reads encodes and decodes again to the same offsets, an end of at least 1 above distances that
 * ascend within it.
 *
 * <p>Stateless.
 */
public final class TrackedCommitFormatFuzzTarget implements FuzzTarget {
    @Override
    public String name() {
        return "tracked-commit";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        long end = random.nextInt(4) == 0 ? random.nextLong(1, Long.MAX_VALUE) : 1 + random.nextInt(1000);
        int count = (int) Math.min(end - 1, random.nextInt(4) == 0 ? random.nextInt(200) : random.nextInt(5));
        long[] pending = new long[count];
        long previous = 0;
        for (int i = 0; i < count && previous + 1 < end; i++) {
            long room = (end - previous) / (count - i + 1);
            previous = previous + 1 + random.nextLong(0, Math.max(1, Math.min(100, room)));
            pending[i] = Math.min(previous, end - 1);
        }
        long[] ascending = java.util.Arrays.stream(pending).filter(d -> d > 0).distinct().sorted().toArray();
        how.append("tracked commit, end ").append(end).append(", ").append(ascending.length).append(" unfinished");
        return TrackedCommitFormat.encode(new TrackedCommitFormat.CompletedAbove(end, ascending))
                .getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String run(byte[] input) {
        String metadata = new String(input, StandardCharsets.UTF_8);
        Optional<TrackedCommitFormat.CompletedAbove> read = TrackedCommitFormat.decode(metadata);
        if (read.isEmpty()) {
            return REFUSED + " (empty: everything above redelivered)";
        }
        TrackedCommitFormat.CompletedAbove above = read.get();
        check(above.end() >= 1, "end " + above.end());
        String again = TrackedCommitFormat.encode(above);
        check(again.length() <= metadata.length(), "encoded again in " + again.length() + " chars, from "
                + metadata.length());
        checkEquals(read, TrackedCommitFormat.decode(again), "the metadata encoded again");
        return ACCEPTED;
    }
}
