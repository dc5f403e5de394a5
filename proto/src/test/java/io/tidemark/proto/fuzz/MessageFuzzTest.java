package io.tidemark.proto.fuzz;

import io.tidemark.proto.mirror.MirrorStateFuzzTarget;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A short fuzzing campaign of a fixed seed for the protobuf the broker parses from clients: the API's request messages
 * and the records of {@code __mirror_state} ({@link FuzzCampaign}).
 */
class MessageFuzzTest {
    private static final long SEED = 20_261_205L;

    @Test
    @Timeout(120)
    void requestMessages() throws Exception {
        FuzzCampaign.check(new RequestMessagesFuzzTarget(), SEED, 4_000);
    }

    @Test
    @Timeout(120)
    void mirrorStateRecords() throws Exception {
        FuzzCampaign.check(new MirrorStateFuzzTarget(), SEED, 4_000);
    }
}
