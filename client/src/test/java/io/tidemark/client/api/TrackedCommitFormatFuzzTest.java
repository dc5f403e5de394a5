package io.tidemark.client.api;

import io.tidemark.proto.fuzz.FuzzCampaign;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A short fuzzing campaign of a fixed seed for Tracked commits' metadata ({@link TrackedCommitFormatFuzzTarget}). */
class TrackedCommitFormatFuzzTest {
    private static final long SEED = 20_261_205L;

    @Test
    @Timeout(120)
    void anyMetadataDecodesOrIsIgnored() throws Exception {
        FuzzCampaign.check(new TrackedCommitFormatFuzzTarget(), SEED, 8_000);
    }
}
