package io.tidemark.mirror.failover;

import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.failover.FailoverCommitter.Decision;
import io.tidemark.mirror.failover.FailoverPlan.ByTime;
import io.tidemark.mirror.failover.FailoverPlan.Exact;
import io.tidemark.mirror.failover.FailoverPlan.Lost;
import io.tidemark.mirror.failover.FailoverPlan.PartitionPlan;
import io.tidemark.mirror.failover.FailoverPlan.Skipped;
import io.tidemark.mirror.failover.FailoverPlan.TimeSource;
import io.tidemark.mirror.failover.FailoverPlan.Uncommitted;
import io.tidemark.proto.v1.GroupPartitionLag;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import static io.tidemark.mirror.failover.MirrorStates.BASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FailoverCommitterTest {
    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);
    private static final TopicPartition P2 = new TopicPartition("orders", 2);
    private static final long NOW_MS = BASE_MS + 600_000;
    private static final long WINDOW_MS = 60_000;
    private static final FailoverPlan PLAN = new FailoverPlan("g", "A", "B", NOW_MS, OptionalLong.empty(),
            OptionalLong.empty(), 0, Optional.of(new Buffer(0, Optional.empty())), List.of(
            new PartitionPlan(P0, OptionalLong.of(6), 10, Optional.empty(), 0, OptionalLong.of(0), Skipped.NONE,
                    Lost.NONE, new Exact("orders", 6, 0, 0, false, Optional.empty(), OptionalLong.empty()), Optional.empty()),
            new PartitionPlan(P1, OptionalLong.of(4), 5, Optional.empty(), 0, OptionalLong.empty(), Skipped.NONE,
                    Lost.NONE, new ByTime(BASE_MS, TimeSource.GIVEN, BASE_MS, OptionalLong.of(4)), Optional.empty()),
            new PartitionPlan(P2, OptionalLong.empty(), 7, Optional.empty(), 0, OptionalLong.empty(), Skipped.NONE,
                    Lost.NONE, new Uncommitted(BASE_MS), Optional.empty())), List.of(), List.of());
    private static final Map<TopicPartition, OffsetAndMetadata> OFFSETS = Map.of(
            P0, new OffsetAndMetadata(6, "tidemark failover from A (exact)"),
            P1, new OffsetAndMetadata(4, "tidemark failover from A (time)"));

    private static GroupPartitionLag committed(TopicPartition tp, long offset, String metadata, long atMs) {
        return GroupPartitionLag.newBuilder().setTopic(tp.topic()).setPartition(tp.partition())
                .setCommittedOffset(offset).setMetadata(metadata).setCommitTimeMs(atMs).build();
    }

    @Test
    void aPartitionLeftUncommittedGetsNoCommit() {
        assertEquals(false, FailoverCommitter.decide(PLAN, List.of(), NOW_MS, WINDOW_MS, false).offsets()
                .containsKey(P2));
    }

    @Test
    void aPlanThatSkipsRecordsIsRefusedUnlessAllowed() {
        FailoverPlan skipping = new FailoverPlan("g", "A", "B", NOW_MS, OptionalLong.empty(), OptionalLong.empty(), 0,
                Optional.of(new Buffer(0, Optional.empty())), List.of(
                new PartitionPlan(P0, OptionalLong.of(506), 506, Optional.empty(), 0, OptionalLong.empty(),
                        new Skipped(506, false), Lost.NONE, new ByTime(BASE_MS, TimeSource.SOURCE_SILENT, BASE_MS,
                        OptionalLong.empty()), Optional.empty()),
                new PartitionPlan(P1, OptionalLong.of(9), 10, Optional.empty(), 0, OptionalLong.empty(),
                        new Skipped(5, true), Lost.NONE, new ByTime(BASE_MS, TimeSource.SOURCE_SILENT, BASE_MS,
                        OptionalLong.of(4)), Optional.empty())), List.of(), List.of());

        assertEquals("the plan skips records group 'g' had not consumed on A: orders-0: up to 506 (no checkpoint: its "
                + "position is unknown), orders-1: 5 (from its position at the last checkpoint to T - X); resume "
                + "earlier (an earlier --time, or --time last-consumed where it has checkpoints), or give --allow-skip "
                + "to skip them", assertThrows(IllegalArgumentException.class,
                () -> FailoverCommitter.decide(skipping, List.of(), NOW_MS, WINDOW_MS, false)).getMessage());
        assertEquals(Map.of(P0, new OffsetAndMetadata(506, "tidemark failover from A (time)"),
                        P1, new OffsetAndMetadata(9, "tidemark failover from A (time)")),
                FailoverCommitter.decide(skipping, List.of(), NOW_MS, WINDOW_MS, true).offsets());
    }

    @Test
    void aGroupWithLiveMembersOnTheTargetIsRefusedNamingThem() {
        FailoverPlan withMembers = new FailoverPlan(PLAN.group(), PLAN.sourceCluster(), PLAN.targetCluster(),
                PLAN.plannedAtMs(), PLAN.sourceLastHeardMs(), PLAN.lastHeartbeatMs(), PLAN.notCopied(), PLAN.buffer(),
                PLAN.partitions(), PLAN.uncopied(), List.of(new FailoverPlan.TargetMember("m1", "billing-1",
                "10.0.0.9:50000", List.of(P0, P1))));
        assertEquals("group 'g' has 1 live member(s) on the target: m1 (client billing-1, host 10.0.0.9:50000, "
                + "assigned orders-0,orders-1); stop them first (or wait for their session timeout): apply would move "
                + "the positions they read from", assertThrows(IllegalArgumentException.class,
                () -> FailoverCommitter.decide(withMembers, List.of(), NOW_MS, WINDOW_MS, true)).getMessage());
    }

    @Test
    void aGroupWithoutCommitsOnTheTargetGetsThePlansOffsets() {
        assertEquals(new Decision(OFFSETS, false), FailoverCommitter.decide(PLAN, List.of(), NOW_MS, WINDOW_MS, false));
    }

    @Test
    void commitsOlderThanTheWindowAreOverwritten() {
        assertEquals(new Decision(OFFSETS, false), FailoverCommitter.decide(PLAN, List.of(
                committed(P0, 100, "", NOW_MS - WINDOW_MS)), NOW_MS, WINDOW_MS, false));
    }

    @Test
    void theSameOffsetsAlreadyCommittedByAFailoverAreLeftAlone() {
        List<GroupPartitionLag> applied = List.of(committed(P0, 6, "tidemark failover from A (exact)", NOW_MS - 1),
                committed(P1, 4, "tidemark failover from A (time)", NOW_MS - 1));
        assertEquals(new Decision(OFFSETS, true), FailoverCommitter.decide(PLAN, applied, NOW_MS, WINDOW_MS, false));
    }

    @Test
    void anotherFailoverCommitIsNotAnActiveConsumer() {
        assertEquals(new Decision(OFFSETS, false), FailoverCommitter.decide(PLAN, List.of(
                committed(P0, 3, "tidemark failover from A (time)", NOW_MS)), NOW_MS, WINDOW_MS, false));
    }

    @Test
    void aConsumersCommitWithinTheWindowRefusesTheApply() {
        List<GroupPartitionLag> active = List.of(committed(P0, 8, "", NOW_MS - 5_000),
                committed(P1, 4, "tidemark failover from A (time)", NOW_MS - 9_000),
                committed(new TopicPartition("audit", 0), 1, "mine", NOW_MS - WINDOW_MS + 1));
        assertEquals("group 'g' has active consumers on the target: it committed orders-0, audit-0 in the last "
                + "60.000 s (--active-window), the latest at 2023-11-14T22:23:15.000Z; stop them first: apply would "
                + "move the positions they read from", assertThrows(IllegalArgumentException.class,
                () -> FailoverCommitter.decide(PLAN, active, NOW_MS, WINDOW_MS, false)).getMessage());
    }
}
