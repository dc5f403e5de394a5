package io.tidemark.replication.cluster;

import io.tidemark.core.partition.PartitionLeader;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProbeResultsTest {
    private static final UUID P = new UUID(7, 1);
    private static final UUID OTHER = new UUID(7, 2);
    private final ProbeResults results = new ProbeResults(3000);

    @Test
    void aBrokerIsUpUntilItsLastAnswerIsOlderThanTheSilenceAllowed() {
        assertFalse(results.up(2, 0), "never answered");
        results.answered(2, 1000, Map.of(), Map.of());
        assertTrue(results.up(2, 4000));
        assertFalse(results.up(2, 4001));
        results.answered(2, 5000, Map.of(), Map.of());
        assertTrue(results.up(2, 5001));
        assertFalse(results.up(3, 5001));
    }

    @Test
    void theLeaderIsTheUpBrokerClaimingTheHighestTerm() {
        assertEquals(PartitionLeader.NONE, results.leaderOf(P, 0));
        results.answered(2, 1000, Map.of(P, 5L), Map.of());
        results.answered(3, 2000, Map.of(P, 6L, OTHER, 6L), Map.of());
        assertEquals(new PartitionLeader(3, 6), results.leaderOf(P, 2000),
                "node 2 has not heard yet that node 3 won term 6");
        results.answered(2, 3500, Map.of(P, 5L), Map.of());
        assertEquals(new PartitionLeader(2, 5), results.leaderOf(P, 5001),
                "node 3 is down, so its claim no longer counts");
        results.answered(2, 6000, Map.of(), Map.of());
        assertEquals(PartitionLeader.NONE, results.leaderOf(P, 6000));
        assertEquals(PartitionLeader.NONE, results.leaderOf(OTHER, 6000));
    }

    @Test
    void equalTermsGoToTheLowestNodeId() {
        results.answered(3, 0, Map.of(P, 4L), Map.of());
        results.answered(2, 0, Map.of(P, 4L), Map.of());
        assertEquals(new PartitionLeader(2, 4), results.leaderOf(P, 0));
    }

    @Test
    void whenABrokerLastHeardFromAnotherIsItsAnswerAgedByTheTimeSince() {
        results.answered(2, 1000, Map.of(), Map.of(3, 700L));
        assertEquals(700, results.answeredMsAgo(2, 3, 1000));
        assertEquals(3700, results.answeredMsAgo(2, 3, 4000), "3 s after its answer");
        assertEquals(Long.MAX_VALUE, results.answeredMsAgo(2, 1, 4000), "node 2 never heard from node 1");
        assertEquals(Long.MAX_VALUE, results.answeredMsAgo(3, 2, 0), "node 3 never answered");
        assertEquals(3000, results.answeredMsAgo(2, 4000));
        assertEquals(Long.MAX_VALUE, results.answeredMsAgo(3, 4000));
    }
}
