package io.tidemark.core.group;

import io.tidemark.core.topic.InternalTopicWritesFuzzTarget;
import io.tidemark.core.txn.TransactionStateFormatFuzzTarget;
import io.tidemark.proto.fuzz.FuzzCampaign;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A short fuzzing campaign of a fixed seed for the readers of the internal topics' records: the offset commits, group
 * states and transaction states the coordinators replay from {@code __group_offsets}, and a client's batch for
 * {@code __mirror_state} ({@link FuzzCampaign}). A finding fails with the seed, the input's index and its bytes.
 */
class InternalRecordsFuzzTest {
    private static final long SEED = 20_261_205L;

    @Test
    @Timeout(120)
    void offsetCommits() throws Exception {
        FuzzCampaign.check(new OffsetCommitFormatFuzzTarget(), SEED, 6_000);
    }

    @Test
    @Timeout(120)
    void groupStates() throws Exception {
        FuzzCampaign.check(new GroupStateFormatFuzzTarget(), SEED, 6_000);
    }

    @Test
    @Timeout(120)
    void transactionStates() throws Exception {
        FuzzCampaign.check(new TransactionStateFormatFuzzTarget(), SEED, 6_000);
    }

    @Test
    @Timeout(120)
    void mirrorStateProduce() throws Exception {
        FuzzCampaign.check(new InternalTopicWritesFuzzTarget(), SEED, 4_000);
    }
}
