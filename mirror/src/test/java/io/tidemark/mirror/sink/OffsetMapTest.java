package io.tidemark.mirror.sink;

import io.tidemark.mirror.sink.OffsetMap.Exact;
import io.tidemark.mirror.sink.OffsetMap.NothingHeld;
import io.tidemark.mirror.sink.OffsetMap.Unknown;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Translating committed source offsets to the target, as a scenario of writes. */
class OffsetMapTest {
    @Test
    void nothingHeldUntilTheFirstBatch() {
        OffsetMap map = new OffsetMap(10);
        assertEquals(new OffsetMap.NotAnchored(), map.translate(0), "not asked the target yet: not nothing held");
        map.reset(OffsetMap.NONE, OffsetMap.NONE);
        assertEquals(new NothingHeld(), map.translate(0));
        map.written(new long[] {0, 1, 2}, 100);
        assertEquals(new Exact(100, false), map.translate(0));
        assertEquals(new Exact(102, false), map.translate(2));
        assertEquals(new Exact(103, false), map.translate(3), "all consumed: right after the last copy");
        assertEquals(new Exact(103, true), map.translate(5), "the group is ahead of the mirror");
    }

    @Test
    void gapsAndOtherOriginsBetweenBatches() {
        OffsetMap map = new OffsetMap(10);
        map.reset(OffsetMap.NONE, OffsetMap.NONE);
        map.written(new long[] {10, 11}, 0);
        map.written(new long[] {12, 15, 16}, 7);
        map.written(new long[] {20}, 30);
        assertEquals(new Exact(0, false), map.translate(3), "before the first copy: the first copy");
        assertEquals(new Exact(8, false), map.translate(13), "a skipped origin offset: the next copy");
        assertEquals(new Exact(9, false), map.translate(16));
        assertEquals(new Exact(30, false), map.translate(17), "between batches: the next batch's first copy");
        assertEquals(new Exact(31, false), map.translate(21));
    }

    @Test
    void belowTheAnchorOrWhatWasForgottenNeedsALookup() {
        OffsetMap map = new OffsetMap(2);
        map.reset(49, 500);
        assertEquals(new Unknown(49, 500), map.translate(10));
        assertEquals(new Unknown(49, 500), map.translate(49));
        assertEquals(new Exact(501, false), map.translate(50));
        map.written(new long[] {50, 51}, 510);
        map.written(new long[] {52, 53}, 520);
        map.written(new long[] {54}, 530);
        assertEquals(new Unknown(54, 530), map.translate(51), "the first batch was forgotten");
        assertEquals(new Exact(520, false), map.translate(52));
        assertEquals(new Exact(530, false), map.translate(54));
    }

    @Test
    void aBatchMustContinueAfterTheLast() {
        OffsetMap map = new OffsetMap(2);
        map.reset(5, 9);
        assertEquals("a written batch must continue after origin offset 5: [5, 6]",
                assertThrows(IllegalStateException.class, () -> map.written(new long[] {5, 6}, 10)).getMessage());
    }
}
