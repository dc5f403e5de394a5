package io.tidemark.client.api;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tracked mode's stored position, step by step: each script line is a step and what must hold after it, as etcd's
 * data-driven raft tests are written. {@code arrive 10 12} (offsets fetched, in order; {@code skip} where the resumed
 * commit says they were complete), {@code complete 13} ({@code stale} when the completion is not of an unfinished
 * delivery), each followed by {@code -> stored N} (or {@code none}) and optionally {@code commit TEXT}: the metadata a
 * commit of the stored position carries ({@code ""} for none).
 */
class TrackedPositionTest {
    @Test
    void theSeedsExampleWaitsForTheEarliestUnfinishedDeliveryAndPassesTheOffsetNeverDelivered() {
        run(TrackedPosition.from(10), """
                arrive 10 12 13 14 15    -> stored none
                complete 10              -> stored 12   commit ""
                complete 13              -> stored 12   commit "tracked1 4 2,3"
                complete 14              -> stored 12   commit "tracked1 4 3"
                complete 12              -> stored 15   commit ""
                complete 15              -> stored 16   commit ""
                """);
    }

    @Test
    void completionsInAnyOrderNeverMoveThePositionPastUnfinishedWork() {
        run(TrackedPosition.from(0), """
                arrive 0 1 2 3 4 5       -> stored none
                complete 5               -> stored 0    commit "tracked1 6 1,2,3,4"
                complete 3               -> stored 0    commit "tracked1 6 1,2,4"
                complete 1               -> stored 0    commit "tracked1 6 2,4"
                complete 0               -> stored 2    commit "tracked1 4 2"
                complete 4               -> stored 2    commit "tracked1 4"
                arrive 6 9               -> stored 2    commit "tracked1 8 4,7"
                complete 2               -> stored 6    commit "tracked1 4 3"
                complete 9               -> stored 6    commit "tracked1 4"
                complete 6               -> stored 10   commit ""
                """);
    }

    @Test
    void withNothingUnfinishedThePositionIsTheOffsetAfterTheHighestDelivered() {
        run(TrackedPosition.from(100), """
                arrive 100               -> stored none
                complete 100             -> stored 101  commit ""
                arrive 140               -> stored 101  commit "tracked1 40 39"
                complete 140             -> stored 141  commit ""
                """);
    }

    @Test
    void aCompletionOfAnOffsetNotUnfinishedHereChangesNothing() {
        run(TrackedPosition.from(0), """
                arrive 0 1               -> stored none
                complete 1               -> stored 0
                stale 1                  -> stored 0
                stale 7                  -> stored 0
                complete 0               -> stored 2
                stale 0                  -> stored 2
                """);
    }

    @Test
    void aDeliveryRetriedInPlaceHoldsThePositionUntilItCompletes() {
        // A retry() without a retry topic delivers offset 3 again: nothing changes here until it completes.
        run(TrackedPosition.from(3), """
                arrive 3 4 5             -> stored none
                complete 4               -> stored 3    commit "tracked1 3 2"
                complete 5               -> stored 3    commit "tracked1 3"
                arrive 6                 -> stored 3    commit "tracked1 4 3"
                complete 6               -> stored 3    commit "tracked1 4"
                complete 3               -> stored 7    commit ""
                """);
    }

    @Test
    void aRestartFromACommitWithItsMetadataRedeliversOnlyTheUnfinishedWork() {
        // The seed's example committed as "12, tracked1 4 3": 13 and 14 were done, 12 and 15 were not.
        TrackedPosition resumed = TrackedPosition.resuming(12, TrackedCommitFormat.decode("tracked1 4 3"));
        run(resumed, """
                arrive 12                -> stored none
                skip 13 14               -> stored none
                arrive 15 16             -> stored none
                complete 12              -> stored 15   commit ""
                complete 16              -> stored 15   commit "tracked1 2"
                complete 15              -> stored 17   commit ""
                """);
    }

    @Test
    void aResumedPositionWaitsForUnfinishedWorkNotYetFetchedAndSkipsWorkDoneAboveIt() {
        // 12 and 17 were unfinished, 13..16 and 18..19 done.
        run(TrackedPosition.resuming(12, TrackedCommitFormat.decode("tracked1 8 5")), """
                arrive 12                -> stored none
                complete 12              -> stored 17   commit "tracked1 3"
                skip 13 14 15 16         -> stored 17   commit "tracked1 3"
                arrive 17                -> stored 17   commit "tracked1 3"
                skip 18 19               -> stored 17
                arrive 20                -> stored 17   commit "tracked1 4 3"
                complete 17              -> stored 20   commit ""
                complete 20              -> stored 21
                """);
    }

    @Test
    void anUnfinishedOffsetOfTheCommitThatTheLogNoLongerHoldsIsPassedWhenALaterOneArrives() {
        // 15 was unfinished; compaction removed it since: 16 arrives instead.
        run(TrackedPosition.resuming(12, TrackedCommitFormat.decode("tracked1 5 3")), """
                arrive 12                -> stored none
                skip 13 14               -> stored none
                complete 12              -> stored 15   commit "tracked1 2"
                arrive 17                -> stored 15   commit "tracked1 3 2"
                complete 17              -> stored 18   commit ""
                """);
    }

    @Test
    void foreignOrDamagedMetadataRedeliversEverythingFromTheCommittedOffset() {
        for (String metadata : List.of("", "checkpoint at 12", "tracked1", "tracked1 x", "tracked1 0", "tracked1 4 0",
                "tracked1 4 3,2", "tracked1 4 4", "tracked1 4 1 2", "tracked1 -4")) {
            assertEquals(Optional.empty(), TrackedCommitFormat.decode(metadata), metadata);
        }
        run(TrackedPosition.resuming(12, TrackedCommitFormat.decode("tracked1 4 3,2")), """
                arrive 12 13 14 15       -> stored none
                complete 12              -> stored 13
                """);
    }

    @Test
    void metadataThatWouldOutgrowItsBoundRedeliversFromTheFirstUnfinishedOffsetLeftOut() {
        TrackedPosition tracked = TrackedPosition.from(0);
        int offsets = 2_000;
        for (long offset = 0; offset < offsets; offset++) {
            assertTrue(tracked.arrived(offset * 1_000));
        }
        // Every other delivery completes, from the top down; 0 stays unfinished.
        for (long offset = offsets - 1; offset > 0; offset -= 2) {
            assertTrue(tracked.completed(offset * 1_000));
        }
        assertEquals(OptionalLong.of(0), tracked.stored());
        assertEquals(offsets / 2, tracked.unfinishedCount());
        String metadata = TrackedCommitFormat.encode(tracked.completedAbove().orElseThrow());
        assertTrue(metadata.length() <= TrackedCommitFormat.MAX_CHARS, metadata.length() + " chars");
        TrackedCommitFormat.CompletedAbove kept = TrackedCommitFormat.decode(metadata).orElseThrow();
        long[] pending = kept.pending();
        long lastListed = pending[pending.length - 1];
        assertEquals(lastListed + 2_000, kept.end(), "the end is the first unfinished offset left out");
        for (int i = 0; i < pending.length; i++) {
            assertEquals(2_000L * (i + 1), pending[i]);
        }
        // Resumed, it delivers what is listed, skips what was done below the end, and delivers all from the end on.
        TrackedPosition resumed = TrackedPosition.resuming(0, Optional.of(kept));
        for (long offset = 0; offset < offsets; offset++) {
            boolean done = offset % 2 == 1 && offset * 1_000 < kept.end();
            assertEquals(!done, resumed.arrived(offset * 1_000), "offset " + offset * 1_000);
        }
    }

    @Test
    void manyDeliveriesUnfinishedAtOnceWrapAndGrowTheWindow() {
        TrackedPosition tracked = TrackedPosition.from(0);
        for (long round = 0; round < 5; round++) {
            for (long offset = round * 100; offset < round * 100 + 100; offset++) {
                assertTrue(tracked.arrived(offset));
            }
            for (long offset = round * 100 + 99; offset > round * 100; offset--) {
                assertTrue(tracked.completed(offset));
                assertEquals(OptionalLong.of(round * 100), tracked.stored());
            }
            assertTrue(tracked.completed(round * 100));
            assertEquals(OptionalLong.of(round * 100 + 100), tracked.stored());
            assertEquals(0, tracked.unfinishedCount());
        }
    }

    @Test
    void offsetsMustArriveAscending() {
        TrackedPosition tracked = TrackedPosition.from(5);
        assertTrue(tracked.arrived(7));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> tracked.arrived(7));
        assertEquals("offset 7 arrived after 7; offsets arrive ascending", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> TrackedPosition.from(5).arrived(4));
    }

    @Test
    void theFormatWritesAndReadsItsText() {
        var above = new TrackedCommitFormat.CompletedAbove(40, new long[]{3, 17, 39});
        assertEquals("tracked1 40 3,17,39", TrackedCommitFormat.encode(above));
        assertEquals(Optional.of(above), TrackedCommitFormat.decode("tracked1 40 3,17,39"));
        assertEquals("tracked1 2", TrackedCommitFormat.encode(new TrackedCommitFormat.CompletedAbove(2, new long[0])));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new TrackedCommitFormat.CompletedAbove(5, new long[]{2, 5}));
        assertEquals("unfinished distances [2, 5] must ascend within (0, 5)", e.getMessage());
    }

    /** Runs each line of {@code script} on {@code tracked} and checks what the line says must hold after it. */
    private static void run(TrackedPosition tracked, String script) {
        for (String line : script.strip().split("\n")) {
            String[] parts = line.split("->");
            String[] step = parts[0].trim().split("\\s+");
            for (int i = 1; i < step.length; i++) {
                long offset = Long.parseLong(step[i]);
                switch (step[0]) {
                    case "arrive" -> assertTrue(tracked.arrived(offset), line + ": " + offset + " is delivered");
                    case "skip" -> assertFalse(tracked.arrived(offset), line + ": " + offset + " is skipped");
                    case "complete" -> assertTrue(tracked.completed(offset), line);
                    case "stale" -> assertFalse(tracked.completed(offset), line);
                    default -> throw new IllegalArgumentException("unknown step " + step[0]);
                }
            }
            List<String> expected = new ArrayList<>(List.of(parts[1].trim().split("\\s+", 3)));
            assertEquals("stored", expected.get(0), line);
            String stored = tracked.stored().isPresent() ? Long.toString(tracked.stored().getAsLong()) : "none";
            assertEquals(expected.get(1), stored, line);
            if (expected.size() == 3) {
                String commit = expected.get(2);
                assertTrue(commit.startsWith("commit \"") && commit.endsWith("\""), line);
                String metadata = tracked.completedAbove().map(TrackedCommitFormat::encode).orElse("");
                assertEquals(commit.substring("commit \"".length(), commit.length() - 1), metadata, line);
            }
        }
    }
}
