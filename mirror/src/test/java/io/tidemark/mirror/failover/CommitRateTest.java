package io.tidemark.mirror.failover;

import io.tidemark.proto.v1.MirrorCheckpoint;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static io.tidemark.mirror.failover.MirrorStates.checkpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A group's commit rate from a checkpoint's previous reading, and the records it commits in a time. */
class CommitRateTest {
    /** A checkpoint of offset 100 committed at 10 s, after {@code previousOffset} at {@code previousMs}. */
    private static MirrorCheckpoint after(long previousOffset, long previousMs) {
        return checkpoint(0, 100, 90).setSourceCommitTimeMs(10_000).setPreviousKnown(true)
                .setPreviousSourceOffset(previousOffset).setPreviousSourceCommitTimeMs(previousMs).build();
    }

    @Test
    void theRecordsBetweenTheTwoCommitsOverTheTimeBetweenThem() {
        CommitRate rate = CommitRate.of(after(40, 2_000)).orElseThrow();

        assertEquals(new CommitRate(60, 8_000), rate);
        assertEquals(7.5, rate.perSecond());
        assertEquals(23, rate.recordsIn(3_000), "22.5, half up");
        assertEquals(0, rate.recordsIn(-500), "a silence before the commit (the clocks' difference) is no time");
    }

    @Test
    void theSameOffsetCommittedAgainIsNoProgress() {
        CommitRate rate = CommitRate.of(after(100, 6_000)).orElseThrow();

        assertEquals(new CommitRate(0, 4_000), rate);
        assertEquals(0.0, rate.perSecond());
        assertEquals(0, rate.recordsIn(3_600_000));
    }

    @Test
    void unknownWithoutPreviousReadingAfterAMoveBackOrWithoutTime() {
        assertEquals(Optional.empty(), CommitRate.of(checkpoint(0, 100, 90).setSourceCommitTimeMs(10_000).build()),
                "the first checkpoint after the mirror started, or one older than the field");
        assertEquals(Optional.empty(), CommitRate.of(after(120, 2_000)), "the offset was moved back");
        assertEquals(Optional.empty(), CommitRate.of(after(40, 10_000)), "the source's clock did not advance");
        assertEquals(Optional.of(new CommitRate(0, 0)), CommitRate.of(after(100, 12_000)),
                "standing still whatever the clock did");
    }

    @Test
    void recordsNeedTime() {
        assertEquals("not a commit rate: 5 records over 0 ms", assertThrows(IllegalArgumentException.class,
                () -> new CommitRate(5, 0)).getMessage());
    }
}
