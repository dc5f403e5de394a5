package io.tidemark.replication.statemachine;

import io.tidemark.proto.fuzz.FuzzCampaign;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A short fuzzing campaign of a fixed seed for the partition groups' requests ({@link GroupEntryFormatFuzzTarget}). A
 * finding fails with the seed, the input's index and its bytes; {@code FuzzCampaign.input(target, seed, index)} makes
 * that input again.
 */
class GroupEntryFormatFuzzTest {
    private static final long SEED = 20_261_205L;

    @Test
    @Timeout(120)
    void requestsTakenAreEntriesEveryReplicaReads() throws Exception {
        FuzzCampaign.check(new GroupEntryFormatFuzzTarget(), SEED, 8_000);
    }
}
