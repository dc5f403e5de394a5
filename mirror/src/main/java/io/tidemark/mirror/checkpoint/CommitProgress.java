package io.tidemark.mirror.checkpoint;

import io.tidemark.proto.v1.MirrorCheckpoint;

import java.util.Objects;
import java.util.Optional;

/**
 * A consumer group's progress on one source partition, from the {@link CheckpointAgent}'s readings of its committed
 * offset: the latest reading, and the last one before it that differs (an earlier commit). A reading equal to the
 * latest (no commit since) changes nothing, so the two are one commit apart however often the agent reads, and a
 * group that commits less often than the agent reads still gets its rate over its own commit interval. Both times are
 * the source's, so the rate does not depend on when the mirror read.
 *
 * <p>Kept in memory only: after the mirror starts, a partition's progress is {@link Kind#UNKNOWN} until the group
 * commits again (mirror.proto, {@code previous_known}).
 *
 * @param previous the last reading before {@code latest} that differs from it; empty while the agent saw only one
 * @param latest   the latest reading
 */
record CommitProgress(Optional<Reading> previous, Reading latest) {
    CommitProgress {
        Objects.requireNonNull(previous, "previous");
        Objects.requireNonNull(latest, "latest");
        if (previous.filter(latest::equals).isPresent()) {
            throw new IllegalArgumentException("the previous reading must differ from the latest: " + latest);
        }
    }

    /**
     * A reading of a group's committed offset on the source.
     *
     * @param offset       the committed offset
     * @param commitTimeMs when the source stored the commit (source clock, ms since the epoch)
     */
    record Reading(long offset, long commitTimeMs) {
    }

    /** What a checkpoint with this progress tells about the group; a change of it at the same offset is written. */
    enum Kind {
        /** No earlier commit seen. */
        UNKNOWN,
        /** The group committed the same offset again: it stood still. */
        STANDING,
        /** The group's last commit moved its offset. */
        MOVED
    }

    /** The progress after the first reading since the mirror started. */
    static CommitProgress first(Reading reading) {
        return new CommitProgress(Optional.empty(), reading);
    }

    /** The progress after {@code reading}: unchanged when it is the latest again, else the latest becomes previous. */
    CommitProgress next(Reading reading) {
        return reading.equals(latest) ? this : new CommitProgress(Optional.of(latest), reading);
    }

    Kind kind() {
        return previous.map(p -> p.offset() == latest.offset() ? Kind.STANDING : Kind.MOVED).orElse(Kind.UNKNOWN);
    }

    /** Sets the checkpoint's previous reading (mirror.proto, {@code previous_known} and the fields after it). */
    void writeTo(MirrorCheckpoint.Builder checkpoint) {
        previous.ifPresent(p -> checkpoint.setPreviousKnown(true).setPreviousSourceOffset(p.offset())
                .setPreviousSourceCommitTimeMs(p.commitTimeMs()));
    }
}
