package io.tidemark.mirror.checkpoint;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.mirror.sink.CopiedPartition;
import io.tidemark.mirror.sink.OffsetMap;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupPartitionLag;
import io.tidemark.proto.v1.MirrorCheckpoint;
import io.tidemark.proto.v1.MirrorGap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Every {@code checkpoint.interval}, one round:
 * <ol>
 *   <li>refreshes each copied partition's source log end offset (the lag);</li>
 *   <li>writes the gaps the copiers found (source records removed by retention before they were copied) to the
 *       target as {@link MirrorGap}s; a write that fails is tried again next round;</li>
 *   <li>reads the committed offsets of the source's consumer groups whose whole name matches {@code --groups} and
 *       writes {@link MirrorCheckpoint}s to the target for every copied partition of the topics the group committed
 *       in:
 *     <ul>
 *       <li>a partition with a committed offset: the source offset, its exact translation to the target (from the
 *           copier's {@link OffsetMap}, a {@link TargetPositions} lookup when it is older than what the copier
 *           remembers, or the target partition's log end when the target holds nothing of it yet: every copy lands
 *           after it), the SendTime and source ReceiveTime of the last record the group consumed (read from the
 *           source), and the group's previous commit ({@link CommitProgress}), from which the failover tool
 *           estimates its rate. Written when the offset changed, when the last one was written while the mirror
 *           was behind the group, when the group committed the same offset again since a checkpoint that did not
 *           show it standing still (its {@link CommitProgress.Kind} changed), and every
 *           {@link MirrorStateFormat#CHECKPOINT_REFRESH_MS};</li>
 *       <li>a partition the group has no committed offset on: a checkpoint saying so ({@code no_commit}), so the
 *           failover tool leaves it uncommitted on the target and the group's reset policy applies there, as on
 *           the source. Written when first seen so, and every refresh interval.</li>
 *     </ul></li>
 * </ol>
 * Failures are isolated: a group whose offsets cannot be read, or a partition whose translation or last consumed
 * record cannot be read, is logged and counted ({@code mirror.checkpoint-failures}) and tried again next round, while
 * every other group and partition is checkpointed.
 *
 * <p>Not thread-safe: one scheduled task runs it.
 */
public final class CheckpointAgent {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointAgent.class);

    private final SourceGroups source;
    private final TargetPositions target;
    private final MirrorStateSink sink;
    private final Iterable<? extends CopiedPartition> copiers;
    private final Pattern groups;
    private final String sourceCluster;
    private final String targetCluster;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final Map<GroupPartition, Written> written = new HashMap<>();
    private final Map<GroupPartition, CommitProgress> progress = new HashMap<>();
    /** Gaps taken from the copiers and not stored yet: written by this thread, put back by failed writes. */
    private final ConcurrentLinkedQueue<MirrorGap> unwrittenGaps = new ConcurrentLinkedQueue<>();

    private record GroupPartition(String group, TopicPartition partition) {
    }

    /**
     * The last checkpoint written of a group's partition; one written while the mirror was behind is redone, and so is
     * one whose progress changed kind since (the group committed the same offset again: it stands still).
     *
     * @param sourceOffset the committed offset, or {@link #NO_COMMIT}
     */
    private record Written(long sourceOffset, boolean behind, Optional<CommitProgress.Kind> progress, long atMs) {
        static final long NO_COMMIT = -1;

        boolean covers(long offset, Optional<CommitProgress.Kind> now, long nowMs) {
            return sourceOffset == offset && !behind && progress.equals(now)
                    && nowMs - atMs < MirrorStateFormat.CHECKPOINT_REFRESH_MS;
        }
    }

    public CheckpointAgent(SourceGroups source, TargetPositions target, MirrorStateSink sink,
                           Iterable<? extends CopiedPartition> copiers, Pattern groups, String sourceCluster,
                           String targetCluster, MirrorMetrics metrics, Clock clock) {
        this.source = source;
        this.target = target;
        this.sink = sink;
        this.copiers = copiers;
        this.groups = groups;
        this.sourceCluster = sourceCluster;
        this.targetCluster = targetCluster;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** One round: lags, gaps, then the checkpoints of every matching group. */
    public void run() {
        Map<TopicPartition, CopiedPartition> bySource = new HashMap<>();
        for (CopiedPartition copier : copiers) {
            bySource.put(copier.source(), copier);
            refreshLogEnd(copier);
        }
        writeGaps(bySource.values());
        List<String> sourceGroups;
        try {
            sourceGroups = source.groups();
        } catch (RuntimeException e) {
            failed("listing the source's groups", e);
            return;
        }
        metrics.heardFromSource(clock.millis());
        for (String group : sourceGroups) {
            if (groups.matcher(group).matches()) {
                checkpointGroup(group, bySource);
            }
        }
    }

    private void refreshLogEnd(CopiedPartition copier) {
        try {
            copier.sourceLogEndOffset(source.logEndOffset(copier.source()));
            metrics.heardFromSource(clock.millis());
        } catch (RuntimeException e) {
            failed("reading the log end offset of " + copier.source(), e);
        }
    }

    private void writeGaps(Iterable<CopiedPartition> copied) {
        long nowMs = clock.millis();
        for (CopiedPartition copier : copied) {
            for (CopiedPartition.Gap gap : copier.takeGaps()) {
                unwrittenGaps.add(MirrorGap.newBuilder().setSourceCluster(sourceCluster)
                        .setTargetCluster(targetCluster).setSourceTopic(copier.source().topic())
                        .setSourceTopicId(TopicIds.toBytes(copier.origin().topicId()))
                        .setPartition(copier.source().partition()).setTargetTopic(copier.target().topic())
                        .setFromOffset(gap.fromOffset()).setToOffset(gap.toOffset()).setRecordedTimeMs(nowMs).build());
            }
        }
        for (int i = unwrittenGaps.size(); i > 0; i--) {
            MirrorGap gap = unwrittenGaps.poll();
            sink.publish(gap).whenComplete((stored, error) -> {
                if (error != null) {
                    unwrittenGaps.add(gap);
                }
            });
        }
    }

    private void checkpointGroup(String group, Map<TopicPartition, CopiedPartition> bySource) {
        List<GroupPartitionLag> committed;
        try {
            committed = source.committed(group);
        } catch (RuntimeException e) {
            failed("reading the committed offsets of group " + group, e);
            return;
        }
        Map<TopicPartition, GroupPartitionLag> byPartition = committed.stream().collect(Collectors.toMap(
                c -> new TopicPartition(c.getTopic(), c.getPartition()), c -> c, (a, b) -> b));
        Set<String> topics = byPartition.keySet().stream().map(TopicPartition::topic).collect(Collectors.toSet());
        for (CopiedPartition copier : bySource.values()) {
            if (!topics.contains(copier.source().topic())) {
                continue;
            }
            try {
                GroupPartitionLag offset = byPartition.get(copier.source());
                if (offset == null) {
                    checkpointNoCommit(group, copier);
                } else {
                    checkpoint(group, copier, offset);
                }
            } catch (RuntimeException e) {
                failed("the checkpoint of group " + group + " on " + copier.source(), e);
            }
        }
    }

    private void checkpoint(String group, CopiedPartition copier, GroupPartitionLag committed) {
        long nowMs = clock.millis();
        GroupPartition key = new GroupPartition(group, copier.source());
        CommitProgress.Reading reading = new CommitProgress.Reading(committed.getCommittedOffset(),
                committed.getCommitTimeMs());
        CommitProgress groupProgress = progress.merge(key, CommitProgress.first(reading),
                (known, first) -> known.next(reading));
        long offset = reading.offset();
        Written last = written.get(key);
        Optional<CommitProgress.Kind> kind = Optional.of(groupProgress.kind());
        if (last != null && last.covers(offset, kind, nowMs)) {
            return;
        }
        OffsetMap.Translation translation = copier.translate(offset);
        long targetOffset;
        boolean behind = false;
        if (translation instanceof OffsetMap.Exact exact) {
            targetOffset = exact.targetOffset();
            behind = exact.behind();
        } else if (translation instanceof OffsetMap.Unknown unknown) {
            targetOffset = target.firstCopyAtOrAbove(copier.target(), copier.origin(), offset,
                    unknown.heldTargetOffset());
        } else if (translation instanceof OffsetMap.NothingHeld) {
            targetOffset = target.logEndOffset(copier.target());
            behind = offset > 0;
        } else {
            LOG.debug("{} of group {}: the copier has not asked the target what it holds yet; next round",
                    copier.source(), group);
            return;
        }
        MirrorCheckpoint.Builder checkpoint = header(group, copier, nowMs).setSourceOffset(offset)
                .setSourceCommitTimeMs(reading.commitTimeMs()).setTargetOffset(targetOffset).setMirrorBehind(behind);
        groupProgress.writeTo(checkpoint);
        lastConsumed(copier.source(), offset).ifPresent(record -> checkpoint.setLastConsumedKnown(true)
                .setLastConsumedSendTimeMs(record.sendTimeMs()).setLastConsumedReceiveTimeMs(record.receiveTimeMs()));
        sink.publish(checkpoint.build());
        metrics.checkpointWritten();
        written.put(key, new Written(offset, behind, kind, nowMs));
    }

    private void checkpointNoCommit(String group, CopiedPartition copier) {
        long nowMs = clock.millis();
        GroupPartition key = new GroupPartition(group, copier.source());
        Written last = written.get(key);
        if (last != null && last.covers(Written.NO_COMMIT, Optional.empty(), nowMs)) {
            return;
        }
        progress.remove(key);
        sink.publish(header(group, copier, nowMs).setNoCommit(true).build());
        metrics.checkpointWritten();
        written.put(key, new Written(Written.NO_COMMIT, false, Optional.empty(), nowMs));
    }

    private MirrorCheckpoint.Builder header(String group, CopiedPartition copier, long nowMs) {
        return MirrorCheckpoint.newBuilder().setSourceCluster(sourceCluster).setTargetCluster(targetCluster)
                .setGroup(group).setSourceTopic(copier.source().topic())
                .setSourceTopicId(TopicIds.toBytes(copier.origin().topicId())).setPartition(copier.source().partition())
                .setTargetTopic(copier.target().topic()).setCheckpointTimeMs(nowMs);
    }

    /** The record before {@code committed} on the source (the last one the group consumed), while the source has it. */
    private Optional<ConsumerRecord> lastConsumed(TopicPartition tp, long committed) {
        return committed == 0 ? Optional.empty() : source.recordAt(tp, committed - 1);
    }

    private void failed(String what, RuntimeException e) {
        metrics.checkpointFailed();
        LOG.warn("Checkpoints: {} failed; the rest of the round goes on, and this is tried again next round: {}", what,
                e.toString());
    }
}
