package io.tidemark.mirror.status;

import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorPartitionState;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStateRecord;
import io.tidemark.proto.v1.MirrorStopReason;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** What the collector keeps of __mirror_state's records, fed in log order as the reader feeds them. */
class MirrorStatusTest {
    static MirrorHeartbeat heartbeat(String source, long atMs, long heardMs) {
        return MirrorHeartbeat.newBuilder().setSourceCluster(source).setTargetCluster("B").setMirrorTimeMs(atMs)
                .setLastHeardFromSourceMs(heardMs).build();
    }

    static MirrorPartitionStatus copying(String source, String topic, int partition, long behind, long atMs) {
        return MirrorPartitionStatus.newBuilder().setSourceCluster(source).setTargetCluster("B")
                .setSourceTopic(topic).setPartition(partition).setTargetTopic(topic)
                .setState(MirrorPartitionState.MIRROR_PARTITION_COPYING).setRecordsBehind(behind)
                .setSourceLogEndOffset(100).setLastOriginOffsetKnown(true).setLastOriginOffset(99 - behind)
                .setLastCopyReceiveTimeMs(atMs - 10).setStatusTimeMs(atMs).build();
    }

    static MirrorPartitionStatus stopped(String source, String topic, int partition, long atMs) {
        return copying(source, topic, partition, 3, atMs).toBuilder()
                .setState(MirrorPartitionState.MIRROR_PARTITION_STOPPED).setStopReason(MirrorStopReason.newBuilder()
                        .setSourceOffsetKnown(true).setSourceOffset(97).setCode(ErrorCode.RECORD_TOO_LARGE)
                        .setMessage("batch of 600000 bytes is above max.batch.bytes 524288").setStoppedTimeMs(atMs))
                .build();
    }

    private static MirrorStatus collect(Optional<String> source, List<MirrorStateRecord> records) {
        MirrorStatus.Collector collector = new MirrorStatus.Collector(source);
        records.forEach(collector::add);
        return collector.status();
    }

    private static MirrorStateRecord record(MirrorHeartbeat heartbeat) {
        return MirrorStateRecord.newBuilder().setHeartbeat(heartbeat).build();
    }

    private static MirrorStateRecord record(MirrorPartitionStatus status) {
        return MirrorStateRecord.newBuilder().setStatus(status).build();
    }

    @Test
    void theLatestHeartbeatOfEachSourceAndStatusOfEachPartitionCount() {
        List<MirrorStateRecord> records = List.of(record(heartbeat("A", 1_000, 900)),
                record(copying("A", "orders", 1, 50, 1_000)), record(copying("A", "orders", 0, 40, 1_000)),
                record(copying("C", "orders", 0, 0, 1_100)), record(heartbeat("A", 2_000, 1_900)),
                record(stopped("A", "orders", 1, 2_000)), record(copying("A", "audit", 0, 0, 2_000)),
                MirrorStateRecord.newBuilder().setCheckpoint(MirrorCheckpoint.newBuilder().setSourceCluster("D"))
                        .build());
        assertEquals(new MirrorStatus(List.of(
                new MirrorStatus.SourceStatus("A", Optional.of(heartbeat("A", 2_000, 1_900)), List.of(
                        copying("A", "audit", 0, 0, 2_000), copying("A", "orders", 0, 40, 1_000),
                        stopped("A", "orders", 1, 2_000))),
                new MirrorStatus.SourceStatus("C", Optional.empty(), List.of(copying("C", "orders", 0, 0, 1_100))))),
                collect(Optional.empty(), records), "by source, then source topic and partition; D left checkpoints "
                        + "only");
        assertEquals(List.of("C"), collect(Optional.of("C"), records).sources().stream()
                .map(MirrorStatus.SourceStatus::sourceCluster).toList());
        assertEquals(Optional.of("B"), collect(Optional.of("C"), records).sources().get(0).targetCluster(),
                "from its partition statuses, without a heartbeat");
    }

    @Test
    void aSourceThatLeftNothingIsAnErrorNamingTheSourcesThere() {
        List<MirrorStateRecord> records = List.of(record(heartbeat("A", 1_000, 900)),
                MirrorStateRecord.newBuilder().setCheckpoint(MirrorCheckpoint.newBuilder().setSourceCluster("C"))
                        .build());
        assertEquals("no mirror from cluster X left a heartbeat or partition status in the target's __mirror_state "
                + "(sources there: A, C)", assertThrows(IllegalArgumentException.class,
                () -> collect(Optional.of("X"), records)).getMessage());
        assertEquals("the target's __mirror_state holds no heartbeat or partition status: no mirror writes to this "
                + "cluster, or none did within its retention", assertThrows(IllegalArgumentException.class,
                () -> collect(Optional.empty(), List.of())).getMessage());
    }
}
