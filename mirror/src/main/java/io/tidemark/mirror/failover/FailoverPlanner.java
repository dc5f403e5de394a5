package io.tidemark.mirror.failover;

import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.failover.FailoverPlan.ByTime;
import io.tidemark.mirror.failover.FailoverPlan.Exact;
import io.tidemark.mirror.failover.FailoverPlan.PartitionPlan;
import io.tidemark.mirror.failover.FailoverPlan.RecordTimes;
import io.tidemark.mirror.failover.FailoverPlan.TimeSource;
import io.tidemark.mirror.failover.FailoverRequest.TimeChoice;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorHeartbeat;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Decides where a consumer group resumes on the target cluster after its source cluster died: the partitions are
 * every partition of the group's topics on the target (the target topics of its checkpoints, or {@code --topic}),
 * and each resumes
 * <ul>
 *   <li>in <b>exact</b> mode when the group has a checkpoint of it and no {@code --time} was given: at the
 *       checkpoint's translated offset ({@link Exact}); or</li>
 *   <li>in <b>time</b> mode otherwise: at the first record whose target ReceiveTime is at or after T - X
 *       ({@link ByTime}), T being the {@code --time} given, or the last consumed record's source ReceiveTime from the
 *       checkpoint ({@code --time last-consumed}), or when the mirror last heard from the source (a partition without
 *       checkpoint, or {@code --time source-silent}); X is {@code --buffer} or derived from the mirror's latencies
 *       ({@link Buffer}).</li>
 * </ul>
 * Re-reads are the records the group had consumed on the source and reads again on the target. In time mode they are
 * estimated as the records with target ReceiveTime from T - X to T. In exact mode they are what the group committed
 * on the source after the checkpoint:
 * <ul>
 *   <li>at most B, the copies of the source partition at or above the checkpoint's source offset o (the last origin
 *       offset the target holds + 1 - o, not below 0);</li>
 *   <li>estimated as min(B, round(r * (S - c))): r the group's {@link CommitRate} before the checkpoint, (o - o') /
 *       (c - c') from the checkpoint's previous reading (o', c') and its own (o, c), commit times of the source's
 *       clock; S when the mirror last heard from the source (the mirror's clock, so S - c also holds the clocks'
 *       difference), or the plan's time when no heartbeat tells; S - c not below 0. A group that committed the same
 *       offset again (r = 0) is estimated at 0;</li>
 *   <li>estimated as B when r is unknown: the checkpoint has no previous reading (the first after the mirror
 *       started, or written before mirrors recorded it), the offset was moved back, or c did not advance.</li>
 * </ul>
 * Deterministic: the mirror's state, the request, the time and the target's answers in, the plan out; it reads no
 * clock and does no I/O of its own.
 *
 * <p>Stateless; thread-safe when its {@link TargetFacts} are.
 */
public final class FailoverPlanner {
    private final TargetFacts target;

    public FailoverPlanner(TargetFacts target) {
        this.target = target;
    }

    /**
     * @param nowMs the time of the plan: a {@code --time} after it is refused; S of the exact-mode estimates when no
     *              heartbeat tells when the source went silent
     * @throws IllegalArgumentException   for a time in the future, an unknown source cluster, a partition with no
     *                                    checkpoint and no time, or {@code auto} with no latency to derive X from
     * @throws TidemarkException          UNKNOWN_GROUP when the group has no checkpoint and no {@code --topic} names
     *                                    its topics; the target's errors (UNKNOWN_TOPIC, NOT_AVAILABLE, ...)
     */
    public FailoverPlan plan(MirrorState state, FailoverRequest request, long nowMs) {
        if (!state.sourceCluster().equals(request.sourceCluster()) || !state.group().equals(request.group())) {
            throw new IllegalArgumentException("the mirror state of cluster " + state.sourceCluster() + " and group "
                    + state.group() + " cannot plan for cluster " + request.sourceCluster() + " and group "
                    + request.group());
        }
        checkNotInFuture(request.time(), nowMs);
        checkSourceKnown(state);
        Map<TopicPartition, Optional<MirrorCheckpoint>> partitions = partitions(state, request);
        Map<TopicPartition, ResumeTime> times = new LinkedHashMap<>();
        partitions.forEach((tp, checkpoint) -> {
            if (checkpoint.isEmpty() || request.time().kind() != TimeChoice.Kind.NONE) {
                times.put(tp, time(state, request, tp, checkpoint));
            }
        });
        Optional<Buffer> buffer = times.isEmpty() ? Optional.empty() : Optional.of(buffer(state, request));
        long silentMs = state.sourceLastHeardMs().orElse(nowMs);
        List<PartitionPlan> plans = new ArrayList<>();
        partitions.forEach((tp, checkpoint) -> plans.add(times.containsKey(tp)
                ? byTime(state, tp, times.get(tp), buffer.orElseThrow())
                : exact(state, tp, checkpoint.orElseThrow(), silentMs)));
        return new FailoverPlan(request.group(), request.sourceCluster(),
                target.clusterName().or(state::targetCluster).orElse(""), nowMs,
                state.sourceLastHeardMs(), state.lastHeartbeat().map(h -> OptionalLong.of(h.getMirrorTimeMs()))
                .orElse(OptionalLong.empty()), state.lastHeartbeat().map(MirrorHeartbeat::getRecordsBehind).orElse(0L),
                buffer, plans);
    }

    private static void checkNotInFuture(TimeChoice time, long nowMs) {
        if (time.kind() == TimeChoice.Kind.GIVEN && time.timeMs() > nowMs) {
            throw new IllegalArgumentException("--time " + FailoverPlanFormat.time(time.timeMs())
                    + " is in the future (now is " + FailoverPlanFormat.time(nowMs) + "): T is a time the source "
                    + "cluster reached before it went silent");
        }
    }

    private static void checkSourceKnown(MirrorState state) {
        if (!state.sources().contains(state.sourceCluster())) {
            throw new IllegalArgumentException("cluster '" + state.sourceCluster() + "' left nothing on the target: "
                    + "no checkpoint and no heartbeat of it in __mirror_state (clusters there: "
                    + listed(state.sources()) + "); --source-name is the name its mirror was given");
        }
    }

    /** Every partition of the group's topics on the target, by topic and partition, with its checkpoint. */
    private Map<TopicPartition, Optional<MirrorCheckpoint>> partitions(MirrorState state, FailoverRequest request) {
        List<String> topics = request.topics().isEmpty()
                ? state.checkpoints().keySet().stream().map(TopicPartition::topic).distinct().sorted().toList()
                : request.topics().stream().distinct().sorted().toList();
        if (topics.isEmpty()) {
            throw new TidemarkException(ErrorCode.UNKNOWN_GROUP, "group '" + state.group() + "' has no checkpoint "
                    + "from cluster " + state.sourceCluster() + " on the target (groups with checkpoints from "
                    + state.sourceCluster() + ": " + listed(state.groupsOfSource()) + "); the mirror checkpoints the "
                    + "groups that match its --groups. To move a group without checkpoints by time, name its topics "
                    + "with --topic");
        }
        Map<TopicPartition, Optional<MirrorCheckpoint>> partitions = new LinkedHashMap<>();
        for (String topic : topics) {
            int count = target.partitionCount(topic);
            for (int p = 0; p < count; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                partitions.put(tp, Optional.ofNullable(state.checkpoints().get(tp)));
            }
        }
        return partitions;
    }

    private static Buffer buffer(MirrorState state, FailoverRequest request) {
        if (request.bufferMs().isPresent()) {
            return Buffer.given(request.bufferMs().getAsLong());
        }
        return LatencySample.of(state.recentCopies()).map(Buffer::auto).orElseThrow(() ->
                new IllegalArgumentException("--buffer auto derives X from the mirror's latencies, but no heartbeat of "
                        + "cluster " + state.sourceCluster() + " on the target reports records copied; give --buffer "
                        + "DURATION (seed 000's example is 15m)"));
    }

    /** @param silentMs S: when the source went silent, or the plan's time when unknown */
    private PartitionPlan exact(MirrorState state, TopicPartition tp, MirrorCheckpoint checkpoint, long silentMs) {
        OffsetLookup at = target.recordAt(tp, checkpoint.getTargetOffset());
        OptionalLong held = target.lastOriginOffset(tp, new OriginPartition(state.sourceCluster(),
                checkpoint.getSourceTopic(), TopicIds.fromBytes(checkpoint.getSourceTopicId()),
                checkpoint.getPartition()));
        long atMost = held.isPresent() ? Math.max(0, held.getAsLong() + 1 - checkpoint.getSourceOffset()) : 0;
        Optional<CommitRate> rate = CommitRate.of(checkpoint);
        long estimate = rate.map(r -> Math.min(atMost, r.recordsIn(silentMs - checkpoint.getSourceCommitTimeMs())))
                .orElse(atMost);
        return new PartitionPlan(tp, at.offset(), at.logEndOffset(), times(at), estimate, OptionalLong.of(atMost),
                state.notCopied(tp), new Exact(checkpoint.getSourceTopic(), checkpoint.getSourceOffset(),
                        checkpoint.getSourceCommitTimeMs(), checkpoint.getCheckpointTimeMs(),
                        checkpoint.getMirrorBehind(), rate));
    }

    private PartitionPlan byTime(MirrorState state, TopicPartition tp, ResumeTime time, Buffer buffer) {
        long lookupMs = Math.max(0, time.ms() - buffer.ms());
        OffsetLookup at = target.firstAtReceiveTime(tp, lookupMs);
        long rereads = Math.max(0, target.firstAtReceiveTime(tp, time.ms()).offset() - at.offset());
        return new PartitionPlan(tp, at.offset(), at.logEndOffset(), times(at), rereads, OptionalLong.empty(),
                state.notCopied(tp), new ByTime(time.ms(), time.source(), lookupMs));
    }

    /** T of a partition and where it comes from. */
    private record ResumeTime(long ms, TimeSource source) {
    }

    private static ResumeTime time(MirrorState state, FailoverRequest request, TopicPartition tp,
                          Optional<MirrorCheckpoint> checkpoint) {
        TimeChoice choice = request.time();
        if (choice.kind() == TimeChoice.Kind.GIVEN) {
            return new ResumeTime(choice.timeMs(), TimeSource.GIVEN);
        }
        if (choice.kind() == TimeChoice.Kind.LAST_CONSUMED && checkpoint.filter(c -> c.getLastConsumedKnown())
                .isPresent()) {
            return new ResumeTime(checkpoint.get().getLastConsumedReceiveTimeMs(), TimeSource.LAST_CONSUMED);
        }
        OptionalLong silent = state.sourceLastHeardMs();
        if (silent.isPresent()) {
            return new ResumeTime(silent.getAsLong(), TimeSource.SOURCE_SILENT);
        }
        String why = switch (choice.kind()) {
            case SOURCE_SILENT -> "--time source-silent was asked for";
            case LAST_CONSUMED -> checkpoint.isPresent() ? tp + ": its checkpoint knows no last consumed record"
                    : tp + " has no checkpoint of group '" + state.group() + "'";
            default -> tp + " has no checkpoint of group '" + state.group() + "'";
        };
        throw new IllegalArgumentException(why + ", and no heartbeat of cluster " + state.sourceCluster()
                + " on the target tells when the source went silent: give --time TIME");
    }

    private static Optional<RecordTimes> times(OffsetLookup at) {
        return at.found() ? Optional.of(new RecordTimes(at.receiveTimeMs(), at.sendTimeMs())) : Optional.empty();
    }

    private static String listed(Collection<String> names) {
        return names.isEmpty() ? "none" : String.join(", ", names);
    }
}
