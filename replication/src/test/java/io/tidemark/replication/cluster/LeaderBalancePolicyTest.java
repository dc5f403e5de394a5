package io.tidemark.replication.cluster;

import io.tidemark.replication.cluster.LeaderBalancePolicy.Hold;
import io.tidemark.replication.cluster.LeaderBalancePolicy.Led;
import io.tidemark.replication.cluster.LeaderBalancePolicy.Reason;
import io.tidemark.replication.raft.RaftFollower;
import io.tidemark.replication.cluster.LeaderBalancePolicy.Transfer;
import io.tidemark.replication.partition.LeaderView;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Node 1 decides, with a 5 s interval, at most 2 transfers per interval, followers silent over 2 s down. */
class LeaderBalancePolicyTest {
    private static final long COMMIT = 100;
    private final LeaderBalancePolicy policy = new LeaderBalancePolicy(1, 5000, 2, 2000, 2);

    /** Every broker reaches every other. */
    private static final LeaderBalancePolicy.Reachability ALL_UP = (from, to) -> true;

    /** A group of nodes 1, 2 and 3 whose preferred replica is {@code preferred}. */
    private static List<Integer> replicas(int preferred) {
        List<Integer> replicas = new ArrayList<>(List.of(preferred));
        List.of(1, 2, 3).stream().filter(n -> n != preferred).forEach(replicas::add);
        return replicas;
    }

    /** Group {@code n} of a test: the ids sort by {@code n}. */
    private static UUID g(int n) {
        return new UUID(0, n);
    }

    /** Led by node 1 since {@code sinceMs}; the preferred replica holds {@code match} and answered 100 ms ago. */
    private static Led led(UUID group, int preferred, long sinceMs, long match) {
        return led(group, preferred, sinceMs, Map.of(preferred, new RaftFollower(match, 100)));
    }

    private static Led led(UUID group, int preferred, long sinceMs,
                           Map<Integer, RaftFollower> followers) {
        return new Led(group, replicas(preferred), new LeaderView(7, COMMIT, followers), sinceMs);
    }

    /**
     * Groups g0-g5, one of each kind, then {@code more}: g0 at home; g1 qualifies; g2 led 4.999 s at 10 s; g3's
     * replica 3 entries behind; g4's silent 2001 ms; g5's not a follower.
     */
    private static List<Led> withSixKinds(Led... more) {
        List<Led> led = new ArrayList<>(List.of(
                led(g(0), 1, 0, COMMIT),
                led(g(1), 2, 0, COMMIT),
                led(g(2), 3, 5001, COMMIT),
                led(g(3), 2, 0, COMMIT - 3),
                led(g(4), 3, 0, Map.of(3, new RaftFollower(COMMIT, 2001))),
                led(g(5), 3, 0, Map.of(2, new RaftFollower(COMMIT, 100)))));
        led.addAll(List.of(more));
        return List.copyOf(led);
    }

    @Test
    void handsBackOnlyPartitionsLedForAnIntervalWhosePreferredReplicaIsUpAndCaughtUp() {
        List<Led> led = withSixKinds(led(g(6), 3, 5000, COMMIT + 5),
                led(g(7), 2, 0, Map.of(2, new RaftFollower(COMMIT, 2000))));

        assertEquals(List.of(new Transfer(g(1), 2), new Transfer(g(7), 2)),
                policy.plan(10_000, led, List.of(), ALL_UP), "g0 is home; g2 led 4.999 s; g3 lags three entries (2 "
                        + "allowed); g4's replica silent 2001 ms; g5's replica unknown; of g1, g6 and g7 the limit keeps the "
                        + "two led longest");
        List<Led> reversed = new ArrayList<>(led);
        Collections.reverse(reversed);
        assertEquals(List.of(new Transfer(g(1), 2), new Transfer(g(7), 2)),
                policy.plan(10_000, reversed, List.of(), ALL_UP), "the input order does not matter");
        assertEquals(List.of(new Transfer(g(6), 3)),
                policy.plan(10_000, List.of(led.get(6)), List.of(), ALL_UP), "led exactly one interval qualifies");
    }

    @Test
    void aReplicaKeepingPaceBehindTheOtherFollowerQualifies() {
        assertEquals(List.of(new Transfer(g(1), 2)), policy.plan(10_000, List.of(led(g(1), 2, 0, COMMIT - 2)),
                List.of(), ALL_UP), "two entries behind the commit index: what the leader has in flight");
        assertEquals(List.of(), new LeaderBalancePolicy(1, 5000, 2, 2000, 0).plan(10_000,
                List.of(led(g(1), 2, 0, COMMIT - 1)), List.of(), ALL_UP), "no lag allowed");
    }

    @Test
    void atMostTheLimitStartsInAnyWindowOfOneInterval() {
        List<Led> led = List.of(led(g(10), 2, 3000, COMMIT), led(g(11), 3, 2000, COMMIT),
                led(g(12), 2, 1000, COMMIT), led(g(13), 3, 0, COMMIT));

        assertEquals(List.of(new Transfer(g(13), 3), new Transfer(g(12), 2)),
                policy.plan(10_000, led, List.of(), ALL_UP), "two, led longest first");
        assertEquals(List.of(new Transfer(g(13), 3)),
                policy.plan(10_000, led, List.of(1000L, 6000L), ALL_UP), "one started 4 s ago leaves one");
        assertEquals(List.of(), policy.plan(10_000, led, List.of(9000L, 9999L), ALL_UP), "two started in the window");
        assertEquals(List.of(new Transfer(g(13), 3), new Transfer(g(12), 2)),
                policy.plan(10_000, led, List.of(5000L, 5000L), ALL_UP),
                "those started exactly an interval ago are out");
    }

    @Test
    void tiesGoByTopicThenPartition() {
        List<Led> led = List.of(led(g(11), 2, 0, COMMIT), led(g(2), 2, 0, COMMIT),
                led(g(10), 3, 0, COMMIT));
        assertEquals(List.of(new Transfer(g(2), 2), new Transfer(g(10), 3)),
                policy.plan(5000, led, List.of(), ALL_UP));
    }

    @Test
    void countsPartitionsLedAwayFromTheirPreferredReplica() {
        assertEquals(2, policy.ledAway(List.of(led(g(0), 1, 0, COMMIT), led(g(1), 2, 9000, 0),
                led(g(2), 3, 0, COMMIT))));
        assertEquals(0, policy.ledAway(List.of()));
    }

    @Test
    void limitsMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new LeaderBalancePolicy(1, 0, 2, 2000, 2));
        assertThrows(IllegalArgumentException.class, () -> new LeaderBalancePolicy(1, 5000, 0, 2000, 2));
        assertThrows(IllegalArgumentException.class, () -> new LeaderBalancePolicy(1, 5000, 2, 0, 2));
        assertThrows(IllegalArgumentException.class, () -> new LeaderBalancePolicy(1, 5000, 2, 2000, -1));
    }

    @Test
    void aPreferredReplicaThatCannotReachWhatTheLeaderReachesIsNotMadeLeader() {
        Led led = led(g(1), 2, 0, COMMIT);
        Set<String> cut = new HashSet<>(Set.of("2->1", "2->3"));
        LeaderBalancePolicy.Reachability reach = (from, to) -> !cut.contains(from + "->" + to);
        assertEquals(List.of(), policy.plan(10_000, List.of(led), List.of(), reach),
                "node 2 answers node 1 but reaches neither node 1 nor node 3 itself");
        cut.remove("2->1");
        assertEquals(List.of(), policy.plan(10_000, List.of(led), List.of(), reach), "nor node 3");
        cut.add("1->3");
        assertEquals(List.of(new Transfer(g(1), 2)), policy.plan(10_000, List.of(led), List.of(), reach),
                "node 3 is down for node 1 too: node 2 reaches all that node 1 reaches");
    }

    @Test
    void saysWhyEachGroupLedAwayStays() {
        List<Led> led = withSixKinds(led(g(6), 3, 0, COMMIT));
        LeaderBalancePolicy.Reachability reach = (from, to) -> !(from == 3 && to == 1);

        assertEquals(List.of(
                new Hold(g(3), 2, Reason.PREFERRED_BEHIND, "holds Raft index 97 of 100 committed, 2 may lack"),
                new Hold(g(4), 3, Reason.PREFERRED_SILENT, "last answered 2001 ms ago, over 2000"),
                new Hold(g(5), 3, Reason.PREFERRED_SILENT, "not a follower of this leader"),
                new Hold(g(6), 3, Reason.PREFERRED_CUT_OFF, "has not heard from node 1 recently"),
                new Hold(g(2), 3, Reason.LED_RECENTLY, "led here for 4999 ms of 5000")),
                policy.holds(10_000, led, reach), "g0 is home and g1 qualifies; longest led first");
    }
}
