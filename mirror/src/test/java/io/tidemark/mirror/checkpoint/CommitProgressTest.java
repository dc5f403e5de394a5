package io.tidemark.mirror.checkpoint;

import io.tidemark.mirror.checkpoint.CommitProgress.Kind;
import io.tidemark.mirror.checkpoint.CommitProgress.Reading;
import io.tidemark.proto.v1.MirrorCheckpoint;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A group's progress as the checkpoint agent reads it every interval, and what a checkpoint records of it. */
class CommitProgressTest {
    /** The progress after the agent read {@code first} and then {@code more}, in turn, since the mirror started. */
    private static CommitProgress read(Reading first, Reading... more) {
        CommitProgress progress = CommitProgress.first(first);
        for (Reading reading : more) {
            progress = progress.next(reading);
        }
        return progress;
    }

    @Test
    void unknownUntilTheGroupCommitsAgain() {
        CommitProgress first = CommitProgress.first(new Reading(100, 4_000));
        assertEquals(Kind.UNKNOWN, first.kind());
        assertSame(first, first.next(new Reading(100, 4_000)), "no commit since the last reading");

        MirrorCheckpoint.Builder checkpoint = MirrorCheckpoint.newBuilder();
        first.writeTo(checkpoint);
        assertEquals(MirrorCheckpoint.getDefaultInstance(), checkpoint.build(), "previous_known stays false");
    }

    @Test
    void aGroupThatCommitsLessOftenThanTheReadingsKeepsItsOwnCommitInterval() {
        CommitProgress progress = read(new Reading(100, 4_000), new Reading(100, 4_000), new Reading(200, 14_000),
                new Reading(200, 14_000));
        assertEquals(new CommitProgress(Optional.of(new Reading(100, 4_000)), new Reading(200, 14_000)), progress);
        assertEquals(Kind.MOVED, progress.kind());

        MirrorCheckpoint.Builder checkpoint = MirrorCheckpoint.newBuilder();
        progress.writeTo(checkpoint);
        assertEquals(MirrorCheckpoint.newBuilder().setPreviousKnown(true).setPreviousSourceOffset(100)
                .setPreviousSourceCommitTimeMs(4_000).build(), checkpoint.build());
    }

    @Test
    void theSameOffsetCommittedAgainIsStandingStill() {
        CommitProgress progress = read(new Reading(100, 4_000), new Reading(200, 14_000), new Reading(200, 19_000));
        assertEquals(new CommitProgress(Optional.of(new Reading(200, 14_000)), new Reading(200, 19_000)), progress);
        assertEquals(Kind.STANDING, progress.kind());
        assertEquals(Kind.MOVED, progress.next(new Reading(150, 20_000)).kind(), "moved back is moved too");
    }

    @Test
    void thePreviousReadingDiffersFromTheLatest() {
        assertEquals("the previous reading must differ from the latest: Reading[offset=1, commitTimeMs=2]",
                assertThrows(IllegalArgumentException.class, () -> new CommitProgress(Optional.of(new Reading(1, 2)),
                        new Reading(1, 2))).getMessage());
    }
}
