package io.tidemark.proto.mirror;

import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MirrorGap;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorPartitionState;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStateRecord;
import io.tidemark.proto.v1.MirrorStopReason;
import io.tidemark.proto.v1.PartitionBehind;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.UUID;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of the __mirror_state records. */
class MirrorStateFormatTest {
    private static final MirrorCheckpoint CHECKPOINT = MirrorCheckpoint.newBuilder().setSourceCluster("A")
            .setTargetCluster("B").setGroup("g").setSourceTopic("t").setPartition(1).setTargetTopic("t")
            .setSourceOffset(100).setTargetOffset(90).setLastConsumedKnown(true).setLastConsumedSendTimeMs(5)
            .setLastConsumedReceiveTimeMs(6).setCheckpointTimeMs(7).build();

    @Test
    void checkpointKeyAndValue() {
        assertEquals("checkpoint/A/g/t/1", new String(MirrorStateFormat.key(CHECKPOINT), UTF_8));
        assertEquals(String.join("",
                "0a", "1d", // field 1 (checkpoint), length 29
                "0a0141", "120142", "1a0167", "220174", "2801", "320174", // clusters, group, topic, partition, target
                "3864", "485a", "5801", "6005", "6806", "7007"), // offsets 100 and 90, last consumed, times
                HexFormat.of().formatHex(MirrorStateFormat.value(CHECKPOINT)));
        assertEquals(CHECKPOINT, MirrorStateFormat.parse(MirrorStateFormat.value(CHECKPOINT)).getCheckpoint());
    }

    @Test
    void checkpointWithThePreviousReading() {
        MirrorCheckpoint checkpoint = CHECKPOINT.toBuilder().setPreviousKnown(true).setPreviousSourceOffset(80)
                .setPreviousSourceCommitTimeMs(3).build();
        assertEquals(String.join("",
                "0a", "25", // field 1 (checkpoint), length 37
                "0a0141", "120142", "1a0167", "220174", "2801", "320174",
                "3864", "485a", "5801", "6005", "6806", "7007",
                "7801", "800150", "880103"), // field 15 (previous known), 16 (offset 80), 17 (commit time 3)
                HexFormat.of().formatHex(MirrorStateFormat.value(checkpoint)));
        assertEquals(checkpoint, MirrorStateFormat.parse(MirrorStateFormat.value(checkpoint)).getCheckpoint());
    }

    @Test
    void checkpointWithTheSourceTopicsId() {
        MirrorCheckpoint checkpoint = CHECKPOINT.toBuilder().setSourceTopicId(TopicIds.toBytes(
                UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95"))).build();
        assertEquals(String.join("",
                "0a", "30", // field 1 (checkpoint), length 48
                "0a0141", "120142", "1a0167", "220174", "2801", "320174",
                "3864", "485a", "5801", "6005", "6806", "7007",
                "9201", "10", "0e4f7c2a5b1d4e8f9a3c6d2b1f0a7e95"), // field 18 (source topic id), 16 bytes
                HexFormat.of().formatHex(MirrorStateFormat.value(checkpoint)));
        assertEquals(checkpoint, MirrorStateFormat.parse(MirrorStateFormat.value(checkpoint)).getCheckpoint());
    }

    @Test
    void heartbeatKeyAndValue() {
        MirrorHeartbeat heartbeat = MirrorHeartbeat.newBuilder().setSourceCluster("A").setTargetCluster("B")
                .setMirrorTimeMs(2).setLastHeardFromSourceMs(1).addPartitionsBehind(PartitionBehind.newBuilder()
                        .setSourceTopic("t").setPartition(1).setTargetTopic("u").setRecords(3)).build();
        assertEquals("heartbeat/A", new String(MirrorStateFormat.key(heartbeat), UTF_8));
        assertEquals(String.join("",
                "1216", // field 2 (heartbeat), length 22
                "0a0141", "120142", "1802", "2001", // clusters, mirror time 2, last heard 1
                "620a", "0a0174", "1001", "1a0175", "2003"), // field 12 (partitions behind): t-1 to u, 3 records
                HexFormat.of().formatHex(MirrorStateFormat.value(heartbeat)));
        assertEquals(heartbeat, MirrorStateFormat.parse(MirrorStateFormat.value(heartbeat)).getHeartbeat());
    }

    @Test
    void statusKeyAndValue() {
        MirrorPartitionStatus status = MirrorPartitionStatus.newBuilder().setSourceCluster("A").setTargetCluster("B")
                .setSourceTopic("t").setPartition(1).setTargetTopic("u").setState(MirrorPartitionState
                        .MIRROR_PARTITION_STOPPED).setRecordsBehind(3).setSourceLogEndOffset(9)
                .setLastOriginOffsetKnown(true).setLastOriginOffset(5).setLastCopyReceiveTimeMs(7)
                .setStatusTimeMs(8).setStopReason(MirrorStopReason.newBuilder().setSourceOffsetKnown(true)
                        .setSourceOffset(6).setCode(ErrorCode.RECORD_TOO_LARGE).setMessage("m").setStoppedTimeMs(8))
                .build();
        assertEquals("status/A/t/1", new String(MirrorStateFormat.key(status), UTF_8));
        assertEquals(String.join("",
                "1a29", // field 3 (status), length 41
                "0a0141", "120142", "1a0174", "2001", "2a0175", // clusters, source topic, partition 1, target topic
                "3003", "3803", "4009", "4801", "5005", // stopped, 3 behind, log end 9, last origin offset 5 known
                "5807", "6008", // last copy ReceiveTime 7, status time 8
                "6a0b", "0801", "1006", "1803", "22016d", "2808"), // stop reason: offset 6, RECORD_TOO_LARGE, "m", 8
                HexFormat.of().formatHex(MirrorStateFormat.value(status)));
        assertEquals(status, MirrorStateFormat.parse(MirrorStateFormat.value(status)).getStatus());
    }

    @Test
    void checkpointOfAPartitionWithoutCommit() {
        MirrorCheckpoint checkpoint = MirrorCheckpoint.newBuilder().setSourceCluster("A").setTargetCluster("B")
                .setGroup("g").setSourceTopic("t").setPartition(1).setTargetTopic("t").setCheckpointTimeMs(7)
                .setNoCommit(true).build();
        assertEquals("checkpoint/A/g/t/1", new String(MirrorStateFormat.key(checkpoint), UTF_8));
        assertEquals(String.join("",
                "0a", "16", // field 1 (checkpoint), length 22
                "0a0141", "120142", "1a0167", "220174", "2801", "320174", "7007",
                "980101"), // field 19 (no commit)
                HexFormat.of().formatHex(MirrorStateFormat.value(checkpoint)));
    }

    @Test
    void gapKeyAndValue() {
        MirrorGap gap = MirrorGap.newBuilder().setSourceCluster("A").setTargetCluster("B").setSourceTopic("t")
                .setPartition(1).setTargetTopic("u").setFromOffset(100).setToOffset(300).setRecordedTimeMs(7).build();
        assertEquals("gap/A/t/1/100", new String(MirrorStateFormat.key(gap), UTF_8));
        assertEquals(String.join("",
                "22", "15", // field 4 (gap), length 21
                "0a0141", "120142", "1a0174", "2001", "2a0175", // clusters, t-1 to u
                "3064", "38ac02", "4007"), // offsets 100 to 300, recorded at 7
                HexFormat.of().formatHex(MirrorStateFormat.value(gap)));
        assertEquals(gap, MirrorStateFormat.parse(MirrorStateFormat.value(gap)).getGap());
    }

    @Test
    void aKindThisReaderDoesNotKnowIsKept() {
        byte[] later = HexFormat.of().parseHex("fa0102" + "0801"); // field 31, length 2: a kind of a later mirror
        assertEquals(MirrorStateRecord.RecordCase.RECORD_NOT_SET, MirrorStateFormat.parse(later).getRecordCase());
    }

    @Test
    void aValueOfNoKindIsRefused() {
        assertEquals("a __mirror_state record holds none of its kinds",
                assertThrows(IllegalArgumentException.class,
                        () -> MirrorStateFormat.parse(MirrorStateRecord.getDefaultInstance().toByteArray())).getMessage());
    }
}
