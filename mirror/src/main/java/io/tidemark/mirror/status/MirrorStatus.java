package io.tidemark.mirror.status;

import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStateRecord;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the target's {@value MirrorStateFormat#TOPIC} says about the mirrors that write into it: per source cluster, its
 * mirror's latest heartbeat and the latest status of each partition it copies. {@link Collector} builds it from the
 * records in log order.
 *
 * @param sources the source clusters asked about, by name
 */
public record MirrorStatus(List<SourceStatus> sources) {
    public MirrorStatus {
        sources = List.copyOf(sources);
    }

    /**
     * One source cluster's mirror.
     *
     * @param sourceCluster the source cluster's name
     * @param lastHeartbeat its mirror's latest heartbeat; empty when there is none (yet, or past retention)
     * @param partitions    the latest status of each partition copied, by source topic and partition
     */
    public record SourceStatus(String sourceCluster, Optional<MirrorHeartbeat> lastHeartbeat,
                               List<MirrorPartitionStatus> partitions) {
        public SourceStatus {
            Objects.requireNonNull(sourceCluster, "sourceCluster");
            Objects.requireNonNull(lastHeartbeat, "lastHeartbeat");
            partitions = List.copyOf(partitions);
        }

        /** The target's name as the mirror wrote it; empty when it wrote nothing that carries it. */
        public Optional<String> targetCluster() {
            return lastHeartbeat.map(MirrorHeartbeat::getTargetCluster)
                    .or(() -> partitions.stream().map(MirrorPartitionStatus::getTargetCluster).findFirst());
        }
    }

    /**
     * Builds a {@link MirrorStatus} from {@value MirrorStateFormat#TOPIC}'s records, fed in log order: a later
     * heartbeat of a source, or status of a partition, replaces an earlier one. Checkpoints only name their source.
     * Keeps one heartbeat per source and one status per partition.
     *
     * <p>Not thread-safe.
     */
    public static final class Collector {
        private final Optional<String> sourceCluster;
        private final Map<String, MirrorHeartbeat> heartbeats = new TreeMap<>();
        private final Map<String, Map<PartitionKey, MirrorPartitionStatus>> statuses = new TreeMap<>();
        private final SortedSet<String> sources = new TreeSet<>();

        private record PartitionKey(String topic, int partition) {
            static final Comparator<PartitionKey> ORDER = Comparator.comparing(PartitionKey::topic)
                    .thenComparingInt(PartitionKey::partition);
        }

        /** @param sourceCluster the one source to keep; empty for every source */
        public Collector(Optional<String> sourceCluster) {
            this.sourceCluster = sourceCluster;
        }

        public void add(MirrorStateRecord record) {
            switch (record.getRecordCase()) {
                case CHECKPOINT -> sources.add(record.getCheckpoint().getSourceCluster());
                case HEARTBEAT -> {
                    MirrorHeartbeat heartbeat = record.getHeartbeat();
                    sources.add(heartbeat.getSourceCluster());
                    if (wanted(heartbeat.getSourceCluster())) {
                        heartbeats.put(heartbeat.getSourceCluster(), heartbeat);
                    }
                }
                case STATUS -> {
                    MirrorPartitionStatus status = record.getStatus();
                    sources.add(status.getSourceCluster());
                    if (wanted(status.getSourceCluster())) {
                        statuses.computeIfAbsent(status.getSourceCluster(), s -> new TreeMap<>(PartitionKey.ORDER))
                                .put(new PartitionKey(status.getSourceTopic(), status.getPartition()), status);
                    }
                }
                default -> {
                    // A kind this reader does not know, from a newer mirror: nothing of it is shown.
                }
            }
        }

        private boolean wanted(String source) {
            return sourceCluster.map(source::equals).orElse(true);
        }

        /**
         * What was read.
         *
         * @throws IllegalArgumentException when the source asked about left no heartbeat or partition status, or,
         *                                  asking about every source, when none did: naming the sources there are
         */
        public MirrorStatus status() {
            SortedSet<String> shown = new TreeSet<>(heartbeats.keySet());
            shown.addAll(statuses.keySet());
            if (shown.isEmpty()) {
                throw new IllegalArgumentException(sourceCluster.map(source -> "no mirror from cluster " + source
                        + " left a heartbeat or partition status in the target's " + MirrorStateFormat.TOPIC)
                        .orElse("the target's " + MirrorStateFormat.TOPIC + " holds no heartbeat or partition status: "
                                + "no mirror writes to this cluster, or none did within its retention")
                        + (sources.isEmpty() ? "" : " (sources there: " + String.join(", ", sources) + ")"));
            }
            List<SourceStatus> result = new ArrayList<>();
            for (String source : shown) {
                result.add(new SourceStatus(source, Optional.ofNullable(heartbeats.get(source)),
                        List.copyOf(statuses.getOrDefault(source, Map.of()).values())));
            }
            return new MirrorStatus(result);
        }
    }
}
