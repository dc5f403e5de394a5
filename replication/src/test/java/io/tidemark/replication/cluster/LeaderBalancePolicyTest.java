package io.tidemark.replication.cluster;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.replication.cluster.LeaderBalancePolicy.Led;
import io.tidemark.replication.cluster.LeaderBalancePolicy.Transfer;
import io.tidemark.replication.partition.LeaderView;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Node 1 decides, with a 5 s interval, at most 2 transfers per interval, followers silent over 2 s down. */
class LeaderBalancePolicyTest {
    private static final long COMMIT = 100;
    private final LeaderBalancePolicy policy = new LeaderBalancePolicy(1, 5000, 2, 2000);

    private static TopicPartition p(String topic, int partition) {
        return new TopicPartition(topic, partition);
    }

    /** Led by node 1 since {@code sinceMs}; the preferred replica holds {@code match} and answered 100 ms ago. */
    private static Led led(TopicPartition partition, int preferred, long sinceMs, long match) {
        return led(partition, preferred, sinceMs, Map.of(preferred, new LeaderView.Follower(match, 100)));
    }

    private static Led led(TopicPartition partition, int preferred, long sinceMs,
                           Map<Integer, LeaderView.Follower> followers) {
        return new Led(partition, preferred, new LeaderView(7, COMMIT, followers), sinceMs);
    }

    @Test
    void handsBackOnlyPartitionsLedForAnIntervalWhosePreferredReplicaIsUpAndCaughtUp() {
        List<Led> led = List.of(
                led(p("a", 0), 1, 0, COMMIT),
                led(p("a", 1), 2, 0, COMMIT),
                led(p("a", 2), 3, 5001, COMMIT),
                led(p("a", 3), 2, 0, COMMIT - 1),
                led(p("a", 4), 3, 0, Map.of(3, new LeaderView.Follower(COMMIT, 2001))),
                led(p("a", 5), 3, 0, Map.of(2, new LeaderView.Follower(COMMIT, 100))),
                led(p("a", 6), 3, 5000, COMMIT + 5),
                led(p("a", 7), 2, 0, Map.of(2, new LeaderView.Follower(COMMIT, 2000))));

        assertEquals(List.of(new Transfer(p("a", 1), 2), new Transfer(p("a", 7), 2)),
                policy.plan(10_000, led, List.of()), "a-0 is home; a-2 led 4.999 s; a-3 lags one entry; a-4's "
                        + "replica silent 2001 ms; a-5's replica unknown; of a-1, a-6 and a-7 the limit keeps the "
                        + "two led longest");
        List<Led> reversed = new ArrayList<>(led);
        Collections.reverse(reversed);
        assertEquals(List.of(new Transfer(p("a", 1), 2), new Transfer(p("a", 7), 2)),
                policy.plan(10_000, reversed, List.of()), "the input order does not matter");
        assertEquals(List.of(new Transfer(p("a", 6), 3)),
                policy.plan(10_000, List.of(led.get(6)), List.of()), "led exactly one interval qualifies");
    }

    @Test
    void atMostTheLimitStartsInAnyWindowOfOneInterval() {
        List<Led> led = List.of(led(p("b", 0), 2, 3000, COMMIT), led(p("b", 1), 3, 2000, COMMIT),
                led(p("b", 2), 2, 1000, COMMIT), led(p("b", 3), 3, 0, COMMIT));

        assertEquals(List.of(new Transfer(p("b", 3), 3), new Transfer(p("b", 2), 2)),
                policy.plan(10_000, led, List.of()), "two, led longest first");
        assertEquals(List.of(new Transfer(p("b", 3), 3)),
                policy.plan(10_000, led, List.of(1000L, 6000L)), "one started 4 s ago leaves one");
        assertEquals(List.of(), policy.plan(10_000, led, List.of(9000L, 9999L)), "two started in the window");
        assertEquals(List.of(new Transfer(p("b", 3), 3), new Transfer(p("b", 2), 2)),
                policy.plan(10_000, led, List.of(5000L, 5000L)), "those started exactly an interval ago are out");
    }

    @Test
    void tiesGoByTopicThenPartition() {
        List<Led> led = List.of(led(p("b", 1), 2, 0, COMMIT), led(p("a", 2), 2, 0, COMMIT),
                led(p("a", 10), 3, 0, COMMIT));
        assertEquals(List.of(new Transfer(p("a", 2), 2), new Transfer(p("a", 10), 3)),
                policy.plan(5000, led, List.of()));
    }

    @Test
    void countsPartitionsLedAwayFromTheirPreferredReplica() {
        assertEquals(2, policy.ledAway(List.of(led(p("a", 0), 1, 0, COMMIT), led(p("a", 1), 2, 9000, 0),
                led(p("a", 2), 3, 0, COMMIT))));
        assertEquals(0, policy.ledAway(List.of()));
    }

    @Test
    void limitsMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new LeaderBalancePolicy(1, 0, 2, 2000));
        assertThrows(IllegalArgumentException.class, () -> new LeaderBalancePolicy(1, 5000, 0, 2000));
        assertThrows(IllegalArgumentException.class, () -> new LeaderBalancePolicy(1, 5000, 2, 0));
    }
}
