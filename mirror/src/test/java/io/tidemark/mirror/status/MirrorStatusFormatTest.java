package io.tidemark.mirror.status;

import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MirrorPartitionState;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStopReason;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static io.tidemark.mirror.status.MirrorStatusTest.copying;
import static io.tidemark.mirror.status.MirrorStatusTest.heartbeat;
import static io.tidemark.mirror.status.MirrorStatusTest.stopped;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Golden text and JSON of tidemark mirror status. */
class MirrorStatusFormatTest {
    private static final long T = 1_700_000_000_000L;
    private static final MirrorPartitionStatus UNCOPYABLE = MirrorPartitionStatus.newBuilder().setSourceCluster("C")
            .setTargetCluster("B").setSourceTopic("t").setPartition(2).setTargetTopic("t")
            .setState(MirrorPartitionState.MIRROR_PARTITION_STOPPED).setRecordsBehind(7).setSourceLogEndOffset(7)
            .setStatusTimeMs(T).setStopReason(MirrorStopReason.newBuilder().setCode(ErrorCode.UNKNOWN_PARTITION)
                    .setMessage("target topic t has 2 partitions, fewer than the 3 of source topic t; partition p is "
                            + "copied to partition p").setStoppedTimeMs(T)).build();
    private static final MirrorStatus STATUS = new MirrorStatus(List.of(
            new MirrorStatus.SourceStatus("A", Optional.of(heartbeat("A", T + 2_000, T + 1_900)), List.of(
                    copying("A", "orders", 0, 0, T), stopped("A", "orders", 1, T + 1_000))),
            new MirrorStatus.SourceStatus("C", Optional.of(heartbeat("C", T, 0)), List.of(UNCOPYABLE))));

    @Test
    void text() {
        assertEquals(String.join("\n",
                "Mirror A -> B: last heartbeat 2023-11-14T22:13:22.000Z, last heard from the source "
                        + "2023-11-14T22:13:21.900Z; 2 partitions: 1 copying, 0 resynchronising, 1 stopped",
                "SOURCE-TOPIC             PARTITION TARGET-TOPIC             STATE                 BEHIND "
                        + "LAST-COPY                LAST-ORIGIN-OFFSET  REASON",
                "orders                           0 orders                   copying                    0 "
                        + "2023-11-14T22:13:19.990Z                 99  -",
                "orders                           1 orders                   stopped                    3 "
                        + "2023-11-14T22:13:20.990Z                 96  RECORD_TOO_LARGE at source offset 97, stopped "
                        + "2023-11-14T22:13:21.000Z: batch of 600000 bytes is above max.batch.bytes 524288",
                "",
                "Mirror C -> B: last heartbeat 2023-11-14T22:13:20.000Z, last heard from the source never; 1 "
                        + "partition: 0 copying, 0 resynchronising, 1 stopped",
                "SOURCE-TOPIC             PARTITION TARGET-TOPIC             STATE                 BEHIND "
                        + "LAST-COPY                LAST-ORIGIN-OFFSET  REASON",
                "t                                2 t                        stopped                    7 -           "
                        + "                              -  UNKNOWN_PARTITION, stopped 2023-11-14T22:13:20.000Z: "
                        + "target "
                        + "topic t has 2 partitions, fewer than the 3 of source topic t; partition p is copied to "
                        + "partition p",
                ""), MirrorStatusFormat.text(STATUS));
    }

    @Test
    void jsonIsOneObjectPerSourceALine() {
        assertEquals(String.join("\n",
                "{\"sourceCluster\":\"A\",\"targetCluster\":\"B\",\"lastHeartbeat\":1700000002000,"
                        + "\"lastHeardFromSource\":1700000001900,\"partitions\":[{\"sourceTopic\":\"orders\","
                        + "\"partition\":0,\"targetTopic\":\"orders\",\"state\":\"copying\",\"recordsBehind\":0,"
                        + "\"sourceLogEndOffset\":100,\"lastCopyTime\":1699999999990,\"lastOriginOffset\":99,"
                        + "\"statusTime\":1700000000000,\"stopReason\":null},{\"sourceTopic\":\"orders\","
                        + "\"partition\":1,\"targetTopic\":\"orders\",\"state\":\"stopped\",\"recordsBehind\":3,"
                        + "\"sourceLogEndOffset\":100,\"lastCopyTime\":1700000000990,\"lastOriginOffset\":96,"
                        + "\"statusTime\":1700000001000,\"stopReason\":{\"sourceOffset\":97,\"code\":"
                        + "\"RECORD_TOO_LARGE\",\"message\":\"batch of 600000 bytes is above max.batch.bytes 524288\","
                        + "\"stoppedTime\":1700000001000}}]}",
                "{\"sourceCluster\":\"C\",\"targetCluster\":\"B\",\"lastHeartbeat\":1700000000000,"
                        + "\"lastHeardFromSource\":null,\"partitions\":[{\"sourceTopic\":\"t\",\"partition\":2,"
                        + "\"targetTopic\":\"t\",\"state\":\"stopped\",\"recordsBehind\":7,\"sourceLogEndOffset\":7,"
                        + "\"lastCopyTime\":null,\"lastOriginOffset\":null,\"statusTime\":1700000000000,"
                        + "\"stopReason\":{\"sourceOffset\":null,\"code\":\"UNKNOWN_PARTITION\",\"message\":\"target "
                        + "topic t has 2 partitions, fewer than the 3 of source topic t; partition p is copied to "
                        + "partition p\",\"stoppedTime\":1700000000000}}]}",
                ""), MirrorStatusFormat.json(STATUS));
    }
}
