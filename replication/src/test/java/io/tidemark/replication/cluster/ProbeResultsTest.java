package io.tidemark.replication.cluster;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProbeResultsTest {
    private static final TopicPartition P = new TopicPartition("t", 0);
    private final ProbeResults results = new ProbeResults(3000);

    @Test
    void aBrokerIsUpUntilItsLastAnswerIsOlderThanTheSilenceAllowed() {
        assertFalse(results.up(2, 0), "never answered");
        results.answered(2, 1000, Map.of());
        assertTrue(results.up(2, 4000));
        assertFalse(results.up(2, 4001));
        results.answered(2, 5000, Map.of());
        assertTrue(results.up(2, 5001));
        assertFalse(results.up(3, 5001));
    }

    @Test
    void theLeaderIsTheUpBrokerClaimingTheHighestTerm() {
        assertEquals(TidemarkException.NO_LEADER, results.leaderOf(P, 0));
        results.answered(2, 1000, Map.of(P, 5L));
        results.answered(3, 2000, Map.of(P, 6L, new TopicPartition("t", 1), 6L));
        assertEquals(3, results.leaderOf(P, 2000), "node 2 has not heard yet that node 3 won term 6");
        results.answered(2, 3500, Map.of(P, 5L));
        assertEquals(2, results.leaderOf(P, 5001), "node 3 is down, so its claim no longer counts");
        results.answered(2, 6000, Map.of());
        assertEquals(TidemarkException.NO_LEADER, results.leaderOf(P, 6000));
        assertEquals(TidemarkException.NO_LEADER, results.leaderOf(new TopicPartition("t", 1), 6000));
    }

    @Test
    void equalTermsGoToTheLowestNodeId() {
        results.answered(3, 0, Map.of(P, 4L));
        results.answered(2, 0, Map.of(P, 4L));
        assertEquals(2, results.leaderOf(P, 0));
    }
}
