package io.tidemark.mirror.failover;

import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorGap;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorStateRecord;
import io.tidemark.proto.v1.PartitionBehind;

import java.util.UUID;

/** Builders of __mirror_state records for the failover tests: mirror A -> B, group g, topic orders. */
final class MirrorStates {
    /** 2023-11-14T22:13:20Z. */
    static final long BASE_MS = 1_700_000_000_000L;
    /** The id of topic orders on A. */
    static final UUID ORDERS_ID = UUID.fromString("0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95");

    private MirrorStates() {
    }

    static MirrorCheckpoint.Builder checkpoint(int partition, long sourceOffset, long targetOffset) {
        return MirrorCheckpoint.newBuilder().setSourceCluster("A").setTargetCluster("B").setGroup("g")
                .setSourceTopic("orders").setSourceTopicId(TopicIds.toBytes(ORDERS_ID)).setPartition(partition)
                .setTargetTopic("orders").setSourceOffset(sourceOffset).setTargetOffset(targetOffset);
    }

    /** A checkpoint saying the group has no committed offset on {@code partition}, made at {@code checkpointMs}. */
    static MirrorCheckpoint.Builder noCommit(int partition, long checkpointMs) {
        return MirrorCheckpoint.newBuilder().setSourceCluster("A").setTargetCluster("B").setGroup("g")
                .setSourceTopic("orders").setSourceTopicId(TopicIds.toBytes(ORDERS_ID)).setPartition(partition)
                .setTargetTopic("orders").setCheckpointTimeMs(checkpointMs).setNoCommit(true);
    }

    /** A heartbeat of A at {@code mirrorTimeMs} that last heard from A at {@code lastHeardMs}, nothing copied. */
    static MirrorHeartbeat.Builder heartbeat(long mirrorTimeMs, long lastHeardMs) {
        return MirrorHeartbeat.newBuilder().setSourceCluster("A").setTargetCluster("B").setMirrorTimeMs(mirrorTimeMs)
                .setLastHeardFromSourceMs(lastHeardMs);
    }

    /** A heartbeat that reports {@code records} copied with latencies from {@code minMs} to {@code maxMs}. */
    static MirrorHeartbeat.Builder copying(long mirrorTimeMs, long records, long minMs, long maxMs) {
        return heartbeat(mirrorTimeMs, mirrorTimeMs).setIntervalRecords(records).setReceiveLatencyMinMs(minMs)
                .setReceiveLatencyMaxMs(maxMs);
    }

    static PartitionBehind behind(int partition, long records) {
        return PartitionBehind.newBuilder().setSourceTopic("orders").setPartition(partition).setTargetTopic("orders")
                .setRecords(records).build();
    }

    static MirrorStateRecord record(MirrorCheckpoint.Builder checkpoint) {
        return MirrorStateRecord.newBuilder().setCheckpoint(checkpoint).build();
    }

    /** A gap of A's orders-{@code partition}, source offsets [from, to). */
    static MirrorGap.Builder gap(int partition, long from, long to) {
        return MirrorGap.newBuilder().setSourceCluster("A").setTargetCluster("B").setSourceTopic("orders")
                .setSourceTopicId(TopicIds.toBytes(ORDERS_ID)).setPartition(partition).setTargetTopic("orders")
                .setFromOffset(from).setToOffset(to);
    }

    static MirrorStateRecord record(MirrorGap.Builder gap) {
        return MirrorStateRecord.newBuilder().setGap(gap).build();
    }

    static MirrorStateRecord record(MirrorHeartbeat.Builder heartbeat) {
        return MirrorStateRecord.newBuilder().setHeartbeat(heartbeat).build();
    }

    /** The state of A and group g after {@code records}, in log order. */
    static MirrorState state(MirrorStateRecord... records) {
        MirrorState.Collector collector = new MirrorState.Collector("A", "g");
        for (MirrorStateRecord record : records) {
            collector.add(record);
        }
        return collector.state();
    }
}
