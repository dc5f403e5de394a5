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
 * offset order from offset 0, of which retention may have removed those below a log start ({@link #removeBefore}).
 */
final class ScriptedTarget implements TargetFacts {
    /** A record of a target partition: its times and, for a copy, its origin. */
    record Stored(long receiveTimeMs, long sendTimeMs, OriginPartition origin, long originOffset) {
    }

    private final Map<String, List<List<Stored>>> topics = new HashMap<>();
    private final Map<TopicPartition, Integer> logStarts = new HashMap<>();
    private Optional<String> clusterName = Optional.empty();

    /** The group's live members: none unless {@link #withMembers}. */
    private List<FailoverPlan.TargetMember> members = List.of();

    /** Gives every group these live members. */
    ScriptedTarget withMembers(FailoverPlan.TargetMember... live) {
        members = List.of(live);
        return this;
    }

    @Override
    public List<FailoverPlan.TargetMember> members(String group) {
        return members;
    }

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

    /** Appends a record that is no copy. */
    ScriptedTarget produce(TopicPartition tp, long receiveTimeMs, long sendTimeMs) {
        log(tp).add(new Stored(receiveTimeMs, sendTimeMs, null, -1));
        return this;
    }

    /** Retention removes the records below {@code offset}. */
    ScriptedTarget removeBefore(TopicPartition tp, int offset) {
        logStarts.put(tp, offset);
        return this;
    }

    private int logStart(TopicPartition tp) {
        return logStarts.getOrDefault(tp, 0);
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
        return offset < log.size() ? found(tp, (int) Math.max(offset, logStart(tp))) : end(tp);
    }

    @Override
    public OffsetLookup firstAtReceiveTime(TopicPartition tp, long timeMs) {
        List<Stored> log = log(tp);
        for (int i = logStart(tp); i < log.size(); i++) {
            if (log.get(i).receiveTimeMs() >= timeMs) {
                return found(tp, i);
            }
        }
        return end(tp);
    }

    @Override
    public Optional<Copy> lastCopy(TopicPartition tp, OriginPartition origin) {
        List<Stored> log = log(tp);
        for (int i = log.size() - 1; i >= logStart(tp); i--) {
            if (origin.equals(log.get(i).origin())) {
                return Optional.of(new Copy(i, log.get(i).originOffset()));
            }
        }
        return Optional.empty();
    }

    @Override
    public Optional<Copy> copyAt(TopicPartition tp, long offset, OriginPartition origin) {
        List<Stored> log = log(tp);
        if (offset < logStart(tp) || offset >= log.size()) {
            throw new TidemarkException(ErrorCode.OFFSET_OUT_OF_RANGE, tp + " holds " + logStart(tp) + " to "
                    + log.size() + ", not " + offset);
        }
        Stored record = log.get((int) offset);
        return origin.equals(record.origin()) ? Optional.of(new Copy(offset, record.originOffset()))
                : Optional.empty();
    }

    @Override
    public OptionalLong firstCopyAtOrAbove(TopicPartition tp, OriginPartition origin, long originOffset) {
        List<Stored> log = log(tp);
        for (int i = logStart(tp); i < log.size(); i++) {
            if (origin.equals(log.get(i).origin()) && log.get(i).originOffset() >= originOffset) {
                return OptionalLong.of(i);
            }
        }
        return OptionalLong.empty();
    }

    @Override
    public boolean onlyCopiesBelow(TopicPartition tp, long fromOffset, long toOffset, OriginPartition origin,
                                   long originOffset) {
        List<Stored> log = log(tp);
        for (long i = Math.max(fromOffset, logStart(tp)); i < Math.min(toOffset, log.size()); i++) {
            Stored record = log.get((int) i);
            if (!origin.equals(record.origin()) || record.originOffset() >= originOffset) {
                return false;
            }
        }
        return true;
    }

    private OffsetLookup found(TopicPartition tp, int offset) {
        List<Stored> log = log(tp);
        Stored record = log.get(offset);
        return new OffsetLookup(true, offset, record.receiveTimeMs(), record.sendTimeMs(), logStart(tp), log.size());
    }

    private OffsetLookup end(TopicPartition tp) {
        List<Stored> log = log(tp);
        return new OffsetLookup(false, log.size(), 0, 0, logStart(tp), log.size());
    }
}
