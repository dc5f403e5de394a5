package io.tidemark.replication.partition;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.log.BatchAdmission;
import io.tidemark.core.log.HeldOrigin;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.RetentionResult;
import io.tidemark.core.log.SegmentInfo;
import io.tidemark.core.log.TimeLookup;
import io.tidemark.core.partition.AppendWaiters;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.PartitionLeader;
import io.tidemark.core.partition.PartitionStatus;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import io.tidemark.replication.statemachine.HostedPartition;
import io.tidemark.replication.statemachine.PartitionKey;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A partition this broker holds a replica of: one of the partitions its {@link PartitionGroup} hosts. Produce goes
 * through the group's log and only on the group's leader (a follower answers NOT_LEADER naming the leader's client
 * address), except for internal topics, whose appends a follower forwards to the leader; the leader admits each batch
 * first ({@link BatchAdmission}: one well-formed batch within its topic's limits), so replicas only append. Reads and
 * lookups are served from the local replica's log, which only holds committed, applied batches, and clients read
 * the leader's ({@link #checkClientReadable}). Until the group's log has added the partition (a partition change its
 * leader submits once the metadata group assigned it), calls answer NOT_AVAILABLE.
 *
 * <p>Thread-safe.
 */
public final class ReplicatedPartition implements Partition {
    private final TopicPartition id;
    private final PartitionKey key;
    private final PartitionGroup group;
    private final List<Integer> replicas;
    private final boolean forwardToLeader;
    private final int largestBatchBytes;
    private final ThreadLocal<BatchAdmission> admissions = ThreadLocal.withInitial(BatchAdmission::new);

    /**
     * @param forwardToLeader   whether a follower forwards appends to the leader (internal topics) rather than answer
     *                          NOT_LEADER
     * @param largestBatchBytes the largest batch one entry of the group carries
     */
    public ReplicatedPartition(TopicPartition id, PartitionKey key, PartitionGroup group, List<Integer> replicas,
                               boolean forwardToLeader, int largestBatchBytes) {
        this.id = id;
        this.key = key;
        this.group = group;
        this.replicas = List.copyOf(replicas);
        this.forwardToLeader = forwardToLeader;
        this.largestBatchBytes = largestBatchBytes;
    }

    /** The partition in its group: NOT_AVAILABLE until the group's log added it. */
    private HostedPartition hosted() {
        return group.host().partition(key).orElseThrow(() -> new TidemarkException(ErrorCode.NOT_AVAILABLE,
                id + " is being added to its Raft group " + group.id() + "; retry"));
    }

    private PartitionLog log() {
        return hosted().log();
    }

    @Override
    public TopicPartition id() {
        return id;
    }

    /** How the partition's group names it. */
    public PartitionKey key() {
        return key;
    }

    public PartitionGroup group() {
        return group;
    }

    @Override
    public CompletableFuture<AppendResult> append(ByteBuffer batch) {
        try {
            if (!forwardToLeader) {
                group.checkLeader(id);
            }
            return group.append(admit(batch));
        } catch (TidemarkException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The batch as its group's entry takes it, once admitted ({@link BatchAdmission}) under the topic's config here.
     *
     * @throws TidemarkException what the admission refused; NOT_AVAILABLE until the group's log added the partition
     */
    GroupEntryFormat.Submitted admit(ByteBuffer batch) {
        TopicConfig config = log().config();
        BatchAdmission.Admitted admitted = admissions.get().admit(batch, config, largestBatchBytes);
        return new GroupEntryFormat.Submitted(key, batch, admitted.minSendTimeMs(), admitted.maxSendTimeMs(),
                admitted.mirrored());
    }

    /**
     * Readable on the leader once Ratis calls it ready: the first entry of its term is applied, and with it every
     * entry committed before (Ratis' LeaderStateImpl.isReady).
     */
    @Override
    public void checkClientReadable() {
        group.checkReadyLeader(id);
    }

    @Override
    public LogReadResult read(long offset, int maxBytes) {
        return log().read(offset, maxBytes);
    }

    @Override
    public LogReadResult readCommitted(long offset, int maxBytes) {
        return log().readCommitted(offset, maxBytes);
    }

    @Override
    public long highWatermark() {
        return log().logEndOffset();
    }

    @Override
    public long lastStableOffset() {
        return log().lastStableOffset();
    }

    @Override
    public long logStartOffset() {
        return log().logStartOffset();
    }

    @Override
    public long logEndOffset() {
        return log().logEndOffset();
    }

    @Override
    public TimeLookup lookupByReceiveTime(long receiveTimeMs) {
        return log().lookupByReceiveTime(receiveTimeMs);
    }

    @Override
    public TimeLookup lookupBySendTime(long sendTimeMs) {
        return log().lookupBySendTime(sendTimeMs);
    }

    /**
     * Answered by the leader only: a mirror resumes after the offset it names. The leader may not have applied every
     * committed entry yet; a mirror that resumes too early has its first batch refused (ORIGIN_OFFSET_HELD) at apply,
     * on every replica, and asks again.
     */
    @Override
    public Optional<HeldOrigin> heldOrigin(OriginPartition origin) {
        group.checkLeader(id);
        return log().heldOrigin(origin);
    }

    @Override
    public AppendWaiters.Waiter awaitAppend(Runnable onAppend) {
        HostedPartition partition;
        try {
            partition = hosted();
        } catch (TidemarkException e) {
            return AppendWaiters.wokenNow(onAppend);
        }
        return partition.awaitAppend(onAppend);
    }

    @Override
    public PartitionStatus status() {
        HostedPartition hosted;
        try {
            hosted = hosted();
        } catch (TidemarkException e) {
            return new PartitionStatus(PartitionLeader.NONE, replicas, 0, 0, 0, 0, -1,
                    group.id().getUuid().toString(), Optional.empty());
        }
        PartitionLog log = hosted.log();
        List<SegmentInfo> segments = log.segments();
        return new PartitionStatus(group.leader(), replicas, log.logStartOffset(), log.logEndOffset(),
                segments.stream().mapToLong(SegmentInfo::sizeBytes).sum(), segments.size(),
                log.lastReceiveTimeMs().orElse(-1), group.id().getUuid().toString(),
                Optional.of(hosted.partition().getOverridesMap()));
    }

    /**
     * Retention and flushes skip a partition its group has not added yet (or is reloading). Retention keeps what the
     * group's last snapshot does not cover (a restart replays it from the log); when that holds back expired
     * segments, it asks this replica for a snapshot, so the next pass deletes them.
     */
    @Override
    public void applyRetention(long nowMs) {
        hostedNow().ifPresent(hosted -> {
            RetentionResult result = hosted.log().deleteExpiredSegments(nowMs,
                    group.host().snapshotLogEndOffset(key));
            if (result.heldSegments() > 0) {
                group.requestSnapshot();
            }
        });
    }

    /**
     * Compaction, like retention, leaves what the group's last snapshot does not cover: a restart replays it. When
     * that holds back closed segments of a topic that compacts, it asks this replica for a snapshot, so the next pass
     * covers them.
     */
    @Override
    public void compact(long nowMs, LogCompactor compactor) throws IOException {
        Optional<HostedPartition> hosted = hostedNow();
        if (hosted.isEmpty() || !hosted.get().log().config().cleanupPolicy().compacts()) {
            return;
        }
        PartitionLog log = hosted.get().log();
        long snapshotEnd = group.host().snapshotLogEndOffset(key);
        compactor.compact(log, nowMs, snapshotEnd);
        List<SegmentInfo> segments = log.segments();
        if (segments.get(segments.size() - 1).baseOffset() > snapshotEnd) {
            group.requestSnapshot();
        }
    }

    @Override
    public void flushIfDue(long nowMs) {
        hostedNow().ifPresent(hosted -> hosted.log().maybeFlush(nowMs));
    }

    @Override
    public boolean writeBack(long minBytes) {
        Optional<HostedPartition> hosted = hostedNow();
        try {
            return hosted.isPresent() && hosted.get().log().writeBack(minBytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Optional<HostedPartition> hostedNow() {
        try {
            return group.host().partition(key);
        } catch (TidemarkException e) {
            return Optional.empty();
        }
    }

    /** The group's replica belongs to the Raft server, which closes it; nothing to close here. */
    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return id + " in " + group;
    }
}
