package io.tidemark.mirror.checkpoint;

import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.sink.CopierStatus;
import io.tidemark.mirror.sink.CopyState;
import io.tidemark.mirror.sink.OffsetMap;
import io.tidemark.mirror.sink.PartitionCopier;
import io.tidemark.mirror.sink.StopReason;
import io.tidemark.proto.v1.MirrorPartitionState;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStopReason;

import java.time.Clock;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every heartbeat interval: writes a {@link MirrorPartitionStatus} to the target for each copied partition whose
 * status is due ({@link StatusSchedule}): what its copier does, how far behind it is, the last origin offset the
 * target holds, the last copy's time, and why it stopped; {@code tidemark mirror status} reads them. A write that
 * fails is due again at the next run.
 *
 * <p>Not thread-safe: one scheduled task runs it (the publisher's callbacks only remove entries, concurrently).
 */
public final class PartitionStatusAgent {
    private final MirrorStatePublisher publisher;
    private final Iterable<PartitionCopier> copiers;
    private final String sourceCluster;
    private final String targetCluster;
    private final StatusSchedule schedule;
    private final Clock clock;
    private final Map<TopicPartition, StatusSchedule.Written> written = new ConcurrentHashMap<>();
    /** When this agent first saw each stopped partition stopped: its stop time. */
    private final Map<TopicPartition, Long> stoppedSinceMs = new ConcurrentHashMap<>();

    public PartitionStatusAgent(MirrorStatePublisher publisher, Iterable<PartitionCopier> copiers,
                                String sourceCluster, String targetCluster, StatusSchedule schedule, Clock clock) {
        this.publisher = publisher;
        this.copiers = copiers;
        this.sourceCluster = sourceCluster;
        this.targetCluster = targetCluster;
        this.schedule = schedule;
        this.clock = clock;
    }

    public void run() {
        long nowMs = clock.millis();
        Set<TopicPartition> current = new HashSet<>();
        for (PartitionCopier copier : copiers) {
            TopicPartition source = copier.source();
            current.add(source);
            CopierStatus status = copier.status();
            if (status.state() == CopyState.STOPPED) {
                stoppedSinceMs.putIfAbsent(source, nowMs);
            }
            if (!schedule.due(Optional.ofNullable(written.get(source)), status, nowMs)) {
                continue;
            }
            StatusSchedule.Written entry = new StatusSchedule.Written(status, nowMs);
            written.put(source, entry);
            publisher.publish(record(copier, status, nowMs)).whenComplete((stored, error) -> {
                if (error != null) {
                    written.remove(source, entry);
                }
            });
        }
        written.keySet().retainAll(current);
        stoppedSinceMs.keySet().retainAll(current);
    }

    private MirrorPartitionStatus record(PartitionCopier copier, CopierStatus status, long nowMs) {
        MirrorPartitionStatus.Builder record = MirrorPartitionStatus.newBuilder().setSourceCluster(sourceCluster)
                .setTargetCluster(targetCluster).setSourceTopic(copier.source().topic())
                .setPartition(copier.source().partition()).setTargetTopic(copier.target().topic())
                .setState(state(status.state())).setRecordsBehind(status.recordsBehind())
                .setSourceLogEndOffset(status.sourceLogEndOffset())
                .setLastCopyReceiveTimeMs(status.lastCopyReceiveTimeMs()).setStatusTimeMs(nowMs);
        if (status.lastOriginOffset() != OffsetMap.NONE) {
            record.setLastOriginOffsetKnown(true).setLastOriginOffset(status.lastOriginOffset());
        }
        status.stopReason().ifPresent(reason -> record.setStopReason(stopReason(reason,
                stoppedSinceMs.getOrDefault(copier.source(), nowMs))));
        return record.build();
    }

    private static MirrorStopReason stopReason(StopReason reason, long stoppedMs) {
        MirrorStopReason.Builder stop = MirrorStopReason.newBuilder().setCode(reason.code())
                .setMessage(reason.message()).setStoppedTimeMs(stoppedMs);
        reason.sourceOffset().ifPresent(offset -> stop.setSourceOffsetKnown(true).setSourceOffset(offset));
        return stop.build();
    }

    private static MirrorPartitionState state(CopyState state) {
        return switch (state) {
            case RESYNCHRONISING -> MirrorPartitionState.MIRROR_PARTITION_RESYNCHRONISING;
            case COPYING -> MirrorPartitionState.MIRROR_PARTITION_COPYING;
            case STOPPED -> MirrorPartitionState.MIRROR_PARTITION_STOPPED;
        };
    }
}
