package io.tidemark.mirror.failover;

import io.tidemark.client.api.OffsetLookup;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.failover.FailoverPlan.ByTime;
import io.tidemark.mirror.failover.FailoverPlan.Exact;
import io.tidemark.mirror.failover.FailoverPlan.PartitionPlan;
import io.tidemark.mirror.failover.FailoverPlan.Lost;
import io.tidemark.mirror.failover.FailoverPlan.MirrorStopped;
import io.tidemark.mirror.failover.FailoverPlan.RecordTimes;
import io.tidemark.mirror.failover.FailoverPlan.Skipped;
import io.tidemark.mirror.failover.FailoverPlan.TimeSource;
import io.tidemark.mirror.failover.FailoverPlan.Uncommitted;
import io.tidemark.mirror.failover.FailoverRequest.TimeChoice;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorHeartbeat;
import io.tidemark.proto.v1.MirrorPartitionStatus;
import io.tidemark.proto.v1.MirrorStopReason;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Decides where a consumer group resumes on the target cluster after its source cluster died, and accounts for every
 * record of the source the group had not consumed: read on the target, skipped (on the target, but passed over) or
 * lost (never on the target). The partitions are every partition of the group's topics on the target (the target
 * topics of its checkpoints, or {@code --topic}), and each resumes
 * <ul>
 *   <li><b>nowhere</b> when its checkpoint says the group has no committed offset on the source partition (it
 *       committed on other partitions of the topic): it gets none on the target, so its reset policy applies there,
 *       as it would have on the source ({@link Uncommitted});</li>
 *   <li>in <b>exact</b> mode when the group has a checkpoint of it and no {@code --time} was given: at the copy of
 *       the group's next record ({@link Exact}). The checkpoint's target offset is checked against the target: the
 *       record there must be a copy of the source partition at or above the committed offset, the copy before it one
 *       below; otherwise a search of the target's copies finds it (the target topic was deleted and made again, or a
 *       checkpoint was wrong), so no record is passed over; or</li>
 *   <li>in <b>time</b> mode otherwise: at the first record whose target ReceiveTime is at or after T - X
 *       ({@link ByTime}), T being the {@code --time} given, or the last consumed record's source ReceiveTime from the
 *       checkpoint ({@code --time last-consumed}), or when the mirror last heard from the source (a partition without
 *       checkpoint, or {@code --time source-silent}); X is {@code --buffer} or derived from the mirror's latencies
 *       ({@link Buffer}).</li>
 * </ul>
 * <b>Skipped</b>: in time mode, where the group has a checkpoint, the records from its position there (the checked
 * target offset, as in exact mode) up to the resume offset: the group had not consumed them at its last checkpoint. A
 * partition is <em>caught up</em> for time mode when that is none, i.e. its position at the last checkpoint is at or
 * after the first copy stamped at T - X. Without a checkpoint the group's position is unknown: at most every record
 * before the resume offset is skipped. {@code apply} skips records only when told to.
 * <p><b>Lost</b>: records at or above the group's position that are not on the target: not copied when the mirror last
 * heard from the source (its last heartbeat), removed by the source's retention before the mirror read them (the
 * gaps it recorded), and copies the target's retention removed. A partition the mirror stopped copying (the target
 * refused a record) says so, with the reason, from the mirror's partition status; a source partition with no
 * partition on the target (a target topic with fewer partitions) is listed with its records, none of them copied.
 * <p><b>Re-reads</b> are records the group had consumed on the source and reads again. In exact mode they are the
 * records between the resume offset and the copy of the committed offset, plus what the group committed on the source
 * after the checkpoint. The first are none unless the mirror was behind the group: its checkpoint then names where
 * the copies went on (the target's log end then), and the plan resumes at the copy of the committed offset (the
 * target's log end when it holds none yet) when every record between is a copy of the source partition below that
 * offset (the group consumed them on the source), else, or when more than {@link TargetFacts#MAX_SCANNED_RECORDS} lie
 * between, at the checkpoint's offset. The second are:
 * <ul>
 *   <li>at most the copies of the source partition at or above the checkpoint's source offset o (the last origin
 *       offset the target holds + 1 - o, less the records of the gaps above o, not below 0);</li>
 *   <li>estimated as min(that, round(r * (S - c))): r the group's {@link CommitRate} before the checkpoint, (o - o') /
 *       (c - c') from the checkpoint's previous reading (o', c') and its own (o, c), commit times of the source's
 *       clock; S when the mirror last heard from the source (the mirror's clock, so S - c also holds the clocks'
 *       difference), or the plan's time when no heartbeat tells; S - c not below 0. A group that committed the same
 *       offset again (r = 0) is estimated at 0;</li>
 *   <li>estimated as the bound when r is unknown: the checkpoint has no previous reading (the first after the mirror
 *       started, or written before mirrors recorded it), the offset was moved back, or c did not advance.</li>
 * </ul>
 * In time mode with a checkpoint they are the records from the resume offset to where the group is estimated to have
 * been when the source went silent (its checked position plus the exact-mode estimate); without one, the records
 * between T - X and T.
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
            boolean uncommitted = checkpoint.filter(MirrorCheckpoint::getNoCommit).isPresent();
            if (!uncommitted && (checkpoint.isEmpty() || request.time().kind() != TimeChoice.Kind.NONE)) {
                times.put(tp, time(state, request, tp, checkpoint));
            }
        });
        Optional<Buffer> buffer = times.isEmpty() ? Optional.empty() : Optional.of(buffer(state, request));
        long silentMs = state.sourceLastHeardMs().orElse(nowMs);
        List<PartitionPlan> plans = new ArrayList<>();
        partitions.forEach((tp, checkpoint) -> {
            if (checkpoint.filter(MirrorCheckpoint::getNoCommit).isPresent()) {
                plans.add(uncommitted(state, tp, checkpoint.get()));
            } else if (times.containsKey(tp)) {
                plans.add(byTime(state, tp, times.get(tp), buffer.orElseThrow(), checkpoint,
                        checkpoint.map(c -> position(state, tp, c, silentMs))));
            } else {
                plans.add(exact(state, tp, checkpoint.orElseThrow(), position(state, tp, checkpoint.get(), silentMs)));
            }
        });
        return new FailoverPlan(request.group(), request.sourceCluster(),
                target.clusterName().or(state::targetCluster).orElse(""), nowMs,
                state.sourceLastHeardMs(), state.lastHeartbeat().map(h -> OptionalLong.of(h.getMirrorTimeMs()))
                .orElse(OptionalLong.empty()), state.lastHeartbeat().map(MirrorHeartbeat::getRecordsBehind).orElse(0L),
                buffer, plans, uncopied(state, plans.stream().map(p -> p.partition().topic()).distinct().toList()),
                target.members(request.group()));
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

    /**
     * Where the group is on the target according to its checkpoint, checked against the target's copies, and what it
     * committed on the source after the checkpoint.
     *
     * @param offset           the copy of the group's next record, or where it will land (checked); not below the log
     *                         start
     * @param checkpointOffset the checkpoint's target offset when the check moved {@code offset} from it
     * @param below            copies between {@code offset} and the copy of the committed offset: consumed on the
     *                         source (the mirror was behind the group)
     * @param aboveAtMost      copies at or above the committed offset: what the group may have consumed after the
     *                         checkpoint, at most
     * @param aboveEstimate    of those, what it is estimated to have consumed
     * @param removedOnTarget  copies from the checkpoint's offset up to the log start, removed by the target's
     *                         retention
     * @param logEndOffset     the target partition's log end offset
     */
    private record Position(long offset, OptionalLong checkpointOffset, long below, long aboveAtMost,
                            long aboveEstimate, long removedOnTarget, long logEndOffset) {
    }

    /** @param silentMs S: when the source went silent, or the plan's time when unknown */
    private Position position(MirrorState state, TopicPartition tp, MirrorCheckpoint checkpoint, long silentMs) {
        OriginPartition origin = origin(state, checkpoint);
        long committed = checkpoint.getSourceOffset();
        long checkpointOffset = checkpoint.getTargetOffset();
        OffsetLookup end = target.recordAt(tp, Long.MAX_VALUE);
        long logStart = end.logStartOffset();
        long logEnd = end.logEndOffset();
        OptionalLong copyOfCommitted = copyOfCommitted(tp, origin, committed, checkpointOffset, logStart, logEnd);
        long held = Math.min(Math.max(checkpointOffset, logStart), logEnd);
        // where the copy of the committed offset is, or lands when the target holds none yet: its log end
        long resumeAt = copyOfCommitted.orElse(logEnd);
        boolean moved = copyOfCommitted.isPresent() && resumeAt < checkpointOffset
                || resumeAt > held && target.onlyCopiesBelow(tp, held, resumeAt, origin, committed);
        long offset = moved ? resumeAt : held;
        Optional<TargetFacts.Copy> last = target.lastCopy(tp, origin);
        long nextCopyAtOrAbove = copyOfCommitted.orElse(last.map(c -> c.offset() + 1).orElse(offset));
        long below = Math.max(0, nextCopyAtOrAbove - offset);
        long removedBySource = state.removedBySource(tp, Optional.of(checkpoint), committed);
        long above = last.map(c -> Math.max(0, c.originOffset() + 1 - committed - removedBySource)).orElse(0L);
        long estimate = CommitRate.of(checkpoint).map(r -> Math.min(above,
                r.recordsIn(silentMs - checkpoint.getSourceCommitTimeMs()))).orElse(above);
        long removedOnTarget = moved && offset < checkpointOffset ? 0 : Math.max(0, logStart - checkpointOffset);
        return new Position(offset, moved ? OptionalLong.of(checkpointOffset) : OptionalLong.empty(), below, above,
                estimate, removedOnTarget, logEnd);
    }

    /**
     * The first copy of the origin at or above {@code committed}: the checkpoint's offset when the record there is
     * one and the copy before it is below (two reads), else found by searching the target's copies; empty when the
     * target holds none.
     */
    private OptionalLong copyOfCommitted(TopicPartition tp, OriginPartition origin, long committed,
                                         long checkpointOffset, long logStart, long logEnd) {
        if (checkpointOffset >= logStart && checkpointOffset < logEnd) {
            boolean atOrAbove = target.copyAt(tp, checkpointOffset, origin)
                    .filter(c -> c.originOffset() >= committed).isPresent();
            if (atOrAbove && (checkpointOffset == logStart || target.copyAt(tp, checkpointOffset - 1, origin)
                    .filter(c -> c.originOffset() < committed).isPresent())) {
                return OptionalLong.of(checkpointOffset);
            }
        }
        return target.firstCopyAtOrAbove(tp, origin, committed);
    }

    private static OriginPartition origin(MirrorState state, MirrorCheckpoint checkpoint) {
        return new OriginPartition(state.sourceCluster(), checkpoint.getSourceTopic(),
                TopicIds.fromBytes(checkpoint.getSourceTopicId()), checkpoint.getPartition());
    }

    private PartitionPlan exact(MirrorState state, TopicPartition tp, MirrorCheckpoint checkpoint, Position position) {
        OffsetLookup at = target.recordAt(tp, position.offset());
        Optional<CommitRate> rate = CommitRate.of(checkpoint);
        return new PartitionPlan(tp, OptionalLong.of(at.offset()), at.logEndOffset(), times(at),
                position.below() + position.aboveEstimate(),
                OptionalLong.of(position.below() + position.aboveAtMost()), Skipped.NONE,
                lost(state, tp, Optional.of(checkpoint), checkpoint.getSourceOffset(), position.removedOnTarget()),
                new Exact(checkpoint.getSourceTopic(), checkpoint.getSourceOffset(), checkpoint.getSourceCommitTimeMs(),
                        checkpoint.getCheckpointTimeMs(), checkpoint.getMirrorBehind(), rate,
                        position.checkpointOffset()), stopped(state, tp));
    }

    /** @param position the group's position from its checkpoint; empty without one */
    private PartitionPlan byTime(MirrorState state, TopicPartition tp, ResumeTime time, Buffer buffer,
                                 Optional<MirrorCheckpoint> checkpoint, Optional<Position> position) {
        long lookupMs = Math.max(0, time.ms() - buffer.ms());
        OffsetLookup at = target.firstAtReceiveTime(tp, lookupMs);
        long resume = at.offset();
        ByTime basis = new ByTime(time.ms(), time.source(), lookupMs, position.map(p -> OptionalLong.of(p.offset()))
                .orElse(OptionalLong.empty()));
        if (position.isEmpty()) {
            long rereads = Math.max(0, target.firstAtReceiveTime(tp, time.ms()).offset() - resume);
            return new PartitionPlan(tp, OptionalLong.of(resume), at.logEndOffset(), times(at), rereads,
                    OptionalLong.empty(), new Skipped(resume - at.logStartOffset(), false),
                    lost(state, tp, Optional.empty(), 0, 0), basis, stopped(state, tp));
        }
        Position p = position.get();
        long estimatedAtSilence = p.offset() + p.below() + p.aboveEstimate();
        return new PartitionPlan(tp, OptionalLong.of(resume), at.logEndOffset(), times(at),
                Math.max(0, estimatedAtSilence - resume), OptionalLong.empty(),
                new Skipped(Math.max(0, resume - p.offset()), true),
                lost(state, tp, checkpoint, checkpoint.get().getSourceOffset(), p.removedOnTarget()), basis,
                stopped(state, tp));
    }

    private PartitionPlan uncommitted(MirrorState state, TopicPartition tp, MirrorCheckpoint checkpoint) {
        OffsetLookup end = target.recordAt(tp, Long.MAX_VALUE);
        return new PartitionPlan(tp, OptionalLong.empty(), end.logEndOffset(), Optional.empty(), 0,
                OptionalLong.empty(), Skipped.NONE, lost(state, tp, Optional.of(checkpoint), 0, 0),
                new Uncommitted(checkpoint.getCheckpointTimeMs()), stopped(state, tp));
    }

    /** Whether the mirror stopped copying into {@code tp}, and why. */
    private static Optional<MirrorStopped> stopped(MirrorState state, TopicPartition tp) {
        return state.stopped(tp.topic()).stream().filter(s -> s.getPartition() == tp.partition()).findFirst()
                .map(FailoverPlanner::stopped);
    }

    /** The source partitions copied into {@code topics} that have no partition there. */
    private List<MirrorStopped> uncopied(MirrorState state, Collection<String> topics) {
        List<MirrorStopped> uncopied = new ArrayList<>();
        for (String topic : topics) {
            int count = target.partitionCount(topic);
            state.stopped(topic).stream().filter(s -> s.getPartition() >= count)
                    .sorted(Comparator.comparing(MirrorPartitionStatus::getSourceTopic)
                            .thenComparing(MirrorPartitionStatus::getPartition))
                    .forEach(s -> uncopied.add(stopped(s)));
        }
        return uncopied;
    }

    private static MirrorStopped stopped(MirrorPartitionStatus status) {
        MirrorStopReason reason = status.getStopReason();
        return new MirrorStopped(status.getSourceTopic(), status.getPartition(), reason.getSourceOffsetKnown()
                ? OptionalLong.of(reason.getSourceOffset()) : OptionalLong.empty(), reason.getCode().name(),
                reason.getMessage(), status.getRecordsBehind());
    }

    /**
     * The records at or above source offset {@code from} not on the target; the gaps of the checkpoint's source topic,
     * or of every source topic copied into {@code tp} without one.
     */
    private static Lost lost(MirrorState state, TopicPartition tp, Optional<MirrorCheckpoint> checkpoint, long from,
                             long removedOnTarget) {
        return new Lost(state.notCopied(tp), state.removedBySource(tp, checkpoint, from), removedOnTarget);
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
