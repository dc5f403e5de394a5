package io.tidemark.proto.record;

import io.tidemark.proto.fuzz.FuzzCampaign;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A short fuzzing campaign of a fixed seed for each decoder of record batches ({@link FuzzCampaign}; the long campaign
 * is the bench module's {@code FuzzRun}, docs/benchmarks.md, "Fuzzing"). A finding fails with the seed, the input's
 * index and its bytes; {@code FuzzCampaign.input(target, seed, index)} makes that input again. The timeout only catches
 * a decoder that never returns.
 */
class RecordBatchFuzzTest {
    static final long SEED = 20_261_205L;

    @Test
    @Timeout(120)
    void validator() throws Exception {
        FuzzCampaign.check(new RecordBatchValidatorFuzzTarget(), SEED, 15_000);
    }

    @Test
    @Timeout(120)
    void transactionMarker() throws Exception {
        FuzzCampaign.check(new TransactionMarkerFuzzTarget(), SEED, 8_000);
    }

    @Test
    @Timeout(120)
    void provenance() throws Exception {
        FuzzCampaign.check(new ProvenanceFuzzTarget(), SEED, 8_000);
    }

    @Test
    @Timeout(120)
    void readerOfUncheckedBytes() throws Exception {
        FuzzCampaign.check(new RecordBatchReaderFuzzTarget(), SEED, 8_000);
    }
}
