package io.tidemark.mirror.failover;

import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorGap;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorPartitionState;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStateRecord;
import io.tidemark.proto.v1.PartitionBehind;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What the target's {@value MirrorStateFormat#TOPIC} says about one source cluster and one consumer group: the
 * failover planner's view of the mirror. {@link Collector} builds it from the records in log order.
 *
 * @param sourceCluster  the source cluster asked about
 * @param group          the group asked about
 * @param checkpoints    the group's latest checkpoint from the source, per target partition (one of a partition it
 *                       has no commit on says so: {@code no_commit})
 * @param gaps           the holes the source's retention left in what was copied from the source, per target
 *                       partition, in the order they were recorded
 * @param statuses       the latest status of each source partition the mirror copies (or cannot copy), by source
 *                       topic and partition
 * @param lastHeartbeat  the source's latest heartbeat
 * @param recentCopies   the source's heartbeats that report records copied, over the
 *                       {@value #LATENCY_WINDOW_MS} ms before the last such heartbeat: the latencies X is derived from
 * @param groupsOfSource every group with a checkpoint from the source (to name them when the group has none)
 * @param sources        every source cluster with a checkpoint or a heartbeat (to name them when the source has none)
 */
public record MirrorState(String sourceCluster, String group, Map<TopicPartition, MirrorCheckpoint> checkpoints,
                          Map<TopicPartition, List<MirrorGap>> gaps, Map<TopicPartition, MirrorPartitionStatus> statuses,
                          Optional<MirrorHeartbeat> lastHeartbeat, List<MirrorHeartbeat> recentCopies,
                          SortedSet<String> groupsOfSource, SortedSet<String> sources) {
    /**
     * 1 hour: the latencies of the last hour of copying. Long enough to hold the ups and downs of a normal day's
     * load at 1 heartbeat a second (3,600 heartbeats), short enough that a backlog caught up long ago does not
     * inflate X.
     */
    public static final long LATENCY_WINDOW_MS = 60L * 60 * 1000;

    public MirrorState {
        checkpoints = Map.copyOf(checkpoints);
        gaps = gaps.entrySet().stream().collect(Collectors.toUnmodifiableMap(Map.Entry::getKey,
                e -> List.copyOf(e.getValue())));
        statuses = Map.copyOf(statuses);
        recentCopies = List.copyOf(recentCopies);
        groupsOfSource = new TreeSet<>(groupsOfSource);
        sources = new TreeSet<>(sources);
    }

    /** When the mirror last heard from the source (mirror clock), from the latest heartbeat; empty if it never did. */
    public OptionalLong sourceLastHeardMs() {
        return lastHeartbeat.filter(h -> h.getLastHeardFromSourceMs() > 0)
                .map(h -> OptionalLong.of(h.getLastHeardFromSourceMs())).orElse(OptionalLong.empty());
    }

    /** Records of the source partition copied into {@code tp} that the target did not hold, at the latest heartbeat. */
    public long notCopied(TopicPartition tp) {
        return lastHeartbeat.map(h -> h.getPartitionsBehindList().stream()
                .filter(b -> b.getTargetTopic().equals(tp.topic()) && b.getPartition() == tp.partition())
                .mapToLong(PartitionBehind::getRecords).sum()).orElse(0L);
    }

    /**
     * Records of the checkpoint's source topic (the same name and id; of any source topic without a checkpoint) copied
     * into {@code tp} that the source's retention removed before the mirror read them, at or above source offset
     * {@code fromOffset}.
     */
    public long removedBySource(TopicPartition tp, Optional<MirrorCheckpoint> checkpoint, long fromOffset) {
        return gaps.getOrDefault(tp, List.of()).stream()
                .filter(g -> checkpoint.map(c -> c.getSourceTopic().equals(g.getSourceTopic())
                        && c.getSourceTopicId().equals(g.getSourceTopicId())).orElse(true))
                .mapToLong(g -> Math.max(0, g.getToOffset() - Math.max(g.getFromOffset(), fromOffset))).sum();
    }

    /** The statuses of the source partitions copied into {@code targetTopic} that the mirror stopped copying. */
    public List<MirrorPartitionStatus> stopped(String targetTopic) {
        return statuses.values().stream().filter(s -> s.getTargetTopic().equals(targetTopic)
                && s.getState() == MirrorPartitionState.MIRROR_PARTITION_STOPPED).toList();
    }

    /** The target cluster's name, as the mirror was told; empty when the source left nothing on the target. */
    public Optional<String> targetCluster() {
        return checkpoints.values().stream().map(MirrorCheckpoint::getTargetCluster).findFirst()
                .or(() -> lastHeartbeat.map(MirrorHeartbeat::getTargetCluster));
    }

    /**
     * Builds a {@link MirrorState} from {@value MirrorStateFormat#TOPIC}'s records, fed in log order: a later record of
     * a key replaces an earlier one. Keeps the checkpoints of one group, the source's gaps and a bounded window of
     * heartbeats, so a week of records fits in little memory. Kinds of records it does not use are skipped.
     *
     * <p>Not thread-safe.
     */
    static final class Collector {
        private final String sourceCluster;
        private final String group;
        private final Map<TopicPartition, MirrorCheckpoint> checkpoints = new HashMap<>();
        private final Map<TopicPartition, List<MirrorGap>> gaps = new HashMap<>();
        private final Map<TopicPartition, MirrorPartitionStatus> statuses = new HashMap<>();
        private final Deque<MirrorHeartbeat> recentCopies = new ArrayDeque<>();
        private final SortedSet<String> groupsOfSource = new TreeSet<>();
        private final SortedSet<String> sources = new TreeSet<>();
        private MirrorHeartbeat lastHeartbeat;

        Collector(String sourceCluster, String group) {
            this.sourceCluster = sourceCluster;
            this.group = group;
        }

        void add(MirrorStateRecord record) {
            switch (record.getRecordCase()) {
                case CHECKPOINT -> add(record.getCheckpoint());
                case HEARTBEAT -> add(record.getHeartbeat());
                case GAP -> add(record.getGap());
                case STATUS -> add(record.getStatus());
                default -> {
                }
            }
        }

        private void add(MirrorPartitionStatus status) {
            sources.add(status.getSourceCluster());
            if (status.getSourceCluster().equals(sourceCluster)) {
                statuses.put(new TopicPartition(status.getSourceTopic(), status.getPartition()), status);
            }
        }

        private void add(MirrorGap gap) {
            sources.add(gap.getSourceCluster());
            if (gap.getSourceCluster().equals(sourceCluster)) {
                gaps.computeIfAbsent(new TopicPartition(gap.getTargetTopic(), gap.getPartition()),
                        tp -> new ArrayList<>()).add(gap);
            }
        }

        private void add(MirrorCheckpoint checkpoint) {
            sources.add(checkpoint.getSourceCluster());
            if (!checkpoint.getSourceCluster().equals(sourceCluster)) {
                return;
            }
            groupsOfSource.add(checkpoint.getGroup());
            if (checkpoint.getGroup().equals(group)) {
                checkpoints.put(new TopicPartition(checkpoint.getTargetTopic(), checkpoint.getPartition()), checkpoint);
            }
        }

        private void add(MirrorHeartbeat heartbeat) {
            sources.add(heartbeat.getSourceCluster());
            if (!heartbeat.getSourceCluster().equals(sourceCluster)) {
                return;
            }
            lastHeartbeat = heartbeat;
            if (heartbeat.getIntervalRecords() > 0) {
                recentCopies.addLast(heartbeat);
                while (recentCopies.getFirst().getMirrorTimeMs() < heartbeat.getMirrorTimeMs() - LATENCY_WINDOW_MS) {
                    recentCopies.removeFirst();
                }
            }
        }

        MirrorState state() {
            return new MirrorState(sourceCluster, group, checkpoints, gaps, statuses, Optional.ofNullable(lastHeartbeat),
                    List.copyOf(recentCopies), groupsOfSource, sources);
        }
    }
}
