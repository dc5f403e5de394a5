package io.tidemark.replication.cluster;

import io.tidemark.proto.error.TidemarkException;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;
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
        results.answered(2, 1000, Map.of(), Set.of());
        assertTrue(results.up(2, 4000));
        assertFalse(results.up(2, 4001));
        results.answered(2, 5000, Map.of(), Set.of());
        assertTrue(results.up(2, 5001));
        assertFalse(results.up(3, 5001));
    }

    @Test
    void theLeaderIsTheUpBrokerClaimingTheHighestTerm() {
        assertEquals(TidemarkException.NO_LEADER, results.leaderOf(P, 0));
        results.answered(2, 1000, Map.of(P, 5L), Set.of());
        results.answered(3, 2000, Map.of(P, 6L, OTHER, 6L), Set.of());
        assertEquals(3, results.leaderOf(P, 2000), "node 2 has not heard yet that node 3 won term 6");
        results.answered(2, 3500, Map.of(P, 5L), Set.of());
        assertEquals(2, results.leaderOf(P, 5001), "node 3 is down, so its claim no longer counts");
        results.answered(2, 6000, Map.of(), Set.of());
        assertEquals(TidemarkException.NO_LEADER, results.leaderOf(P, 6000));
        assertEquals(TidemarkException.NO_LEADER, results.leaderOf(OTHER, 6000));
    }

    @Test
    void equalTermsGoToTheLowestNodeId() {
        results.answered(3, 0, Map.of(P, 4L), Set.of());
        results.answered(2, 0, Map.of(P, 4L), Set.of());
        assertEquals(2, results.leaderOf(P, 0));
    }

    @Test
    void whatABrokerReachesIsWhatItsLastAnswerSaidWhileItIsUp() {
        results.answered(2, 1000, Map.of(), Set.of(3));
        assertTrue(results.seesUp(2, 3, 4000));
        assertFalse(results.seesUp(2, 1, 4000), "node 2 did not find node 1 up");
        assertFalse(results.seesUp(2, 3, 4001), "node 2 is down itself: what it said no longer counts");
        assertFalse(results.seesUp(3, 2, 0), "node 3 never answered");
    }
}
