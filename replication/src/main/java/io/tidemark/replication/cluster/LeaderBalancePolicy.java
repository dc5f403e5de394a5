package io.tidemark.replication.cluster;

import io.tidemark.core.partition.TopicPartition;
import io.tidemark.replication.partition.LeaderView;

import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Which partitions a broker hands back to their preferred replica in one balance pass. A pure function of what
 * the broker sees (no clock, no I/O), so tests give exact inputs and expect exact transfers.
 *
 * <p>A partition this broker leads qualifies when all of these hold:
 * <ul>
 *   <li>its preferred replica (the first of its assignment) is another broker;</li>
 *   <li>this broker has led it, in the current term, for at least {@code intervalMs}: a partition is not moved
 *       right after an election or a transfer, so leadership does not bounce between brokers;</li>
 *   <li>the preferred replica answered the leader within {@code followerSilenceMsMax} (it is up) and holds every
 *       committed entry (match index at least the commit index), so the transfer completes at once instead of
 *       holding produce up while the replica catches up.</li>
 * </ul>
 * At most {@code maxTransfersPerInterval} transfers start in any window of {@code intervalMs}: those started
 * less than {@code intervalMs} ago use up the allowance. Partitions led longest go first, then by topic and
 * partition, so the outcome does not depend on the order of the input.
 *
 * <p>Immutable, thread-safe.
 */
final class LeaderBalancePolicy {
    /** A partition this broker leads, as its Raft group looks now, and since when this broker leads it. */
    record Led(TopicPartition partition, int preferredNodeId, LeaderView view, long leaderSinceMs) {
    }

    /** Move the partition's leadership to the given node. */
    record Transfer(TopicPartition partition, int toNodeId) {
    }

    private static final Comparator<Led> LONGEST_LED_FIRST = Comparator.comparingLong(Led::leaderSinceMs)
            .thenComparing(l -> l.partition().topic()).thenComparingInt(l -> l.partition().partition());

    private final int nodeId;
    private final long intervalMs;
    private final int maxTransfersPerInterval;
    private final long followerSilenceMsMax;

    LeaderBalancePolicy(int nodeId, long intervalMs, int maxTransfersPerInterval, long followerSilenceMsMax) {
        if (intervalMs < 1 || maxTransfersPerInterval < 1 || followerSilenceMsMax < 1) {
            throw new IllegalArgumentException("interval " + intervalMs + " ms, limit " + maxTransfersPerInterval
                    + ", follower silence " + followerSilenceMsMax + " ms: all must be positive");
        }
        this.nodeId = nodeId;
        this.intervalMs = intervalMs;
        this.maxTransfersPerInterval = maxTransfersPerInterval;
        this.followerSilenceMsMax = followerSilenceMsMax;
    }

    /**
     * The transfers to start now.
     *
     * @param led              the partitions this broker leads
     * @param transferStartsMs when this broker started its earlier transfers (older ones may be included)
     */
    List<Transfer> plan(long nowMs, List<Led> led, List<Long> transferStartsMs) {
        long recent = transferStartsMs.stream().filter(t -> nowMs - t < intervalMs).count();
        long allowed = Math.max(0, maxTransfersPerInterval - recent);
        return led.stream().filter(l -> qualifies(nowMs, l)).sorted(LONGEST_LED_FIRST).limit(allowed)
                .map(l -> new Transfer(l.partition(), l.preferredNodeId())).toList();
    }

    /** How many of the partitions this broker leads have their preferred replica on another broker. */
    int ledAway(List<Led> led) {
        return (int) led.stream().filter(l -> l.preferredNodeId() != nodeId).count();
    }

    private boolean qualifies(long nowMs, Led led) {
        if (led.preferredNodeId() == nodeId || nowMs - led.leaderSinceMs() < intervalMs) {
            return false;
        }
        Map<Integer, LeaderView.Follower> followers = led.view().followers();
        LeaderView.Follower preferred = followers.get(led.preferredNodeId());
        return preferred != null && preferred.lastResponseAgoMs() <= followerSilenceMsMax
                && preferred.matchIndex() >= led.view().commitIndex();
    }
}
