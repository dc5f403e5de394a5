package io.tidemark.mirror.source;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ReadPacerTest {
    @Test
    void withoutALimitItNeverWaits() {
        ReadPacer pacer = new ReadPacer(0);
        pacer.read(1L << 40, 1_000);
        assertEquals(0, pacer.waitMs(1_000));
    }

    @Test
    void aPollIsPaidForBeforeTheNext() {
        ReadPacer pacer = new ReadPacer(1_000);
        assertEquals(0, pacer.waitMs(1_000), "the first poll goes at once");
        pacer.read(500, 1_000);
        assertEquals(500, pacer.waitMs(1_000));
        assertEquals(1, pacer.waitMs(1_499));
        assertEquals(0, pacer.waitMs(1_500));
    }

    @Test
    void debtAccumulatesWhenPollsComeEarlyAndIdleTimeIsNotSavedUp() {
        ReadPacer pacer = new ReadPacer(1_000);
        pacer.read(500, 1_000);
        pacer.read(500, 1_000);
        assertEquals(1_000, pacer.waitMs(1_000), "two polls read back to back: a second of debt");
        pacer.read(100, 10_000);
        assertEquals(100, pacer.waitMs(10_000), "after an idle stretch only the last poll counts");
    }

    @Test
    void fractionsOfAMillisecondAddUpAcrossPollsAndAWaitRoundsUp() {
        ReadPacer pacer = new ReadPacer(3_000);
        pacer.read(1, 0);
        assertEquals(1, pacer.waitMs(0), "1/3 ms rounds up");
        pacer.read(2, 0);
        assertEquals(1, pacer.waitMs(0), "1/3 + 2/3 ms");
        pacer.read(3, 0);
        assertEquals(2, pacer.waitMs(0), "2 ms, not 3 rounded waits");
    }

    @Test
    void aNegativeRateIsRefused() {
        assertEquals("bytes per second -1 is negative",
                assertThrows(IllegalArgumentException.class, () -> new ReadPacer(-1)).getMessage());
    }
}
