package io.tidemark.mirror.failover;

import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.v1.ErrorCode;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A target cluster in memory: its name (none unless {@link #named}) and its partitions, each a list of records in
 * offset order from offset 0.
 */
final class ScriptedTarget implements TargetFacts {
    /** A record of a target partition: its times and, for a copy, its origin. */
    record Stored(long receiveTimeMs, long sendTimeMs, OriginPartition origin, long originOffset) {
    }

    private final Map<String, List<List<Stored>>> topics = new HashMap<>();
    private Optional<String> clusterName = Optional.empty();

    /** Gives the target a cluster.name. */
    ScriptedTarget named(String name) {
        clusterName = Optional.of(name);
        return this;
    }

    /** Adds a topic of {@code partitions} empty partitions. */
    ScriptedTarget topic(String name, int partitions) {
        List<List<Stored>> created = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            created.add(new ArrayList<>());
        }
        topics.put(name, created);
        return this;
    }

    /** Appends a copy of {@code origin}'s record {@code originOffset}. */
    ScriptedTarget copy(TopicPartition tp, long receiveTimeMs, long sendTimeMs, OriginPartition origin,
                        long originOffset) {
        log(tp).add(new Stored(receiveTimeMs, sendTimeMs, origin, originOffset));
        return this;
    }

    private List<List<Stored>> partitions(String topic) {
        List<List<Stored>> partitions = topics.get(topic);
        if (partitions == null) {
            throw new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic '" + topic + "' does not exist");
        }
        return partitions;
    }

    private List<Stored> log(TopicPartition tp) {
        return partitions(tp.topic()).get(tp.partition());
    }

    @Override
    public Optional<String> clusterName() {
        return clusterName;
    }

    @Override
    public int partitionCount(String topic) {
        return partitions(topic).size();
    }

    @Override
    public OffsetLookup recordAt(TopicPartition tp, long offset) {
        List<Stored> log = log(tp);
        return offset < log.size() ? found(log, (int) offset) : end(log);
    }

    @Override
    public OffsetLookup firstAtReceiveTime(TopicPartition tp, long timeMs) {
        List<Stored> log = log(tp);
        for (int i = 0; i < log.size(); i++) {
            if (log.get(i).receiveTimeMs() >= timeMs) {
                return found(log, i);
            }
        }
        return end(log);
    }

    @Override
    public OptionalLong lastOriginOffset(TopicPartition tp, OriginPartition origin) {
        return log(tp).stream().filter(r -> origin.equals(r.origin())).mapToLong(Stored::originOffset).max();
    }

    private static OffsetLookup found(List<Stored> log, int offset) {
        Stored record = log.get(offset);
        return new OffsetLookup(true, offset, record.receiveTimeMs(), record.sendTimeMs(), 0, log.size());
    }

    private static OffsetLookup end(List<Stored> log) {
        return new OffsetLookup(false, log.size(), 0, 0, 0, log.size());
    }
}
