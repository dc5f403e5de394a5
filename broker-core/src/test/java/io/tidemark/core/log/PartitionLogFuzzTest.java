package io.tidemark.core.log;

import io.tidemark.proto.fuzz.FuzzCampaign;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * A short fuzzing campaign of a fixed seed on a real partition log's append path ({@link PartitionLogFuzzTarget}): no
 * refused batch changes the log, every accepted one reads back exactly, and the log opens again with what it held. A
 * finding fails with the seed, the input's index and its bytes; the log's state depends on the inputs before, so
 * {@code new FuzzCampaign(new PartitionLogFuzzTarget(dir, SEED), SEED).run(index + 1)} makes it again.
 */
class PartitionLogFuzzTest {
    private static final long SEED = 20_261_205L;

    @TempDir(factory = MemoryTempDirFactory.class)
    Path dir;

    @Test
    @Timeout(120)
    void refusedBatchesChangeNothingAndAcceptedOnesReadBack() throws Exception {
        FuzzCampaign.check(new PartitionLogFuzzTarget(dir, SEED), SEED, 5_000);
    }
}
