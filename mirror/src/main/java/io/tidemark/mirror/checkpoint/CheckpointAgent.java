package io.tidemark.mirror.checkpoint;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.mirror.sink.OffsetMap;
import io.tidemark.mirror.sink.PartitionCopier;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupPartitionLag;
import io.tidemark.proto.v1.MirrorCheckpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Every {@code checkpoint.interval}: refreshes each copied partition's source log end offset (the lag), then reads
 * the committed offsets of the source's consumer groups whose whole name matches {@code --groups} and, for each
 * committed offset of a copied partition that changed (or has not been written for
 * {@link MirrorStateFormat#CHECKPOINT_REFRESH_MS}, or was written while the mirror was behind the group, or was
 * committed again since a checkpoint that did not show the group standing still: its {@link CommitProgress.Kind}
 * changed), writes a {@link MirrorCheckpoint} to the target: the source offset, its exact translation to the target
 * (from the copier's {@link OffsetMap}, or a {@link TargetOffsetLookup} when it is older than what the copier
 * remembers), the SendTime and source ReceiveTime of the last record the group consumed (read from the source), and
 * the group's previous commit ({@link CommitProgress}), from which the failover tool estimates its rate. A partition
 * of which the target holds nothing yet gets no checkpoint.
 *
 * <p>Not thread-safe: one scheduled task runs it.
 */
public final class CheckpointAgent {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointAgent.class);

    private final TidemarkAdmin source;
    private final TargetOffsetLookup lookup;
    private final MirrorStatePublisher publisher;
    private final Function<TopicPartition, Optional<PartitionCopier>> copiers;
    private final Iterable<PartitionCopier> allCopiers;
    private final Pattern groups;
    private final String sourceCluster;
    private final String targetCluster;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final Map<GroupPartition, Written> written = new HashMap<>();
    private final Map<GroupPartition, CommitProgress> progress = new HashMap<>();

    private record GroupPartition(String group, TopicPartition partition) {
    }

    /**
     * The last checkpoint written of a group's partition; one written while the mirror was behind is redone, and so is
     * one whose progress changed kind since (the group committed the same offset again: it stands still).
     */
    private record Written(long sourceOffset, boolean behind, CommitProgress.Kind progress, long atMs) {
        boolean covers(long offset, CommitProgress.Kind now, long nowMs) {
            return sourceOffset == offset && !behind && progress == now
                    && nowMs - atMs < MirrorStateFormat.CHECKPOINT_REFRESH_MS;
        }
    }

    public CheckpointAgent(TidemarkAdmin source, TargetOffsetLookup lookup, MirrorStatePublisher publisher,
                           Function<TopicPartition, Optional<PartitionCopier>> copiers,
                           Iterable<PartitionCopier> allCopiers, Pattern groups, String sourceCluster,
                           String targetCluster, MirrorMetrics metrics, Clock clock) {
        this.source = source;
        this.lookup = lookup;
        this.publisher = publisher;
        this.copiers = copiers;
        this.allCopiers = allCopiers;
        this.groups = groups;
        this.sourceCluster = sourceCluster;
        this.targetCluster = targetCluster;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** One round: lags, then the checkpoints of every matching group. */
    public void run() {
        for (PartitionCopier copier : allCopiers) {
            copier.sourceLogEndOffset(source.listOffsets(copier.source(), OffsetSpec.latest()).logEndOffset());
        }
        metrics.heardFromSource(clock.millis());
        for (String group : source.listGroups()) {
            if (groups.matcher(group).matches()) {
                checkpointGroup(group);
            }
        }
    }

    private void checkpointGroup(String group) {
        List<GroupPartitionLag> committed;
        try {
            committed = source.describeGroup(group).getPartitionsList();
        } catch (TidemarkException e) {
            if (e.code() == ErrorCode.UNKNOWN_GROUP) {
                return;
            }
            throw e;
        }
        for (GroupPartitionLag partition : committed) {
            TopicPartition tp = new TopicPartition(partition.getTopic(), partition.getPartition());
            copiers.apply(tp).ifPresent(copier -> checkpoint(group, copier, partition));
        }
    }

    private void checkpoint(String group, PartitionCopier copier, GroupPartitionLag committed) {
        long nowMs = clock.millis();
        GroupPartition key = new GroupPartition(group, copier.source());
        CommitProgress.Reading reading = new CommitProgress.Reading(committed.getCommittedOffset(),
                committed.getCommitTimeMs());
        CommitProgress groupProgress = progress.merge(key, CommitProgress.first(reading),
                (known, first) -> known.next(reading));
        long offset = reading.offset();
        Written last = written.get(key);
        if (last != null && last.covers(offset, groupProgress.kind(), nowMs)) {
            return;
        }
        OffsetMap.Translation translation = copier.translate(offset);
        long targetOffset;
        boolean behind = false;
        if (translation instanceof OffsetMap.Exact exact) {
            targetOffset = exact.targetOffset();
            behind = exact.behind();
        } else if (translation instanceof OffsetMap.Unknown unknown) {
            targetOffset = lookup.firstAtOrAbove(copier.target(), copier.origin(), offset, unknown.heldTargetOffset());
        } else {
            LOG.debug("{} of group {}: the target holds nothing of it yet; no checkpoint", copier.source(), group);
            return;
        }
        MirrorCheckpoint.Builder checkpoint = MirrorCheckpoint.newBuilder().setSourceCluster(sourceCluster)
                .setTargetCluster(targetCluster).setGroup(group).setSourceTopic(copier.source().topic())
                .setSourceTopicId(TopicIds.toBytes(copier.origin().topicId()))
                .setPartition(copier.source().partition()).setTargetTopic(copier.target().topic())
                .setSourceOffset(offset).setSourceCommitTimeMs(reading.commitTimeMs())
                .setTargetOffset(targetOffset).setMirrorBehind(behind).setCheckpointTimeMs(nowMs);
        groupProgress.writeTo(checkpoint);
        lastConsumed(copier.source(), offset).ifPresent(record -> checkpoint.setLastConsumedKnown(true)
                .setLastConsumedSendTimeMs(record.sendTimeMs()).setLastConsumedReceiveTimeMs(record.receiveTimeMs()));
        publisher.publish(checkpoint.build());
        metrics.checkpointWritten();
        written.put(key, new Written(offset, behind, groupProgress.kind(), nowMs));
    }

    /** The record before {@code committed} on the source (the last one the group consumed), while the source has it. */
    private Optional<ConsumerRecord> lastConsumed(TopicPartition tp, long committed) {
        if (committed == 0) {
            return Optional.empty();
        }
        try {
            return source.read(tp, committed - 1, 1).stream().filter(r -> r.offset() == committed - 1).findFirst();
        } catch (TidemarkException e) {
            if (e.code() == ErrorCode.OFFSET_OUT_OF_RANGE) {
                return Optional.empty();
            }
            throw e;
        }
    }
}
