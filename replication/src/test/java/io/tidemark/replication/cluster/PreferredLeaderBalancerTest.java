package io.tidemark.replication.cluster;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.cluster.PreferredLeaderBalancer.Leading;
import io.tidemark.replication.partition.LeaderView;
import io.tidemark.replication.raft.RaftFollower;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The balancer's passes over a scripted broker: node 1, 5 s interval, a clock the test sets. */
class PreferredLeaderBalancerTest {
    private static final UUID G0 = new UUID(0, 0);
    private static final UUID G1 = new UUID(0, 1);

    private final AtomicLong nowMs = new AtomicLong();
    private final InstantSource clock = () -> Instant.ofEpochMilli(nowMs.get());
    private final MetricRegistry registry = new MetricRegistry();
    private final List<Leading> leading = new ArrayList<>();
    private final List<String> moves = new ArrayList<>();
    private final Set<UUID> refusing = new HashSet<>();
    private final PreferredLeaderBalancer.GroupLeadership leadership = new PreferredLeaderBalancer.GroupLeadership() {
        @Override
        public void move(UUID group, int toNodeId, long timeoutMs) {
            moves.add((group.equals(G0) ? "g0" : "g1") + "->" + toNodeId + " at " + nowMs.get());
            if (refusing.contains(group)) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "refused");
            }
        }

        @Override
        public void equalizePriorities(UUID group, List<Integer> replicas) {
            moves.add((group.equals(G0) ? "g0" : "g1") + " priorities equal " + replicas + " at " + nowMs.get());
        }
    };
    private PreferredLeaderBalancer balancer;

    private PreferredLeaderBalancer balancer(boolean enabled, int maxTransfers) {
        balancer = new PreferredLeaderBalancer(1, new BrokerConfig.LeaderBalance(enabled, 5000, maxTransfers), 2000,
                () -> List.copyOf(leading), (from, to) -> true, leadership, clock, registry);
        return balancer;
    }

    @AfterEach
    void close() {
        balancer.close();
    }

    /** Node 1 leads the group in {@code term}; its preferred replica is up and caught up. */
    private static Leading caughtUp(UUID group, int preferred, long term) {
        return new Leading(group, List.of(preferred, 1), new LeaderView(term, 50,
                Map.of(preferred, new RaftFollower(50, 100))), true);
    }

    private void passAt(long ms) {
        nowMs.set(ms);
        balancer.runPass();
    }

    private long transfers() {
        return registry.counter("leader-balance.transfers").getCount();
    }

    private Object ledAway() {
        return registry.getGauges().get("leader-balance.groups-led-away").getValue();
    }

    @Test
    void movesAGroupBackOnceLedForAnInterval() {
        balancer(true, 2);
        leading.add(caughtUp(G0, 2, 3));
        passAt(1000);
        passAt(5999);
        assertEquals(List.of(), moves, "led for 4.999 s since the first pass saw it");
        assertEquals(1, ledAway());
        passAt(6000);
        assertEquals(List.of("g0->2 at 6000"), moves);
        assertEquals(1, transfers());
        leading.clear();
        passAt(11_000);
        assertEquals(0, ledAway());
        assertEquals(1, moves.size());
    }

    @Test
    void aNewTermStartsTheWaitAgain() {
        balancer(true, 2);
        leading.add(caughtUp(G0, 2, 3));
        passAt(0);
        leading.set(0, caughtUp(G0, 2, 4));
        passAt(5000);
        assertEquals(List.of(), moves, "re-elected in term 4 at most 0 s ago as far as this broker saw");
        passAt(10_000);
        assertEquals(List.of("g0->2 at 10000"), moves);
    }

    @Test
    void aFailedTransferCountsAgainstTheLimitAndWaitsBehindTheOthers() {
        balancer(true, 1);
        leading.add(caughtUp(G0, 2, 3));
        leading.add(caughtUp(G1, 3, 3));
        refusing.add(G0);
        passAt(0);
        passAt(5000);
        passAt(9999);
        assertEquals(List.of("g0->2 at 5000"), moves, "one per 5 s window, and the failure used it");
        assertEquals(0, transfers());
        passAt(10_000);
        assertEquals(List.of("g0->2 at 5000", "g1->3 at 10000"), moves, "g0 waits again from its failure");
        assertEquals(1, transfers());
        refusing.clear();
        leading.remove(1);
        passAt(15_000);
        assertEquals(List.of("g0->2 at 5000", "g1->3 at 10000", "g0->2 at 15000"), moves);
        assertEquals(2, transfers());
    }

    @Test
    void disabledOnlyCounts() {
        balancer(false, 2);
        leading.add(caughtUp(G0, 2, 3));
        leading.add(caughtUp(G1, 1, 3));
        passAt(0);
        passAt(60_000);
        assertEquals(List.of(), moves);
        assertEquals(1, ledAway());
    }

    @Test
    void gaugesCountTheGroupsHeldByReason() {
        balancer(false, 2);
        leading.add(caughtUp(G0, 2, 3));
        leading.add(new Leading(G1, List.of(3, 1), new LeaderView(3, 50, Map.of(3, new RaftFollower(47, 100))),
                true));
        passAt(0);
        assertEquals(2L, held("led-recently"));
        passAt(5000);
        assertEquals(0L, held("led-recently"));
        assertEquals(1L, held("preferred-behind"), "g1's replica lacks 3 entries");
        assertEquals(0L, held("preferred-silent"));
        assertEquals(0L, held("preferred-cut-off"));
    }

    private Object held(String reason) {
        return registry.getGauges().get("leader-balance.held." + reason).getValue();
    }

    /**
     * A group whose configuration prefers a replica (a move of an older broker raised its priority and died before it
     * set it back) gets equal priorities at the next pass of its leader's balancer, whatever else the pass decides.
     */
    @Test
    void aGroupPreferringAReplicaGetsEqualPrioritiesAtTheNextPass() {
        balancer(false, 2);
        Leading preferring = caughtUp(G1, 2, 3);
        leading.add(new Leading(preferring.group(), preferring.replicas(), preferring.view(), false));
        leading.add(caughtUp(G0, 2, 3));
        passAt(5_000);
        assertEquals(List.of("g1 priorities equal [2, 1] at 5000"), moves, "the balancer moves nothing (disabled)");
    }
}
