package io.tidemark.replication.cluster;

import io.tidemark.replication.partition.LeaderView;
import io.tidemark.replication.raft.RaftFollower;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Which partition groups a broker hands back to their preferred replica in one balance pass (leadership is held per
 * group: all the partitions of a group move with it). A pure function of what
 * the broker sees (no clock, no I/O), so tests give exact inputs and expect exact transfers.
 *
 * <p>A group this broker leads qualifies when all of these hold:
 * <ul>
 *   <li>its preferred replica (the first of its replica list) is another broker;</li>
 *   <li>this broker has led it, in the current term, for at least {@code intervalMs}: a group is not moved
 *       right after an election or a transfer, so leadership does not bounce between brokers;</li>
 *   <li>the preferred replica answered the leader within {@code followerSilenceMsMax} (it is up) and keeps pace:
 *       it lacks at most {@code matchLagMax} committed entries (the leader's view of its match index against the
 *       commit index), what a leader has in flight at once, which the other follower may have acknowledged first.
 *       Ratis holds produce up until the transferee has every entry, so a replica still catching up would stall
 *       the group; but requiring none missing made a replica that is always the second to answer, as a restarted
 *       one with a cold JIT is under steady load, wait for minutes;</li>
 *   <li>the preferred replica reaches every replica of the group that this broker reaches, this broker included
 *       ({@link Reachability}: what each broker's own probes heard recently). A replica that answers its leader may
 *       still be cut off from the others in the other direction; made leader, it could not reach a majority, and
 *       its elections would keep the group without a leader.</li>
 * </ul>
 * At most {@code maxTransfersPerInterval} transfers start in any window of {@code intervalMs}: those started
 * less than {@code intervalMs} ago use up the allowance. Groups led longest go first, then by id, so the outcome
 * does not depend on the order of the input.
 *
 * <p>Immutable, thread-safe.
 */
final class LeaderBalancePolicy {
    /**
     * A partition group this broker leads, as it looks now, and since when this broker leads it.
     *
     * @param replicas the group's replicas, the preferred one first
     */
    record Led(UUID group, List<Integer> replicas, LeaderView view, long leaderSinceMs) {
        int preferredNodeId() {
            return replicas.get(0);
        }
    }

    /** Whether a broker's own probes heard from another recently: a broker always reaches itself. */
    @FunctionalInterface
    interface Reachability {
        boolean reaches(int from, int to);
    }

    /** Move the group's leadership to the given node. */
    record Transfer(UUID group, int toNodeId) {
    }

    /** Why a group led away from its preferred replica stays with this broker for now. */
    enum Reason {
        /** This broker has led it, in the current term, for less than an interval. */
        LED_RECENTLY,
        /** The preferred replica is not among the leader's followers, or has not answered it for too long. */
        PREFERRED_SILENT,
        /** The preferred replica lacks more committed entries than a leader has in flight. */
        PREFERRED_BEHIND,
        /** The preferred replica does not reach every replica this broker reaches. */
        PREFERRED_CUT_OFF
    }

    /** A group led away that does not move now, why, and the figures behind it (for a log line). */
    record Hold(UUID group, int preferredNodeId, Reason reason, String detail) {
    }

    private static final Comparator<Led> LONGEST_LED_FIRST = Comparator.comparingLong(Led::leaderSinceMs)
            .thenComparing(Led::group);

    private final int nodeId;
    private final long intervalMs;
    private final int maxTransfersPerInterval;
    private final long followerSilenceMsMax;
    private final long matchLagMax;

    LeaderBalancePolicy(int nodeId, long intervalMs, int maxTransfersPerInterval, long followerSilenceMsMax,
                        long matchLagMax) {
        if (intervalMs < 1 || maxTransfersPerInterval < 1 || followerSilenceMsMax < 1 || matchLagMax < 0) {
            throw new IllegalArgumentException("interval " + intervalMs + " ms, limit " + maxTransfersPerInterval
                    + ", follower silence " + followerSilenceMsMax + " ms: all must be positive; match lag "
                    + matchLagMax + " entries: must not be negative");
        }
        this.nodeId = nodeId;
        this.intervalMs = intervalMs;
        this.maxTransfersPerInterval = maxTransfersPerInterval;
        this.followerSilenceMsMax = followerSilenceMsMax;
        this.matchLagMax = matchLagMax;
    }

    /**
     * The transfers to start now.
     *
     * @param led              the groups this broker leads
     * @param transferStartsMs when this broker started its earlier transfers (older ones may be included)
     * @param reachability     which brokers each broker finds up
     */
    List<Transfer> plan(long nowMs, List<Led> led, List<Long> transferStartsMs, Reachability reachability) {
        long recent = transferStartsMs.stream().filter(t -> nowMs - t < intervalMs).count();
        long allowed = Math.max(0, maxTransfersPerInterval - recent);
        return led.stream().filter(l -> qualifies(nowMs, l, reachability)).sorted(LONGEST_LED_FIRST).limit(allowed)
                .map(l -> new Transfer(l.group(), l.preferredNodeId())).toList();
    }

    /** How many of the groups this broker leads have their preferred replica on another broker. */
    int ledAway(List<Led> led) {
        return (int) led.stream().filter(l -> l.preferredNodeId() != nodeId).count();
    }

    /** The groups led away from their preferred replica that do not qualify now, each with why. */
    List<Hold> holds(long nowMs, List<Led> led, Reachability reachability) {
        return led.stream().filter(l -> l.preferredNodeId() != nodeId).sorted(LONGEST_LED_FIRST)
                .flatMap(l -> hold(nowMs, l, reachability).stream()).toList();
    }

    private boolean qualifies(long nowMs, Led led, Reachability reachability) {
        return led.preferredNodeId() != nodeId && hold(nowMs, led, reachability).isEmpty();
    }

    /** Why a group led away does not qualify, the first failed condition; empty when it qualifies. */
    private Optional<Hold> hold(long nowMs, Led led, Reachability reachability) {
        int target = led.preferredNodeId();
        long ledMs = nowMs - led.leaderSinceMs();
        if (ledMs < intervalMs) {
            return hold(led, Reason.LED_RECENTLY, "led here for " + ledMs + " ms of " + intervalMs);
        }
        RaftFollower preferred = led.view().followers().get(target);
        if (preferred == null) {
            return hold(led, Reason.PREFERRED_SILENT, "not a follower of this leader");
        }
        if (preferred.lastResponseAgoMs() > followerSilenceMsMax) {
            return hold(led, Reason.PREFERRED_SILENT, "last answered " + preferred.lastResponseAgoMs()
                    + " ms ago, over " + followerSilenceMsMax);
        }
        long commitIndex = led.view().commitIndex();
        if (preferred.matchIndex() < commitIndex - matchLagMax) {
            return hold(led, Reason.PREFERRED_BEHIND, "holds Raft index " + preferred.matchIndex() + " of "
                    + commitIndex + " committed, " + matchLagMax + " may lack");
        }
        Optional<Integer> unreached = led.replicas().stream()
                .filter(r -> r != target && (r == nodeId || reachability.reaches(nodeId, r)))
                .filter(r -> !reachability.reaches(target, r)).findFirst();
        return unreached.isEmpty() ? Optional.empty() : hold(led, Reason.PREFERRED_CUT_OFF,
                "has not heard from node " + unreached.get() + " recently");
    }

    private static Optional<Hold> hold(Led led, Reason reason, String detail) {
        return Optional.of(new Hold(led.group(), led.preferredNodeId(), reason, detail));
    }
}
