package io.tidemark.mirror.failover;

import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.failover.FailoverPlan.ByTime;
import io.tidemark.mirror.failover.FailoverPlan.Exact;
import io.tidemark.mirror.failover.FailoverPlan.Lost;
import io.tidemark.mirror.failover.FailoverPlan.MirrorStopped;
import io.tidemark.mirror.failover.FailoverPlan.PartitionPlan;
import io.tidemark.mirror.failover.FailoverPlan.RecordTimes;
import io.tidemark.mirror.failover.FailoverPlan.Skipped;
import io.tidemark.mirror.failover.FailoverPlan.TimeSource;
import io.tidemark.mirror.failover.FailoverPlan.Uncommitted;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import static io.tidemark.mirror.failover.MirrorStates.BASE_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Golden text and JSON of failover plans. */
class FailoverPlanFormatTest {
    /**
     * An exact row with the group's rate, made while the mirror was behind, resuming past its checkpoint's offset, one
     * by time that skips records and the mirror stopped copying, an exact one
     * without rate whose
     * checkpoint's target offset was corrected, one left uncommitted, and one by time without checkpoint.
     */
    private static final List<PartitionPlan> ROWS = List.of(
            new PartitionPlan(new TopicPartition("orders", 0), OptionalLong.of(6), 10, Optional.of(new RecordTimes(
                    BASE_MS + 6_050, BASE_MS + 6_000)), 3, OptionalLong.of(4), Skipped.NONE, Lost.NONE,
                    new Exact("orders", 6, BASE_MS + 6_500, BASE_MS + 7_000, true,
                            Optional.of(new CommitRate(2, 2_000)), OptionalLong.of(4)), Optional.empty()),
            new PartitionPlan(new TopicPartition("orders", 1), OptionalLong.of(5), 5, Optional.empty(), 0,
                    OptionalLong.empty(), new Skipped(2, true), new Lost(3, 0, 0),
                    new ByTime(BASE_MS + 9_500, TimeSource.SOURCE_SILENT, BASE_MS + 8_000, OptionalLong.of(3)),
                    Optional.of(new MirrorStopped("orders", 1, OptionalLong.of(5), "RECORD_TOO_LARGE", "too large", 3))),
            new PartitionPlan(new TopicPartition("orders", 2), OptionalLong.of(3), 10, Optional.of(new RecordTimes(
                    BASE_MS + 3_050, BASE_MS + 3_000)), 7, OptionalLong.of(7), Skipped.NONE, new Lost(0, 4, 1),
                    new Exact("orders", 3, BASE_MS + 3_500, BASE_MS + 4_000, true, Optional.empty(),
                            OptionalLong.of(8)), Optional.empty()),
            new PartitionPlan(new TopicPartition("orders", 3), OptionalLong.empty(), 12, Optional.empty(), 0,
                    OptionalLong.empty(), Skipped.NONE, Lost.NONE, new Uncommitted(BASE_MS + 9_000), Optional.empty()),
            new PartitionPlan(new TopicPartition("orders", 4), OptionalLong.of(20), 30, Optional.of(new RecordTimes(
                    BASE_MS + 8_100, BASE_MS + 8_000)), 2, OptionalLong.empty(), new Skipped(20, false), Lost.NONE,
                    new ByTime(BASE_MS + 9_500, TimeSource.SOURCE_SILENT, BASE_MS + 8_000, OptionalLong.empty()), Optional.empty()));
    private static final String HEADER = "TOPIC                    PARTITION MODE            OFFSET          LOG-END "
            + "RECEIVE-TIME             SEND-TIME                           RE-READ    SKIPPED       LOST  BASIS";
    private static final FailoverPlan PLAN = new FailoverPlan("g", "A", "B", BASE_MS + 60_000,
            OptionalLong.of(BASE_MS + 9_500), OptionalLong.of(BASE_MS + 12_000), 3,
            Optional.of(new Buffer(1_500, Optional.of(new LatencySample(-200, 1_100, 15, 2, BASE_MS + 5_000,
                    BASE_MS + 9_000)))), ROWS, List.of(new MirrorStopped("orders", 5, OptionalLong.empty(),
            "UNKNOWN_PARTITION", "target topic orders has 5 partitions, fewer than the 6 of source topic orders", 40)),
            List.of(new FailoverPlan.TargetMember("m1", "billing-1", "10.0.0.9:50000", List.of(
                    new TopicPartition("orders", 0), new TopicPartition("orders", 3))),
                    new FailoverPlan.TargetMember("m2", "billing-2", "10.0.0.8:50001", List.of())));

    @Test
    void text() {
        assertEquals(String.join("\n",
                "Failover of group g from cluster A to cluster B, planned at 2023-11-14T22:14:20.000Z",
                "Source A: the mirror last heard from it at 2023-11-14T22:13:29.500Z (last heartbeat "
                        + "2023-11-14T22:13:32.000Z); 3 records not copied, lost with it",
                "Buffer X: 1.500 s (auto) = 0.200 s the target's clock ran behind the source's + 1.300 s spread of the "
                        + "mirror's latency (-0.200 s to 1.100 s over 15 records in 2 heartbeats, "
                        + "2023-11-14T22:13:25.000Z to 2023-11-14T22:13:29.000Z)",
                HEADER,
                "orders                           0 exact                6               10 2023-11-14T22:13:26.050Z "
                        + "2023-11-14T22:13:26.000Z          ~3 (<= 4)          0          0  checkpoint: source "
                        + "offset 6 committed 2023-11-14T22:13:26.500Z, made 2.500 s before the source went silent, "
                        + "the mirror was behind the group, group rate 1.000 records/s, its target offset 4 was where "
                        + "the copies went on; all up to the copy of the committed offset were consumed on the source: "
                        + "found at 6",
                "orders                           1 time                 5                5 -                        "
                        + "-                                        ~0          2          3  T 2023-11-14T22:13:29.500Z "
                        + "(source-silent), T - X 2023-11-14T22:13:28.000Z, checkpoint position 3; the mirror stopped "
                        + "copying it at source offset 5: RECORD_TOO_LARGE: too large",
                "orders                           2 exact                3               10 2023-11-14T22:13:23.050Z "
                        + "2023-11-14T22:13:23.000Z               <= 7          0          5  checkpoint: source "
                        + "offset 3 committed 2023-11-14T22:13:23.500Z, made 5.500 s before the source went silent, "
                        + "the mirror was behind the group, group rate unknown, its target offset 8 did not hold the "
                        + "copy: found at 3; removed by retention: 4 on A before copied, 1 on B",
                "orders                           3 none                 -               12 -                        "
                        + "-                                         -          0          0  no commit on A, checkpoint "
                        + "made 0.500 s before the source went silent: left uncommitted, the group's auto.offset.reset "
                        + "applies",
                "orders                           4 time                20               30 2023-11-14T22:13:28.100Z "
                        + "2023-11-14T22:13:28.000Z                 ~2      <= 20          0  T "
                        + "2023-11-14T22:13:29.500Z (source-silent), T - X 2023-11-14T22:13:28.000Z, no checkpoint: "
                        + "position unknown",
                "Not copied at all: orders-5 of A, 40 records: UNKNOWN_PARTITION: target topic orders has 5 partitions, "
                        + "fewer than the 6 of source topic orders",
                "Group g: re-reads ~12, skipped <= 22 (apply skips them only with --allow-skip), lost 48 (43 not "
                        + "copied, 5 removed by retention)",
                "Members of group g on the target: m1 (client billing-1, host 10.0.0.9:50000, assigned "
                        + "orders-0,orders-3); m2 (client billing-2, host 10.0.0.8:50001, assigned nothing) (apply is "
                        + "refused while there are any)",
                ""), FailoverPlanFormat.text(PLAN));
    }

    @Test
    void textWithAGivenBufferAndNoHeartbeat() {
        FailoverPlan plan = new FailoverPlan("g", "A", "", BASE_MS, OptionalLong.empty(), OptionalLong.empty(), 0,
                Optional.of(new Buffer(900_000, Optional.empty())), List.of(), List.of(), List.of());
        assertEquals(String.join("\n",
                "Failover of group g from cluster A to the target, planned at 2023-11-14T22:13:20.000Z",
                "Source A: no heartbeat on the target, records not copied unknown",
                "Buffer X: 900.000 s (--buffer)",
                HEADER,
                "Group g: re-reads ~0, skipped 0, lost 0 (0 not copied, 0 removed by retention)",
                "Members of group g on the target: none",
                ""), FailoverPlanFormat.text(plan));
    }

    @Test
    void whatApplyDidEndsTheTextAndIsAFieldOfTheJson() {
        FailoverPlan plan = new FailoverPlan("g", "A", "B", BASE_MS, OptionalLong.empty(), OptionalLong.empty(), 0,
                Optional.empty(), List.of(ROWS.get(0)), List.of(), List.of());
        FailoverCommitter.Decision committed = new FailoverCommitter.Decision(Map.of(ROWS.get(0).partition(),
                new OffsetAndMetadata(6)), false);
        FailoverCommitter.Decision unchanged = new FailoverCommitter.Decision(committed.offsets(), true);

        assertEquals(FailoverPlanFormat.text(plan) + "Committed the plan's offsets for group g on the target\n",
                FailoverPlanFormat.text(plan, committed));
        assertEquals(FailoverPlanFormat.text(plan) + "Already applied: group g has these offsets on the target; nothing "
                + "written\n", FailoverPlanFormat.text(plan, unchanged));
        String json = FailoverPlanFormat.json(plan);
        assertEquals(json.substring(0, json.length() - 1) + ",\"applied\":\"committed\"}",
                FailoverPlanFormat.json(plan, committed));
        assertEquals(json.substring(0, json.length() - 1) + ",\"applied\":\"unchanged\"}",
                FailoverPlanFormat.json(plan, unchanged));
    }

    @Test
    void json() {
        assertEquals("{\"group\":\"g\",\"sourceCluster\":\"A\",\"targetCluster\":\"B\",\"plannedAt\":1700000060000,"
                + "\"sourceLastHeard\":1700000009500,\"lastHeartbeat\":1700000012000,\"notCopied\":3,"
                + "\"buffer\":{\"ms\":1500,\"derivation\":\"auto\",\"targetBehindMs\":200,\"spreadMs\":1300,"
                + "\"latencyMinMs\":-200,\"latencyMaxMs\":1100,\"records\":15,\"heartbeats\":2,"
                + "\"from\":1700000005000,\"to\":1700000009000},"
                + "\"partitions\":[{\"topic\":\"orders\",\"partition\":0,\"mode\":\"exact\",\"offset\":6,"
                + "\"logEndOffset\":10,\"receiveTime\":1700000006050,\"sendTime\":1700000006000,\"rereads\":3,"
                + "\"rereadsKind\":\"estimate\",\"rereadsAtMost\":4,\"skipped\":0,\"skippedPositionKnown\":true,"
                + "\"notCopied\":0,\"removedBySource\":0,\"removedOnTarget\":0,"
                + "\"checkpoint\":{\"sourceTopic\":\"orders\",\"sourceOffset\":6,\"sourceCommitTime\":1700000006500,"
                + "\"checkpointTime\":1700000007000,\"mirrorBehind\":true,\"commitRecordsPerSecond\":1.0,"
                + "\"checkpointOffset\":4},\"time\":null,\"uncommitted\":null,\"mirrorStopped\":null},"
                + "{\"topic\":\"orders\",\"partition\":1,\"mode\":\"time\",\"offset\":5,\"logEndOffset\":5,"
                + "\"receiveTime\":null,\"sendTime\":null,\"rereads\":0,\"rereadsKind\":\"estimate\","
                + "\"rereadsAtMost\":null,\"skipped\":2,\"skippedPositionKnown\":true,\"notCopied\":3,"
                + "\"removedBySource\":0,\"removedOnTarget\":0,\"checkpoint\":null,"
                + "\"time\":{\"time\":1700000009500,\"timeFrom\":\"source-silent\",\"lookupTime\":1700000008000,"
                + "\"position\":3},\"uncommitted\":null,\"mirrorStopped\":{\"sourceTopic\":\"orders\",\"partition\":1,"
                + "\"sourceOffset\":5,\"code\":\"RECORD_TOO_LARGE\",\"message\":\"too large\",\"records\":3}},"
                + "{\"topic\":\"orders\",\"partition\":2,\"mode\":\"exact\",\"offset\":3,"
                + "\"logEndOffset\":10,\"receiveTime\":1700000003050,\"sendTime\":1700000003000,\"rereads\":7,"
                + "\"rereadsKind\":\"at-most\",\"rereadsAtMost\":7,\"skipped\":0,\"skippedPositionKnown\":true,"
                + "\"notCopied\":0,\"removedBySource\":4,\"removedOnTarget\":1,"
                + "\"checkpoint\":{\"sourceTopic\":\"orders\",\"sourceOffset\":3,\"sourceCommitTime\":1700000003500,"
                + "\"checkpointTime\":1700000004000,\"mirrorBehind\":true,\"commitRecordsPerSecond\":null,"
                + "\"checkpointOffset\":8},\"time\":null,\"uncommitted\":null,\"mirrorStopped\":null},"
                + "{\"topic\":\"orders\",\"partition\":3,\"mode\":\"none\",\"offset\":null,\"logEndOffset\":12,"
                + "\"receiveTime\":null,\"sendTime\":null,\"rereads\":0,\"rereadsKind\":\"estimate\","
                + "\"rereadsAtMost\":null,\"skipped\":0,\"skippedPositionKnown\":true,\"notCopied\":0,"
                + "\"removedBySource\":0,\"removedOnTarget\":0,\"checkpoint\":null,\"time\":null,"
                + "\"uncommitted\":{\"checkpointTime\":1700000009000},\"mirrorStopped\":null},"
                + "{\"topic\":\"orders\",\"partition\":4,\"mode\":\"time\",\"offset\":20,\"logEndOffset\":30,"
                + "\"receiveTime\":1700000008100,\"sendTime\":1700000008000,\"rereads\":2,\"rereadsKind\":\"estimate\","
                + "\"rereadsAtMost\":null,\"skipped\":20,\"skippedPositionKnown\":false,\"notCopied\":0,"
                + "\"removedBySource\":0,\"removedOnTarget\":0,\"checkpoint\":null,"
                + "\"time\":{\"time\":1700000009500,\"timeFrom\":\"source-silent\",\"lookupTime\":1700000008000,"
                + "\"position\":null},\"uncommitted\":null,\"mirrorStopped\":null}],"
                + "\"uncopied\":[{\"sourceTopic\":\"orders\",\"partition\":5,\"sourceOffset\":null,"
                + "\"code\":\"UNKNOWN_PARTITION\",\"message\":\"target topic orders has 5 partitions, fewer than the 6 of "
                + "source topic orders\",\"records\":40}],"
                + "\"totals\":{\"rereads\":12,\"skipped\":22,\"skippedPositionKnown\":false,\"notCopied\":43,"
                + "\"removed\":5},\"targetMembers\":[{\"memberId\":\"m1\",\"clientId\":\"billing-1\","
                + "\"host\":\"10.0.0.9:50000\",\"assigned\":[\"orders-0\",\"orders-3\"]},{\"memberId\":\"m2\","
                + "\"clientId\":\"billing-2\",\"host\":\"10.0.0.8:50001\",\"assigned\":[]}]}",
                FailoverPlanFormat.json(PLAN));
    }
}
