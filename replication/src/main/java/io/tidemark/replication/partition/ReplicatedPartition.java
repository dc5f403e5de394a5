package io.tidemark.replication.partition;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.log.BatchSizeLimit;
import io.tidemark.core.log.HeldOrigin;
import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.SegmentInfo;
import io.tidemark.core.log.TimeLookup;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.PartitionStatus;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.cluster.ClusterMembers;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import io.tidemark.replication.statemachine.PartitionEntryFormat;
import io.tidemark.replication.statemachine.PartitionStateMachine;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A partition this broker holds a replica of: its Raft group's division on the local server. Produce goes
 * through Raft and only on the leader (a follower answers NOT_LEADER naming the leader's client address), except
 * for internal topics, whose appends a follower forwards to the leader through Raft; reads and lookups are
 * served from the local replica's log, which only holds committed, applied batches, and clients read the leader's
 * ({@link #checkClientReadable}).
 *
 * <p>Thread-safe.
 */
public final class ReplicatedPartition implements Partition {
    /**
     * Raft entries of this partition in flight at once from this broker; the produce requests that arrive
     * meanwhile are coalesced into the next entry ({@link GroupCommit}).
     */
    static final int MAX_ENTRIES_IN_FLIGHT = 2;
    private final TopicPartition id;
    private final RaftGroupId groupId;
    private final RaftServer server;
    private final ClusterMembers members;
    private final List<Integer> replicas;
    private final RaftClients clients;
    private final boolean forwardToLeader;
    private final ThreadLocal<RecordBatchValidator> validators = ThreadLocal.withInitial(RecordBatchValidator::new);
    private final ClientId localClientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final GroupCommit groupCommit;
    private final int largestBatchBytes;

    public ReplicatedPartition(TopicPartition id, RaftGroupId groupId, RaftServer server, ClusterMembers members,
                               List<Integer> replicas, RaftClients clients, boolean forwardToLeader) {
        this.id = id;
        this.groupId = groupId;
        this.server = server;
        this.members = members;
        this.replicas = List.copyOf(replicas);
        this.clients = clients;
        this.forwardToLeader = forwardToLeader;
        int maxRequestBytes = RaftSettings.maxRequestBytes(server.getProperties());
        this.largestBatchBytes = PartitionEntryFormat.largestBatchBytes(maxRequestBytes);
        this.groupCommit = new GroupCommit(maxRequestBytes, MAX_ENTRIES_IN_FLIGHT, this::submit);
    }

    private RaftServer.Division division() {
        try {
            return server.getDivision(groupId);
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the replica of " + id + " on this broker is not "
                    + "running yet: " + e.getMessage());
        }
    }

    private PartitionStateMachine stateMachine() {
        return (PartitionStateMachine) division().getStateMachine();
    }

    private PartitionLog log() {
        return stateMachine().log();
    }

    @Override
    public TopicPartition id() {
        return id;
    }

    @Override
    public CompletableFuture<AppendResult> append(ByteBuffer batch) {
        try {
            RaftServer.Division division = division();
            if (!forwardToLeader && !division.getInfo().isLeader()) {
                throw notLeader(division.getInfo().getLeaderId());
            }
            BatchSizeLimit.checkSize(batch, batch.position(), batch.remaining(), log().config().maxBatchBytes(),
                    largestBatchBytes);
            validators.get().validate(batch, batch.position(), batch.remaining(),
                    RecordBatchValidator.SendTimeWindow.UNBOUNDED);
        } catch (TidemarkException e) {
            return CompletableFuture.failedFuture(e);
        }
        return groupCommit.append(batch).exceptionallyCompose(failure -> CompletableFuture.failedFuture(
                notCommitted(failure)));
    }

    /**
     * Submits a request to the group: straight to the local Raft server when it leads (no client round trip),
     * through a Raft client to the leader when this partition forwards; completes with the state machine's reply.
     */
    private CompletableFuture<ByteBuffer> submit(byte[] request) {
        Message message = Message.valueOf(UnsafeByteOperations.unsafeWrap(request));
        RaftServer.Division division = division();
        if (!forwardToLeader || division.getInfo().isLeader()) {
            RaftClientRequest local = RaftClientRequest.newBuilder().setClientId(localClientId)
                    .setServerId(server.getId()).setGroupId(groupId).setCallId(callIds.incrementAndGet())
                    .setMessage(message).setType(RaftClientRequest.writeRequestType()).build();
            try {
                return submitted(server.submitClientRequestAsync(local), null);
            } catch (IOException e) {
                return CompletableFuture.failedFuture(notCommitted(e));
            }
        }
        RaftClient client = clients.get();
        return submitted(client.async().send(message), client);
    }

    private CompletableFuture<ByteBuffer> submitted(CompletableFuture<RaftClientReply> reply, RaftClient client) {
        return reply.handle((answer, failure) -> {
            if (failure != null) {
                if (client != null) {
                    clients.discard(client);
                }
                throw notCommitted(failure);
            }
            return replyContent(answer);
        });
    }

    /**
     * The Raft client of the partition's group. Ratis closes a client's request window after its retries ran
     * out, so a client that failed is discarded and the next append gets a new one.
     */
    public interface RaftClients {
        RaftClient get();

        void discard(RaftClient failed);
    }

    /**
     * A Raft client failure as a retriable error: the leader changed or the group has no quorum right now. A retry
     * is safe: an idempotent producer's batch that was committed after all is answered with its first result.
     */
    private TidemarkException notCommitted(Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof TidemarkException e) {
            return e;
        }
        if (cause instanceof NotLeaderException e) {
            return notLeader(e.getSuggestedLeader() == null ? null : e.getSuggestedLeader().getId());
        }
        return new TidemarkException(ErrorCode.NOT_AVAILABLE, "the Raft group of " + id + " did not commit the batch"
                + " (leader change or no quorum; retry): " + cause);
    }

    private ByteBuffer replyContent(RaftClientReply reply) {
        if (!reply.isSuccess()) {
            if (reply.getNotLeaderException() != null) {
                RaftPeerId leader = reply.getNotLeaderException().getSuggestedLeader() == null ? null
                        : reply.getNotLeaderException().getSuggestedLeader().getId();
                throw notLeader(leader);
            }
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the Raft group of " + id + " did not take the "
                    + "batch: " + reply.getException());
        }
        return reply.getMessage().getContent().asReadOnlyByteBuffer();
    }

    private TidemarkException notLeader(RaftPeerId leader) {
        if (leader == null) {
            return TidemarkException.notLeader("this broker does not lead " + id + " and no leader is elected yet",
                    TidemarkException.NO_LEADER, "");
        }
        int node = RaftPeerIds.nodeId(leader);
        String address = members.find(node).map(ClusterMembers.Member::clientAddress).orElse("");
        return TidemarkException.notLeader("node " + node + " leads " + id + ", not this broker", node, address);
    }

    /**
     * Readable on the leader once Ratis calls it ready: the first entry of its term is applied, and with it every entry
     * committed before (Ratis' LeaderStateImpl.isReady).
     */
    @Override
    public void checkClientReadable() {
        RaftServer.Division division = division();
        if (!division.getInfo().isLeader()) {
            throw notLeader(division.getInfo().getLeaderId());
        }
        if (!division.getInfo().isLeaderReady()) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "this broker has just become the leader of " + id
                    + " and is applying what its predecessors committed; retry");
        }
    }

    @Override
    public LogReadResult read(long offset, int maxBytes) {
        return log().read(offset, maxBytes);
    }

    @Override
    public long highWatermark() {
        return log().logEndOffset();
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
        RaftServer.Division division = division();
        if (!division.getInfo().isLeader()) {
            throw notLeader(division.getInfo().getLeaderId());
        }
        return log().heldOrigin(origin);
    }

    @Override
    public CompletableFuture<Void> nextAppend() {
        return stateMachine().nextAppend();
    }

    @Override
    public PartitionStatus status() {
        RaftServer.Division division;
        PartitionLog log;
        try {
            division = server.getDivision(groupId);
            log = ((PartitionStateMachine) division.getStateMachine()).log();
        } catch (IOException | TidemarkException e) {
            return new PartitionStatus(TidemarkException.NO_LEADER, replicas, 0, 0, 0, 0, -1);
        }
        RaftPeerId leader = division.getInfo().getLeaderId();
        List<SegmentInfo> segments = log.segments();
        return new PartitionStatus(leader == null ? TidemarkException.NO_LEADER : RaftPeerIds.nodeId(leader),
                replicas, log.logStartOffset(), log.logEndOffset(),
                segments.stream().mapToLong(SegmentInfo::sizeBytes).sum(), segments.size(),
                log.lastReceiveTimeMs().orElse(-1));
    }

    /** The first replica of the assignment: the one that should lead when it can. */
    public int preferredLeader() {
        return replicas.get(0);
    }

    /** The Raft term in which this replica leads the group; empty when it does not lead or is not running. */
    public OptionalLong leaderTerm() {
        try {
            RaftServer.Division division = server.getDivision(groupId);
            return division.getInfo().isLeader() ? OptionalLong.of(division.getInfo().getCurrentTerm())
                    : OptionalLong.empty();
        } catch (IOException e) {
            return OptionalLong.empty();
        }
    }

    /**
     * The group as this replica sees it when it leads; empty when it does not lead or is not running.
     *
     * <p>Ratis gives the followers' last answer times (role info) and their match indices in two arrays, both
     * built from its list of log appenders in that list's order; when the two differ in length (the group's
     * members changed in between) the followers are left out, which a caller reads as "not known yet".
     */
    public Optional<LeaderView> leaderView() {
        RaftServer.Division division;
        try {
            division = server.getDivision(groupId);
        } catch (IOException e) {
            return Optional.empty();
        }
        RoleInfoProto role = division.getInfo().getRoleInfoProto();
        long[] matchIndices = division.getInfo().getFollowerMatchIndices();
        if (!role.hasLeaderInfo() || matchIndices == null) {
            return Optional.empty();
        }
        List<ServerRpcProto> answers = role.getLeaderInfo().getFollowerInfoList();
        Map<Integer, LeaderView.Follower> followers = new HashMap<>();
        if (answers.size() == matchIndices.length) {
            for (int i = 0; i < matchIndices.length; i++) {
                followers.put(RaftPeerIds.nodeId(RaftPeerId.valueOf(answers.get(i).getId().getId())),
                        new LeaderView.Follower(matchIndices[i], answers.get(i).getLastRpcElapsedTimeMs()));
            }
        }
        return Optional.of(new LeaderView(role.getLeaderInfo().getTerm(), division.getRaftLog().getLastCommittedIndex(),
                followers));
    }

    @Override
    public void updateConfig(TopicConfig config) {
        log().updateConfig(config);
    }

    @Override
    public void applyRetention(long nowMs) {
        PartitionStateMachine stateMachine = stateMachine();
        stateMachine.log().deleteExpiredSegments(nowMs, stateMachine.snapshotLogEndOffset());
    }

    @Override
    public void flushIfDue(long nowMs) {
        log().maybeFlush(nowMs);
    }

    /** The division belongs to the Raft server, which closes it; nothing to close here. */
    @Override
    public void close() {
    }
}
