package io.tidemark.replication.partition;

import io.tidemark.core.log.AppendResult;
import io.tidemark.core.log.HeldOrigin;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.log.TimeLookup;
import io.tidemark.core.partition.AppendWaiters;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.PartitionLeader;
import io.tidemark.core.partition.PartitionStatus;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.replication.cluster.ClusterMembers;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * A partition of which this broker holds no replica. Its leader is its partition group's, as the brokers holding a
 * replica last told ({@link KnownLeaders}, about a second old at most), or {@link TidemarkException#NO_LEADER} when
 * none of the brokers that answer claims it: then a client refreshes its metadata and tries again rather than being
 * sent to a replica that may be down. Every data call is answered with NOT_LEADER naming that leader; its status shows
 * that leader and no offsets.
 */
public final class RemotePartition implements Partition {
    private final TopicPartition id;
    private final ClusterMembers members;
    private final List<Integer> replicas;
    private final UUID groupId;
    private final KnownLeaders leaders;

    /** @param groupId the partition group that hosts it */
    public RemotePartition(TopicPartition id, ClusterMembers members, List<Integer> replicas, UUID groupId,
                           KnownLeaders leaders) {
        this.id = id;
        this.members = members;
        this.replicas = List.copyOf(replicas);
        this.groupId = groupId;
        this.leaders = leaders;
    }

    private TidemarkException elsewhere() {
        PartitionLeader leader = leaders.leaderOf(groupId);
        return TidemarkException.notLeader("this broker holds no replica of " + id + "; its replicas are on nodes "
                + replicas, leader.nodeId(), leader.epoch(), members.find(leader.nodeId())
                .map(ClusterMembers.Member::clientAddress).orElse(""));
    }

    @Override
    public TopicPartition id() {
        return id;
    }

    @Override
    public CompletableFuture<AppendResult> append(ByteBuffer batch) {
        return CompletableFuture.failedFuture(elsewhere());
    }

    @Override
    public void checkClientReadable() {
        throw elsewhere();
    }

    @Override
    public LogReadResult read(long offset, int maxBytes) {
        throw elsewhere();
    }

    @Override
    public LogReadResult readCommitted(long offset, int maxBytes) {
        throw elsewhere();
    }

    @Override
    public long highWatermark() {
        throw elsewhere();
    }

    @Override
    public long lastStableOffset() {
        throw elsewhere();
    }

    @Override
    public long logStartOffset() {
        throw elsewhere();
    }

    @Override
    public long logEndOffset() {
        throw elsewhere();
    }

    @Override
    public TimeLookup lookupByReceiveTime(long receiveTimeMs) {
        throw elsewhere();
    }

    @Override
    public TimeLookup lookupBySendTime(long sendTimeMs) {
        throw elsewhere();
    }

    @Override
    public Optional<HeldOrigin> heldOrigin(OriginPartition origin) {
        throw elsewhere();
    }

    @Override
    public AppendWaiters.Waiter awaitAppend(Runnable onAppend) {
        throw elsewhere();
    }

    @Override
    public PartitionStatus status() {
        return new PartitionStatus(leaders.leaderOf(groupId), replicas, 0, 0, 0, 0, -1, groupId.toString(),
                Optional.empty());
    }

    @Override
    public void applyRetention(long nowMs) {
    }

    @Override
    public void compact(long nowMs, LogCompactor compactor) {
    }

    @Override
    public void flushIfDue(long nowMs) {
    }

    @Override
    public boolean writeBack(long minBytes) {
        return false;
    }

    @Override
    public void close() {
    }
}
