package io.tidemark.cli;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FixedRateOptionsTest {
    @Test
    void theSourceSendsRateTimesDurationRecords() {
        assertEquals(15_000, FixedRateOptions.plannedRecords(1_000, Duration.ofSeconds(15), Duration.ofSeconds(5),
                100));
        assertEquals(4, FixedRateOptions.plannedRecords(3, Duration.ofMillis(1_500), Duration.ZERO, 0),
                "record i is due at i / rate s: 0, 0.33, 0.67 and 1 s fall within 1.5 s");
        assertEquals("--rate 1 for --duration 999 ms is 0 records; a run sends 1 to 100000000",
                assertThrows(IllegalArgumentException.class, () -> FixedRateOptions.plannedRecords(1,
                        Duration.ofMillis(999), Duration.ZERO, 0)).getMessage());
    }
}
