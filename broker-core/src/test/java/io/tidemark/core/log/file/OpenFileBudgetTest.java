package io.tidemark.core.log.file;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** When log.open.files.max does not fit the process's limits, and what the broker says then. */
class OpenFileBudgetTest {
    @Test
    void theDefaultFitsTheIssueMachinesLimits() {
        assertEquals(List.of(), OpenFileBudget.warnings(12_000, OptionalLong.of(20_000), OptionalLong.of(65_530)));
    }

    @Test
    void aBudgetWithoutRoomForSocketsAndRaftLogsIsNamedWithWhatFits() {
        assertEquals(List.of("log.open.files.max 12000 leaves fewer than 2000 of the 4096 files this process may "
                        + "open (ulimit -n) for sockets and Raft logs: lower it to 2096 or raise the limit"),
                OpenFileBudget.warnings(12_000, OptionalLong.of(4096), OptionalLong.of(65_530)));
        assertEquals(List.of(), OpenFileBudget.warnings(2096, OptionalLong.of(4096), OptionalLong.of(65_530)));
    }

    @Test
    void aBudgetWhoseIndexMapsPassVmMaxMapCountIsNamedWithWhatFits() {
        assertEquals(List.of("log.open.files.max 21000 allows 63000 index maps, which with the JVM's own 5000 is "
                        + "more than vm.max_map_count 65530: lower it to 20176 or raise vm.max_map_count"),
                OpenFileBudget.warnings(21_000, OptionalLong.of(1 << 20), OptionalLong.of(65_530)));
        assertEquals(List.of(), OpenFileBudget.warnings(20_176, OptionalLong.of(1 << 20), OptionalLong.of(65_530)));
    }

    /** vm.max_map_count as the kernel says it: a whole number, not its first digit (JDK 17 readString gave "6"). */
    @Test
    void aProcFileIsReadWhole(@TempDir Path dir) throws IOException {
        Path proc = Path.of("/proc/sys/vm/max_map_count");
        assertEquals(OptionalLong.of(Long.parseLong(Files.readAllLines(proc).get(0).trim())),
                OpenFileBudget.procNumber(proc));
        Path written = Files.writeString(dir.resolve("max_map_count"), "65530\n");
        assertEquals(OptionalLong.of(65_530), OpenFileBudget.procNumber(written));
        assertEquals(OptionalLong.empty(), OpenFileBudget.procNumber(Files.writeString(dir.resolve("bad"), "many")));
        assertEquals(OptionalLong.empty(), OpenFileBudget.procNumber(dir.resolve("missing")));
    }

    @Test
    void unknownLimitsAreNotChecked() {
        assertEquals(List.of(), OpenFileBudget.warnings(1_000_000, OptionalLong.empty(), OptionalLong.empty()));
    }
}
