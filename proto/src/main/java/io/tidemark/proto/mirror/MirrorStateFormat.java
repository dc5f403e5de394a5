package io.tidemark.proto.mirror;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorGap;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStateRecord;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The records mirrors keep on their target cluster, in the internal topic {@value #TOPIC}: consumer-group
 * checkpoints, heartbeats, partition statuses and the holes the source's retention left in what was copied
 * (mirror.proto), read by the failover tool and {@code tidemark mirror status}. Every broker creates the topic at start
 * ({@value #PARTITIONS} partition, {@link #TOPIC_CONFIG}); mirrors write it with an idempotent producer.
 *
 * <h2>Record</h2>
 * <pre>
 * key       UTF-8 text, one of
 *             checkpoint/SOURCE/GROUP/SOURCE_TOPIC/PARTITION   (SOURCE: the source cluster's name)
 *             heartbeat/SOURCE
 *             status/SOURCE/SOURCE_TOPIC/PARTITION
 *             gap/SOURCE/SOURCE_TOPIC/PARTITION/FROM_OFFSET
 *           for people and tools that filter; the value carries every field, so nothing parses the key
 * value     a MirrorStateRecord protobuf message: exactly one of checkpoint (field 1), heartbeat (2), status (3),
 *           gap (4); a reader skips kinds it does not know, which later mirrors may write
 * SendTime  the mirror's clock when it wrote the record
 * headers   none
 * </pre>
 * The latest record of a key is the current one: a reader keeps, per key, the record of the highest offset. A
 * checkpoint is written when the group's committed offset changed since the last one the mirror wrote, or when the
 * group committed the same offset again and the last checkpoint did not show it standing still (its previous reading,
 * mirror.proto), and again every {@link #CHECKPOINT_REFRESH_MS} ms while it stays, so retention never removes the
 * current checkpoint of a group that stopped committing; a heartbeat every heartbeat interval (1 s by default); a
 * partition's status when it changed (its state, records behind, last origin offset copied), at most once a
 * checkpoint interval, within a heartbeat interval when the partition stops, and again every
 * {@link #CHECKPOINT_REFRESH_MS} ms while it stays the same; a gap once, when the mirror finds it (each has its own
 * key: gaps are never replaced).
 *
 * <p>Stateless.
 */
public final class MirrorStateFormat {
    public static final String TOPIC = "__mirror_state";
    public static final int PARTITIONS = 1;
    /** 7 days: far more than any failover looks back, and at most a few records per second. */
    public static final long RETENTION_MS = 7L * 24 * 60 * 60 * 1000;
    /** Config of the topic: 7 days' retention, and any SendTime (it is the mirror's clock). */
    public static final Map<String, String> TOPIC_CONFIG = Map.of("retention.ms", Long.toString(RETENTION_MS),
            "send.time.before.max.ms", "-1");
    /** An unchanged checkpoint is written again after this long (1 day), well inside the retention. */
    public static final long CHECKPOINT_REFRESH_MS = 24L * 60 * 60 * 1000;
    private static final String CHECKPOINT = "checkpoint";
    private static final String HEARTBEAT = "heartbeat";
    private static final String STATUS = "status";
    private static final String GAP = "gap";
    private static final String SEPARATOR = "/";

    private MirrorStateFormat() {
    }

    public static byte[] key(MirrorCheckpoint checkpoint) {
        return utf8(String.join(SEPARATOR, CHECKPOINT, checkpoint.getSourceCluster(), checkpoint.getGroup(),
                checkpoint.getSourceTopic(), Integer.toString(checkpoint.getPartition())));
    }

    public static byte[] key(MirrorHeartbeat heartbeat) {
        return utf8(String.join(SEPARATOR, HEARTBEAT, heartbeat.getSourceCluster()));
    }

    public static byte[] key(MirrorPartitionStatus status) {
        return utf8(String.join(SEPARATOR, STATUS, status.getSourceCluster(), status.getSourceTopic(),
                Integer.toString(status.getPartition())));
    }

    public static byte[] key(MirrorGap gap) {
        return utf8(String.join(SEPARATOR, GAP, gap.getSourceCluster(), gap.getSourceTopic(),
                Integer.toString(gap.getPartition()), Long.toString(gap.getFromOffset())));
    }

    public static byte[] value(MirrorCheckpoint checkpoint) {
        return MirrorStateRecord.newBuilder().setCheckpoint(checkpoint).build().toByteArray();
    }

    public static byte[] value(MirrorHeartbeat heartbeat) {
        return MirrorStateRecord.newBuilder().setHeartbeat(heartbeat).build().toByteArray();
    }

    public static byte[] value(MirrorPartitionStatus status) {
        return MirrorStateRecord.newBuilder().setStatus(status).build().toByteArray();
    }

    public static byte[] value(MirrorGap gap) {
        return MirrorStateRecord.newBuilder().setGap(gap).build().toByteArray();
    }

    /**
     * Reads a record's value.
     *
     * @throws IllegalArgumentException when it is not a MirrorStateRecord with one of its kinds set (a kind this
     *                                  reader does not know counts as set: its number is kept as an unknown field)
     */
    public static MirrorStateRecord parse(byte[] value) {
        try {
            MirrorStateRecord record = MirrorStateRecord.parseFrom(value);
            if (record.getRecordCase() == MirrorStateRecord.RecordCase.RECORD_NOT_SET
                    && record.getUnknownFields().asMap().isEmpty()) {
                throw new IllegalArgumentException("a " + TOPIC + " record holds none of its kinds");
            }
            return record;
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("a " + TOPIC + " record is not a MirrorStateRecord: " + e.getMessage(), e);
        }
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
