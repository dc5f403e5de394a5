package io.tidemark.mirror.failover;

import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.failover.FailoverPlan.PartitionPlan;
import io.tidemark.proto.v1.GroupPartitionLag;

import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Applies a {@link FailoverPlan}: commits its offsets for the group on the target, in one CommitOffsets call, each
 * with the metadata {@code tidemark failover from SOURCE (exact|time)}. A partition the plan leaves uncommitted (the
 * group had no committed offset on the source) gets no commit.
 * <ul>
 *   <li><b>Refused when the plan skips records</b> the group had not consumed ({@link FailoverPlan#skips}), unless
 *       told to skip them ({@code --allow-skip}): the error names each partition and how many.</li>
 *   <li><b>Refused while the group has live members on the target</b> ({@link FailoverPlan#targetMembers}, as the
 *       target's coordinator knows them): the error names each. The commit itself has no member id, and the
 *       coordinator takes it only while the group has no members, so a consumer that joins after the plan was made
 *       makes apply fail with NON_EMPTY_GROUP rather than move its position.</li>
 *   <li><b>Refused while the group shows recent commits on the target.</b> A consumer that assigns itself partitions
 *       is no member and shows only by its commits: the group is active when it committed a partition within the
 *       active window ({@code --active-window}, default 1 minute, against each commit's time on the target broker)
 *       with metadata other than the failover's. Such consumers that commit less often than the window are not
 *       seen: stop them before applying.</li>
 *   <li><b>Idempotent.</b> When the group's committed offsets on the target already are the plan's, nothing is
 *       written. The plan of a dead source does not change from one run to the next, so applying twice commits
 *       once. A failover commit is not a sign of activity, so a second apply is not refused by the first.</li>
 * </ul>
 *
 * <p>Thread-safe (the admin client is).
 */
public final class FailoverCommitter {
    /** Starts the metadata of every offset apply commits. */
    public static final String METADATA_PREFIX = "tidemark failover";

    private final TidemarkAdmin target;
    private final InstantSource clock;
    private final long activeWindowMs;
    private final boolean allowSkip;

    /**
     * What apply does.
     *
     * @param offsets        the plan's offsets, with their metadata
     * @param alreadyApplied true when the group's committed offsets already were these: nothing was written
     */
    public record Decision(Map<TopicPartition, OffsetAndMetadata> offsets, boolean alreadyApplied) {
        public Decision {
            offsets = Map.copyOf(offsets);
        }
    }

    /** @param allowSkip whether to apply a plan that skips records the group had not consumed */
    public FailoverCommitter(TidemarkAdmin target, InstantSource clock, long activeWindowMs, boolean allowSkip) {
        if (activeWindowMs < 0) {
            throw new IllegalArgumentException("--active-window " + activeWindowMs + " ms is negative");
        }
        this.target = target;
        this.clock = clock;
        this.activeWindowMs = activeWindowMs;
        this.allowSkip = allowSkip;
    }

    /**
     * Commits the plan's offsets unless the group already has them.
     *
     * @throws IllegalArgumentException when the group has live members or recent commits on the target, or the plan
     *                                  skips records and that was not allowed
     */
    public Decision apply(FailoverPlan plan) {
        Decision decision = decide(plan, target.committedPartitions(plan.group()), clock.millis(), activeWindowMs,
                allowSkip);
        if (!decision.alreadyApplied()) {
            target.commitOffsets(plan.group(), decision.offsets());
        }
        return decision;
    }

    /** The decision, from the group's commits on the target at {@code nowMs}. */
    static Decision decide(FailoverPlan plan, List<GroupPartitionLag> committed, long nowMs, long activeWindowMs,
                           boolean allowSkip) {
        if (!plan.targetMembers().isEmpty()) {
            throw new IllegalArgumentException("group '" + plan.group() + "' has " + plan.targetMembers().size()
                    + " live member(s) on the target: " + String.join("; ", plan.targetMembers().stream()
                    .map(FailoverPlanFormat::memberText).toList()) + "; stop them first (or wait for their session "
                    + "timeout): apply would move the positions they read from");
        }
        List<GroupPartitionLag> active = committed.stream().filter(c -> !c.getMetadata().startsWith(METADATA_PREFIX)
                && c.getCommitTimeMs() > nowMs - activeWindowMs).toList();
        if (!active.isEmpty()) {
            long latest = active.stream().mapToLong(GroupPartitionLag::getCommitTimeMs).max().orElseThrow();
            throw new IllegalArgumentException("group '" + plan.group() + "' has active consumers on the target: it "
                    + "committed " + String.join(", ", active.stream().map(c -> c.getTopic() + "-" + c.getPartition())
                    .toList()) + " in the last " + FailoverPlanFormat.seconds(activeWindowMs) + " (--active-window), "
                    + "the latest at " + FailoverPlanFormat.time(latest) + "; stop them first: apply would move the "
                    + "positions they read from");
        }
        if (plan.skips() && !allowSkip) {
            throw new IllegalArgumentException("the plan skips records group '" + plan.group() + "' had not consumed on "
                    + plan.sourceCluster() + ": " + String.join(", ", plan.partitions().stream()
                    .filter(p -> p.skipped().records() > 0).map(FailoverCommitter::skippedText).toList())
                    + "; resume earlier (an earlier --time, or --time last-consumed where it has checkpoints), or give "
                    + "--allow-skip to skip them");
        }
        Map<TopicPartition, Long> current = new LinkedHashMap<>();
        committed.forEach(c -> current.put(new TopicPartition(c.getTopic(), c.getPartition()), c.getCommittedOffset()));
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        boolean same = true;
        for (PartitionPlan p : plan.partitions()) {
            if (p.offset().isEmpty()) {
                continue;
            }
            String mode = FailoverPlanFormat.mode(p);
            offsets.put(p.partition(), new OffsetAndMetadata(p.offset().getAsLong(), METADATA_PREFIX + " from "
                    + plan.sourceCluster() + " (" + mode + ")"));
            same &= Objects.equals(current.get(p.partition()), p.offset().getAsLong());
        }
        return new Decision(offsets, same);
    }

    private static String skippedText(PartitionPlan p) {
        return p.partition().topic() + "-" + p.partition().partition() + ": " + (p.skipped().positionKnown()
                ? p.skipped().records() + " (from its position at the last checkpoint to T - X)"
                : "up to " + p.skipped().records() + " (no checkpoint: its position is unknown)");
    }
}
