package io.tidemark.mirror.failover;

import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.failover.FailoverPlan.ByTime;
import io.tidemark.mirror.failover.FailoverPlan.Exact;
import io.tidemark.mirror.failover.FailoverPlan.Lost;
import io.tidemark.mirror.failover.FailoverPlan.PartitionPlan;
import io.tidemark.mirror.failover.FailoverPlan.RecordTimes;
import io.tidemark.mirror.failover.FailoverPlan.Skipped;
import io.tidemark.mirror.failover.FailoverPlan.TimeSource;
import io.tidemark.mirror.failover.FailoverPlan.Uncommitted;
import io.tidemark.mirror.failover.FailoverRequest.TimeChoice;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorPartitionState;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStopReason;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.MirrorStateRecord;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;

import static io.tidemark.mirror.failover.MirrorStates.BASE_MS;
import static io.tidemark.mirror.failover.MirrorStates.ORDERS_ID;
import static io.tidemark.mirror.failover.MirrorStates.behind;
import static io.tidemark.mirror.failover.MirrorStates.checkpoint;
import static io.tidemark.mirror.failover.MirrorStates.copying;
import static io.tidemark.mirror.failover.MirrorStates.heartbeat;
import static io.tidemark.mirror.failover.MirrorStates.record;
import static io.tidemark.mirror.failover.MirrorStates.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The planner over a scripted target: orders-0 holds copies of A's orders-0 offsets 0..9, one a second, and orders-1
 * copies of A's orders-1 offsets 0..4, one every 2 seconds; each copy is stamped on B 50 ms after its SendTime. The
 * group g committed 6 on orders-0 at BASE + 6.5 s (4 at BASE + 4.5 s before: 1 record a second) and 2 on orders-1
 * (its rate unknown); A went silent at BASE + 9.5 s with 3 records of orders-1 not copied.
 */
class FailoverPlannerTest {
    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);
    private static final long NOW_MS = BASE_MS + 60_000;
    private static final long SILENT_MS = BASE_MS + 9_500;

    private static final OriginPartition ORIGIN_0 = new OriginPartition("A", "orders", ORDERS_ID, 0);

    private final ScriptedTarget target = new ScriptedTarget().topic("orders", 2);
    private final FailoverPlanner planner = new FailoverPlanner(target);

    FailoverPlannerTest() {
        for (int i = 0; i < 10; i++) {
            target.copy(P0, BASE_MS + 1000L * i + 50, BASE_MS + 1000L * i, ORIGIN_0, i);
        }
        for (int i = 0; i < 5; i++) {
            target.copy(P1, BASE_MS + 2000L * i + 50, BASE_MS + 2000L * i, new OriginPartition("A", "orders", ORDERS_ID, 1), i);
        }
    }

    private static final MirrorStateRecord CHECKPOINT_0 = record(checkpoint0(4, BASE_MS + 4_500));
    private static final MirrorStateRecord CHECKPOINT_1 = record(checkpoint(1, 2, 2).setSourceCommitTimeMs(BASE_MS + 4_100)
            .setCheckpointTimeMs(BASE_MS + 4_500));
    /** Latencies from -200 ms to 1100 ms: X auto = 200 + 1300 ms. */
    private static final MirrorStateRecord[] HEARTBEATS = {
            record(copying(BASE_MS + 5_000, 10, 40, 60)),
            record(copying(BASE_MS + 9_000, 5, -200, 1_100)),
            record(heartbeat(BASE_MS + 12_000, SILENT_MS).setRecordsBehind(3).addPartitionsBehind(behind(1, 3)))};

    /** Exact on orders-0: 6 committed at BASE + 6.5 s, B = 4 copies at or above it. */
    private static final Exact EXACT_0 = new Exact("orders", 6, BASE_MS + 6_500, BASE_MS + 7_000, false,
            Optional.of(new CommitRate(2, 2_000)), OptionalLong.empty());

    /** The group's checkpoint of orders-0, its previous commit {@code previousOffset} at {@code previousMs}. */
    private static MirrorCheckpoint.Builder checkpoint0(long previousOffset, long previousMs) {
        return checkpoint(0, 6, 6).setSourceCommitTimeMs(BASE_MS + 6_500).setCheckpointTimeMs(BASE_MS + 7_000)
                .setLastConsumedKnown(true).setLastConsumedSendTimeMs(BASE_MS + 5_000)
                .setLastConsumedReceiveTimeMs(BASE_MS + 5_010).setPreviousKnown(true)
                .setPreviousSourceOffset(previousOffset).setPreviousSourceCommitTimeMs(previousMs);
    }

    private static MirrorState fullState() {
        return state(CHECKPOINT_0, CHECKPOINT_1, HEARTBEATS[0], HEARTBEATS[1], HEARTBEATS[2]);
    }

    /** Orders-0's plan in exact mode with {@code checkpoint0}, and the heartbeats when {@code silence}. */
    private PartitionPlan exact0(MirrorCheckpoint.Builder checkpoint0, boolean silence) {
        MirrorState state = silence ? state(record(checkpoint0), CHECKPOINT_1, HEARTBEATS[0], HEARTBEATS[1],
                HEARTBEATS[2]) : state(record(checkpoint0), CHECKPOINT_1);
        return planner.plan(state, request(TimeChoice.none(), OptionalLong.empty()), NOW_MS).partitions().get(0);
    }

    private static FailoverRequest request(TimeChoice time, OptionalLong bufferMs, String... topics) {
        return new FailoverRequest("A", "g", time, bufferMs, List.of(topics));
    }

    private static RecordTimes times(long sendOffsetMs) {
        return new RecordTimes(BASE_MS + sendOffsetMs + 50, BASE_MS + sendOffsetMs);
    }

    @Test
    void exactModeResumesAtTheCheckpointsAndEstimatesTheRereadsFromTheGroupsRateWithinTheCopiesAfterThem() {
        FailoverPlan plan = planner.plan(fullState(), request(TimeChoice.none(), OptionalLong.empty()), NOW_MS);

        assertEquals(new FailoverPlan("g", "A", "B", NOW_MS, OptionalLong.of(SILENT_MS),
                OptionalLong.of(BASE_MS + 12_000), 3, Optional.empty(), List.of(
                new PartitionPlan(P0, OptionalLong.of(6), 10, Optional.of(times(6_000)), 3, OptionalLong.of(4),
                        Skipped.NONE, Lost.NONE, EXACT_0, Optional.empty()),
                new PartitionPlan(P1, OptionalLong.of(2), 5, Optional.of(times(4_000)), 3, OptionalLong.of(3),
                        Skipped.NONE, new Lost(3, 0, 0), new Exact("orders", 2, BASE_MS + 4_100, BASE_MS + 4_500,
                        false, Optional.empty(), OptionalLong.empty()), Optional.empty())), List.of(), List.of()), plan,
                "orders-0: 1 record/s for the 3 s from the commit to the silence; orders-1: rate unknown, the bound");
        assertEquals(new FailoverPlan.Totals(6, 0, true, 3, 0), plan.totals());
        assertEquals(false, plan.skips());
    }

    @Test
    void aGroupThatStoodStillIsEstimatedToRereadNothing() {
        PartitionPlan plan = exact0(checkpoint0(6, BASE_MS + 5_500), true);

        assertEquals(0, plan.rereads());
        assertEquals(OptionalLong.of(4), plan.rereadsAtMost());
        assertEquals(Optional.of(new CommitRate(0, 1_000)), ((Exact) plan.basis()).commitRate());
    }

    @Test
    void theEstimateIsCappedByTheBound() {
        PartitionPlan plan = exact0(checkpoint0(2, BASE_MS + 4_500), true);

        assertEquals(4, plan.rereads(), "2 records/s for 3 s is 6, but only 4 copies are above the checkpoint");
        assertEquals(OptionalLong.of(4), plan.rereadsAtMost());
    }

    @Test
    void withoutAHeartbeatTheEstimateRunsToThePlansTime() {
        MirrorCheckpoint.Builder slow = checkpoint0(5, BASE_MS - 13_500);

        assertEquals(0, exact0(slow, true).rereads(), "1 record in 20 s, for the 3 s to the silence: 0.15");
        assertEquals(3, exact0(slow, false).rereads(), "for the 53.5 s to the plan: 2.675");
    }

    @Test
    void aGroupMovedBackHasNoRateAndTheBoundIsTheEstimate() {
        PartitionPlan plan = exact0(checkpoint0(8, BASE_MS + 4_500), true);

        assertEquals(4, plan.rereads());
        assertEquals(OptionalLong.of(4), plan.rereadsAtMost());
        assertEquals(Optional.empty(), ((Exact) plan.basis()).commitRate());
    }

    @Test
    void theTargetGoesByItsOwnNameWhenItHasOneElseByTheNameItsMirrorWasTold() {
        FailoverRequest request = request(TimeChoice.none(), OptionalLong.empty());
        assertEquals("B", planner.plan(fullState(), request, NOW_MS).targetCluster());
        target.named("dc-b");
        assertEquals("dc-b", planner.plan(fullState(), request, NOW_MS).targetCluster());
    }

    @Test
    void aGivenTimeMovesEveryPartitionByTimeWithXFromTheMirrorsLatencies() {
        FailoverPlan plan = planner.plan(fullState(), request(TimeChoice.given(BASE_MS + 5_000), OptionalLong.empty()),
                NOW_MS);

        assertEquals(Optional.of(new Buffer(1_500, Optional.of(new LatencySample(-200, 1_100, 15, 2, BASE_MS + 5_000,
                BASE_MS + 9_000)))), plan.buffer());
        assertEquals(List.of(new PartitionPlan(P0, OptionalLong.of(4), 10, Optional.of(times(4_000)), 5,
                        OptionalLong.empty(), Skipped.NONE, Lost.NONE, new ByTime(BASE_MS + 5_000, TimeSource.GIVEN,
                        BASE_MS + 3_500, OptionalLong.of(6)), Optional.empty()),
                new PartitionPlan(P1, OptionalLong.of(2), 5, Optional.of(times(4_000)), 3, OptionalLong.empty(),
                        Skipped.NONE, new Lost(3, 0, 0), new ByTime(BASE_MS + 5_000, TimeSource.GIVEN, BASE_MS + 3_500,
                        OptionalLong.of(2)), Optional.empty())), plan.partitions(),
                "re-read: from T - X to the checkpoint's position, and what the group is estimated to have consumed "
                        + "after it (orders-0: 4 and 5, then 3 at 1 record/s; orders-1: the 3 copies above it)");
    }

    @Test
    void lastConsumedTakesTheCheckpointsSourceReceiveTimeAndFallsBackToTheSilence() {
        FailoverPlan plan = planner.plan(fullState(), request(TimeChoice.lastConsumed(), OptionalLong.of(1_000)),
                NOW_MS);

        assertEquals(Optional.of(new Buffer(1_000, Optional.empty())), plan.buffer());
        assertEquals(List.of(
                new PartitionPlan(P0, OptionalLong.of(4), 10, Optional.of(times(4_000)), 5, OptionalLong.empty(),
                        Skipped.NONE, Lost.NONE, new ByTime(BASE_MS + 5_010, TimeSource.LAST_CONSUMED, BASE_MS + 4_010,
                        OptionalLong.of(6)), Optional.empty()),
                new PartitionPlan(P1, OptionalLong.of(5), 5, Optional.empty(), 0, OptionalLong.empty(),
                        new Skipped(3, true), new Lost(3, 0, 0), new ByTime(SILENT_MS, TimeSource.SOURCE_SILENT,
                        SILENT_MS - 1_000, OptionalLong.of(2)), Optional.empty())), plan.partitions(),
                "orders-1's checkpoint knows no last consumed record; T - X is after its last record: the log end, "
                        + "which skips the 3 records from the group's position at its checkpoint");
        assertEquals(true, plan.skips());
    }

    @Test
    void aPartitionWithoutCheckpointResumesByTimeFromTheSilenceNextToExactOnes() {
        FailoverPlan plan = planner.plan(state(CHECKPOINT_0, HEARTBEATS[0], HEARTBEATS[1], HEARTBEATS[2]),
                request(TimeChoice.none(), OptionalLong.empty()), NOW_MS);

        assertEquals(List.of(
                new PartitionPlan(P0, OptionalLong.of(6), 10, Optional.of(times(6_000)), 3, OptionalLong.of(4),
                        Skipped.NONE, Lost.NONE, EXACT_0, Optional.empty()),
                new PartitionPlan(P1, OptionalLong.of(4), 5, Optional.of(times(8_000)), 1, OptionalLong.empty(),
                        new Skipped(4, false), new Lost(3, 0, 0), new ByTime(SILENT_MS, TimeSource.SOURCE_SILENT,
                        SILENT_MS - 1_500, OptionalLong.empty()), Optional.empty())), plan.partitions(),
                "the group's position on orders-1 is unknown: up to the 4 records before T - X may be skipped");
        assertEquals(new FailoverPlan.Totals(4, 4, false, 3, 0), plan.totals());
    }

    @Test
    void sourceSilentAndTopicsWithoutCheckpointsMoveByTheSilence() {
        target.topic("audit", 1);
        FailoverPlan plan = planner.plan(state(HEARTBEATS), request(TimeChoice.sourceSilent(), OptionalLong.of(0),
                "audit"), NOW_MS);

        assertEquals(List.of(new PartitionPlan(new TopicPartition("audit", 0), OptionalLong.of(0), 0,
                Optional.empty(), 0, OptionalLong.empty(), new Skipped(0, false), Lost.NONE,
                new ByTime(SILENT_MS, TimeSource.SOURCE_SILENT, SILENT_MS, OptionalLong.empty()), Optional.empty())), plan.partitions());
    }

    @Test
    void aBufferLargerThanTIsLookedUpFromTime0() {
        FailoverPlan plan = planner.plan(fullState(), request(TimeChoice.given(1_000), OptionalLong.of(5_000)), NOW_MS);

        assertEquals(new ByTime(1_000, TimeSource.GIVEN, 0, OptionalLong.of(6)), plan.partitions().get(0).basis());
        assertEquals(OptionalLong.of(0), plan.partitions().get(0).offset());
    }

    @Test
    void exactModeAfterOtherOriginsCountsOnlyTheSourcesCopies() {
        OriginPartition c = new OriginPartition("C", "orders", ORDERS_ID, 0);
        target.copy(P0, BASE_MS + 10_050, BASE_MS + 10_000, c, 77).copy(P0, BASE_MS + 10_060, BASE_MS + 10_000, c, 78);
        FailoverPlan plan = planner.plan(fullState(), request(TimeChoice.none(), OptionalLong.empty()), NOW_MS);

        assertEquals(OptionalLong.of(4), plan.partitions().get(0).rereadsAtMost(),
                "C's copies are new to the group, not re-reads");
        assertEquals(3, plan.partitions().get(0).rereads());
        assertEquals(12, plan.partitions().get(0).logEndOffset());
    }

    @Test
    void aPartitionTheGroupNeverCommittedOnTheSourceStaysUncommitted() {
        MirrorStateRecord noCommit = record(MirrorStates.noCommit(0, BASE_MS + 9_000));
        FailoverPlan plan = planner.plan(state(noCommit, CHECKPOINT_1, HEARTBEATS[0], HEARTBEATS[1], HEARTBEATS[2]),
                request(TimeChoice.none(), OptionalLong.empty()), NOW_MS);

        assertEquals(new PartitionPlan(P0, OptionalLong.empty(), 10, Optional.empty(), 0, OptionalLong.empty(),
                Skipped.NONE, Lost.NONE, new Uncommitted(BASE_MS + 9_000), Optional.empty()), plan.partitions().get(0),
                "not moved to the log end by time: the group's auto.offset.reset applies on the target as on A");
        assertEquals(false, plan.skips());
        FailoverPlan byTime = planner.plan(state(noCommit, CHECKPOINT_1, HEARTBEATS[0], HEARTBEATS[1], HEARTBEATS[2]),
                request(TimeChoice.sourceSilent(), OptionalLong.empty()), NOW_MS);
        assertEquals(new Uncommitted(BASE_MS + 9_000), byTime.partitions().get(0).basis(), "whatever the time");
    }

    @Test
    void sourceSilentSkipsNothingWhereTheCheckpointShowsTheGroupCaughtUp() {
        MirrorStateRecord caughtUp = record(checkpoint(1, 5, 5).setSourceCommitTimeMs(BASE_MS + 9_000)
                .setCheckpointTimeMs(BASE_MS + 9_200));
        FailoverPlan plan = planner.plan(state(CHECKPOINT_0, caughtUp, HEARTBEATS[0], HEARTBEATS[1], HEARTBEATS[2]),
                request(TimeChoice.sourceSilent(), OptionalLong.of(1_000)), NOW_MS);

        assertEquals(new PartitionPlan(P1, OptionalLong.of(5), 5, Optional.empty(), 0, OptionalLong.empty(),
                Skipped.NONE, new Lost(3, 0, 0), new ByTime(SILENT_MS, TimeSource.SOURCE_SILENT, SILENT_MS - 1_000,
                OptionalLong.of(5)), Optional.empty()), plan.partitions().get(1), "its position is the log end, past T - X");
        assertEquals(new Skipped(3, true), plan.partitions().get(0).skipped(),
                "orders-0 was at 6 at its checkpoint: 6, 7 and 8 were not consumed then, and are before T - X");
    }

    @Test
    void aCheckpointWhoseTargetOffsetHoldsAnotherRecordIsCorrectedByASearch() {
        FailoverPlan plan = planner.plan(state(record(checkpoint0(4, BASE_MS + 4_500).setTargetOffset(8)),
                CHECKPOINT_1, HEARTBEATS[2]), request(TimeChoice.none(), OptionalLong.empty()), NOW_MS);

        PartitionPlan p0 = plan.partitions().get(0);
        assertEquals(OptionalLong.of(6), p0.offset(), "the copy of 6, not 8: resuming there would skip 6 and 7");
        assertEquals(OptionalLong.of(8), ((Exact) p0.basis()).checkpointOffset());
    }

    @Test
    void aCheckpointInAPartitionInterleavedWithAnotherOriginIsSearchedAndKept() {
        OriginPartition c = new OriginPartition("C", "orders", ORDERS_ID, 0);
        ScriptedTarget mixed = new ScriptedTarget().topic("orders", 1).copy(P0, BASE_MS + 40, BASE_MS, c, 0)
                .copy(P0, BASE_MS + 50, BASE_MS, ORIGIN_0, 0).copy(P0, BASE_MS + 1_040, BASE_MS, c, 1)
                .copy(P0, BASE_MS + 1_050, BASE_MS, ORIGIN_0, 1);
        FailoverPlan plan = new FailoverPlanner(mixed).plan(state(record(checkpoint(0, 1, 3)
                .setCheckpointTimeMs(BASE_MS + 2_000))), request(TimeChoice.none(), OptionalLong.empty()), NOW_MS);

        assertEquals(OptionalLong.of(3), plan.partitions().get(0).offset());
        assertEquals(OptionalLong.empty(), ((Exact) plan.partitions().get(0).basis()).checkpointOffset(),
                "the record before is C's: the search confirms the checkpoint");
    }

    @Test
    void aCheckpointMadeWhileTheMirrorWasBehindResumesAtTheCopyOfTheCommittedOffsetWhenOnlyConsumedCopiesLieBetween() {
        PartitionPlan p0 = planBehind(tenCopies(-1));

        assertEquals(OptionalLong.of(8), p0.offset(), "the copies of 5, 6 and 7 came after the checkpoint, and the "
                + "group had consumed them on A");
        assertEquals(OptionalLong.of(2), p0.rereadsAtMost(), "only the 2 copies at and above 8");
        assertEquals(OptionalLong.of(5), ((Exact) p0.basis()).checkpointOffset());
        assertEquals(0, p0.lost().removedOnTarget());
    }

    @Test
    void aCheckpointMadeWhileTheMirrorWasBehindKeepsItsOffsetWhenARecordThatIsNoConsumedCopyLiesBetween() {
        PartitionPlan p0 = planBehind(tenCopies(6));

        assertEquals(OptionalLong.of(5), p0.offset(), "offset 6 holds a record produced on B, which the group never "
                + "read: resuming at the copy of 8 (offset 9) would skip it");
        assertEquals(OptionalLong.of(4 + 2), p0.rereadsAtMost(), "the copies of 5, 6 and 7 and B's record below the "
                + "copy of 8, and the 2 copies at and above 8");
        assertEquals(OptionalLong.empty(), ((Exact) p0.basis()).checkpointOffset());
    }

    @Test
    void aCheckpointMadeWhileTheMirrorWasBehindResumesAtTheLogEndWhenTheTargetHoldsOnlyConsumedCopiesAfterIt() {
        PartitionPlan p0 = planBehind(tenCopies(-1), 12);

        assertEquals(OptionalLong.of(10), p0.offset(), "the copies of 5 to 9 came after the checkpoint, the group "
                + "had consumed them on A, and the copy of 12 would land at the log end");
        assertEquals(OptionalLong.of(0), p0.rereadsAtMost());
        assertEquals(OptionalLong.of(5), ((Exact) p0.basis()).checkpointOffset());
    }

    @Test
    void aCheckpointMadeWhileTheMirrorWasBehindKeepsItsOffsetBeforeARecordProducedOnTheTargetWhenNoCopyIsAtOrAbove() {
        PartitionPlan p0 = planBehind(tenCopies(7), 12);

        assertEquals(OptionalLong.of(5), p0.offset(), "offset 7 holds a record produced on B, which the group never "
                + "read");
        assertEquals(OptionalLong.of(6), p0.rereadsAtMost(), "the copies of 5 to 9 and B's record");
    }

    /**
     * A target whose orders-0 holds copies of origin offsets 0 to 9, with a record produced on the target just
     * before the copy of {@code producedBefore} (none when -1).
     */
    private static ScriptedTarget tenCopies(int producedBefore) {
        ScriptedTarget target = new ScriptedTarget().topic("orders", 1);
        for (int i = 0; i < 10; i++) {
            if (i == producedBefore) {
                target.produce(P0, BASE_MS + 1000L * i + 10, BASE_MS + 1000L * i);
            }
            target.copy(P0, BASE_MS + 1000L * i + 50, BASE_MS + 1000L * i, ORIGIN_0, i);
        }
        return target;
    }

    /** orders-0's plan from a checkpoint of source offset 8 at target offset 5, made while the mirror was behind. */
    private static PartitionPlan planBehind(ScriptedTarget target) {
        return planBehind(target, 8);
    }

    /** orders-0's plan from a checkpoint of {@code committed} at target offset 5, made while the mirror was behind. */
    private static PartitionPlan planBehind(ScriptedTarget target, long committed) {
        return new FailoverPlanner(target).plan(state(record(checkpoint(0, committed, 5).setMirrorBehind(true)
                        .setCheckpointTimeMs(BASE_MS + 5_000))), request(TimeChoice.none(), OptionalLong.empty()), NOW_MS)
                .partitions().get(0);
    }

    @Test
    void recordsRemovedByRetentionOnEitherClusterAreLostFromTheGroupsPosition() {
        MirrorStateRecord gapBelow = record(MirrorStates.gap(0, 2, 4));
        MirrorStateRecord gapAbove = record(MirrorStates.gap(0, 5, 9));
        MirrorStateRecord earlierTopic = record(MirrorStates.gap(0, 5, 9).setSourceTopicId(TopicIds.toBytes(
                new UUID(0, 1))));
        target.removeBefore(P0, 8);
        FailoverPlan plan = planner.plan(state(gapBelow, gapAbove, earlierTopic, CHECKPOINT_0, CHECKPOINT_1,
                        HEARTBEATS[2]),
                request(TimeChoice.none(), OptionalLong.empty()), NOW_MS);

        PartitionPlan p0 = plan.partitions().get(0);
        assertEquals(OptionalLong.of(8), p0.offset(), "the target's log start");
        assertEquals(new Lost(0, 3, 2), p0.lost(), "A removed 6 to 8 above the group's 6 before they were copied; "
                + "B removed the copies of 6 and 7; the gap of an earlier topic of the name is not this one's");
        assertEquals(OptionalLong.of(1), p0.rereadsAtMost(), "of the 4 origin offsets 6 to 9, only 9 was copied");
        assertEquals(new FailoverPlan.Totals(p0.rereads() + 3, 0, true, 3, 5), plan.totals());
    }

    @Test
    void partitionsTheMirrorStoppedCopyingAreNamedWithTheReason() {
        MirrorStateRecord refused = MirrorStateRecord.newBuilder().setStatus(MirrorPartitionStatus.newBuilder()
                .setSourceCluster("A").setTargetCluster("B").setSourceTopic("orders").setPartition(1)
                .setTargetTopic("orders").setState(MirrorPartitionState.MIRROR_PARTITION_STOPPED).setRecordsBehind(3)
                .setStopReason(MirrorStopReason.newBuilder().setSourceOffsetKnown(true).setSourceOffset(5)
                        .setCode(ErrorCode.RECORD_TOO_LARGE).setMessage("too large"))).build();
        MirrorStateRecord noPartition = MirrorStateRecord.newBuilder().setStatus(MirrorPartitionStatus.newBuilder()
                .setSourceCluster("A").setTargetCluster("B").setSourceTopic("orders").setPartition(2)
                .setTargetTopic("orders").setState(MirrorPartitionState.MIRROR_PARTITION_STOPPED).setRecordsBehind(40)
                .setStopReason(MirrorStopReason.newBuilder().setCode(ErrorCode.UNKNOWN_PARTITION)
                        .setMessage("target topic orders has 2 partitions, fewer than the 3 of source topic orders")))
                .build();
        FailoverPlan plan = planner.plan(state(CHECKPOINT_0, CHECKPOINT_1, HEARTBEATS[2], refused, noPartition),
                request(TimeChoice.none(), OptionalLong.empty()), NOW_MS);

        assertEquals(Optional.empty(), plan.partitions().get(0).stopped());
        assertEquals(Optional.of(new FailoverPlan.MirrorStopped("orders", 1, OptionalLong.of(5), "RECORD_TOO_LARGE",
                "too large", 3)), plan.partitions().get(1).stopped());
        assertEquals(List.of(new FailoverPlan.MirrorStopped("orders", 2, OptionalLong.empty(), "UNKNOWN_PARTITION",
                "target topic orders has 2 partitions, fewer than the 3 of source topic orders", 40)), plan.uncopied());
        assertEquals(3 + 40, plan.totals().notCopied(), "orders-1's 3 records behind and all 40 of orders-2");
    }

    @Test
    void aTimeInTheFutureIsRefused() {
        assertEquals("--time 2023-11-14T22:14:20.001Z is in the future (now is 2023-11-14T22:14:20.000Z): T is a "
                + "time the source cluster reached before it went silent", assertThrows(IllegalArgumentException.class,
                () -> planner.plan(fullState(), request(TimeChoice.given(NOW_MS + 1), OptionalLong.empty()), NOW_MS))
                .getMessage());
    }

    @Test
    void anUnknownSourceIsRefusedNamingTheKnownOnes() {
        MirrorState.Collector collector = new MirrorState.Collector("C", "g");
        collector.add(CHECKPOINT_0);
        assertEquals("cluster 'C' left nothing on the target: no checkpoint and no heartbeat of it in __mirror_state "
                + "(clusters there: A); --source-name is the name its mirror was given",
                assertThrows(IllegalArgumentException.class, () -> planner.plan(collector.state(),
                        new FailoverRequest("C", "g", TimeChoice.none(), OptionalLong.empty(), List.of()), NOW_MS))
                        .getMessage());
    }

    @Test
    void anUnknownGroupIsRefusedNamingTheCheckpointedOnes() {
        MirrorState.Collector collector = new MirrorState.Collector("A", "h");
        collector.add(CHECKPOINT_0);
        TidemarkException e = assertThrows(TidemarkException.class, () -> planner.plan(collector.state(),
                new FailoverRequest("A", "h", TimeChoice.given(BASE_MS), OptionalLong.empty(), List.of()), NOW_MS));
        assertEquals(ErrorCode.UNKNOWN_GROUP, e.code());
        assertEquals("group 'h' has no checkpoint from cluster A on the target (groups with checkpoints from A: g); the "
                + "mirror checkpoints the groups that match its --groups. To move a group without checkpoints by time, "
                + "name its topics with --topic", e.getMessage());
    }

    @Test
    void aPartitionWithNoCheckpointAndNoTimeIsRefused() {
        assertEquals("orders-1 has no checkpoint of group 'g', and no heartbeat of cluster A on the target tells when "
                + "the source went silent: give --time TIME", assertThrows(IllegalArgumentException.class,
                () -> planner.plan(state(CHECKPOINT_0), request(TimeChoice.none(), OptionalLong.empty()), NOW_MS))
                .getMessage());
    }

    @Test
    void autoWithoutLatenciesIsRefused() {
        assertEquals("--buffer auto derives X from the mirror's latencies, but no heartbeat of cluster A on the target "
                + "reports records copied; give --buffer DURATION (seed 000's example is 15m)",
                assertThrows(IllegalArgumentException.class, () -> planner.plan(state(CHECKPOINT_0, HEARTBEATS[2]),
                        request(TimeChoice.lastConsumed(), OptionalLong.empty()), NOW_MS)).getMessage());
    }

    @Test
    void anUnknownTopicIsTheTargetsError() {
        assertEquals(ErrorCode.UNKNOWN_TOPIC, assertThrows(TidemarkException.class, () -> planner.plan(fullState(),
                request(TimeChoice.none(), OptionalLong.empty(), "nope"), NOW_MS)).code());
    }
}
