package io.tidemark.replication.partition;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.partition.PartitionLeader;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupChangeReply;
import io.tidemark.replication.cluster.ClusterMembers;
import io.tidemark.replication.raft.RaftFollower;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import io.tidemark.replication.raft.RunningDivisions;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import io.tidemark.replication.statemachine.GroupStateMachine;
import io.tidemark.replication.statemachine.PartitionHost;
import io.tidemark.replication.statemachine.PartitionKey;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A partition group as this broker serves it: its replica here (the group's division on the local Raft server) and
 * the way into its log. Batches of any of its partitions go through one {@link GroupCommit}; an entry is submitted
 * straight to the local Raft server when it leads (no client round trip), or forwarded through a Raft client to the
 * leader when this replica does not lead (only the internal topics' appends are forwarded: the others are answered
 * NOT_LEADER before they get here).
 *
 * <p>Thread-safe.
 */
public final class PartitionGroup implements MoveTarget {
    /**
     * Raft entries of the group in flight at once from this broker; the produce requests that arrive meanwhile are
     * coalesced into the next entry ({@link GroupCommit}). One, not two: on fresh clusters, alternating, one gave a
     * lower fixed-rate p99 at 6 and at 100 partitions and a higher maximum at 6, for the same CPU (docs/benchmarks.md,
     * 2026-12-07, eighth session). The appender sends a follower one appendEntries at a time, so what a second entry
     * in flight overlapped was the leader's own write of it.
     */
    public static final int MAX_ENTRIES_IN_FLIGHT = 1;
    /** How long a snapshot asked for by retention may take before the request is given up (the next pass asks again). */
    private static final long SNAPSHOT_TIMEOUT_MS = 60_000;
    /** Longest wait for each leadership event while a handover that refused a batch settles. */
    static final long HANDOVER_WAIT_MS = 1_000;
    /**
     * Leadership events a handover is waited out for, at most: on the old leader of a transfer one event (the new
     * leader known), and the held batches are answered NOT_LEADER; on the new leader one (ready), and they are
     * submitted again.
     */
    private static final int HANDOVER_EVENTS = 6;
    private static final Logger LOG = LoggerFactory.getLogger(PartitionGroup.class);

    /**
     * Ratis refused an entry because leadership is changing hands on this replica: it is stepping down for a
     * transfer, or it was just elected and has not applied its predecessors' entries yet. Nothing was appended, so the
     * entry's batches may be submitted again; {@link #append} waits for the handover to settle.
     */
    private static final class Handover extends RuntimeException {
        private final boolean steppingDown;

        private Handover(boolean steppingDown, String message) {
            super(message, null, false, false);
            this.steppingDown = steppingDown;
        }
    }

    private final RaftGroupId groupId;
    private final List<Integer> replicas;
    private final RaftServer server;
    private final RunningDivisions divisions;
    private final ClusterMembers members;
    private final RaftClients clients;
    private final ClientId localClientId;
    private final AtomicLong callIds = new AtomicLong();
    private final GroupCommit groupCommit;
    private final AtomicBoolean snapshotRequested = new AtomicBoolean();

    /**
     * The Raft client of the group, for appends forwarded to its leader. Ratis closes a client's request window after
     * its retries ran out, so a client that failed is discarded and the next append gets a new one.
     */
    public interface RaftClients {
        RaftClient get();

        void discard(RaftClient failed);
    }

    /**
     * @param replicas  the group's replicas, the preferred leader first
     * @param divisions where this broker's replica of the group is found once it runs, without waiting
     * @param localClientId the client id of this broker's submissions to the local Raft server: its state machines
     *                      take their batches as admitted here
     * @param callbacks where the group's replies are handled, one at a time ({@link GroupCommit}): never a Ratis thread
     * @param backlog   the broker's bound on produced batches not answered yet, shared by its groups
     */
    public PartitionGroup(RaftGroupId groupId, List<Integer> replicas, RaftServer server, RunningDivisions divisions,
                          ClusterMembers members, RaftClients clients, ClientId localClientId, Executor callbacks,
                          ProduceBacklog backlog) {
        this.groupId = groupId;
        this.localClientId = localClientId;
        this.replicas = List.copyOf(replicas);
        this.server = server;
        this.divisions = divisions;
        this.members = members;
        this.clients = clients;
        this.groupCommit = new GroupCommit(RaftSettings.maxRequestBytes(server.getProperties()), MAX_ENTRIES_IN_FLIGHT,
                this::submit, new GroupCommit.Handovers() {
                    @Override
                    public boolean isHandover(Throwable failure) {
                        return failure instanceof Handover;
                    }

                    @Override
                    public CompletableFuture<Void> settled(Throwable handover) {
                        return afterHandover((Handover) handover, HANDOVER_EVENTS).thenCompose(settled ->
                                division().getInfo().isLeader() ? CompletableFuture.<Void>completedFuture(null)
                                        : CompletableFuture.failedFuture(notLeader(groupId)));
                    }
                }, callbacks, backlog);
    }

    public RaftGroupId id() {
        return groupId;
    }

    /** The group's replicas, the preferred leader first. */
    public List<Integer> replicas() {
        return replicas;
    }

    /** The replica that should lead when it can: the first. */
    public int preferredLeader() {
        return replicas.get(0);
    }

    /** @throws TidemarkException NOT_AVAILABLE while the group is not running here (yet); never waits */
    RaftServer.Division division() {
        return divisions.get(groupId).orElseThrow(() -> new TidemarkException(ErrorCode.NOT_AVAILABLE,
                "the replica of Raft group " + groupId + " on this broker is not running yet"));
    }

    /** @throws TidemarkException NOT_AVAILABLE while the group is not running here yet */
    public GroupStateMachine stateMachine() {
        return (GroupStateMachine) division().getStateMachine();
    }

    /**
     * The partitions this replica of the group hosts.
     *
     * @throws TidemarkException NOT_AVAILABLE while the group is not running here yet
     */
    @Override
    public PartitionHost host() {
        return stateMachine().host();
    }

    /** Whether this replica leads the group now. */
    @Override
    public boolean leads() {
        return divisions.get(groupId).map(division -> division.getInfo().isLeader()).orElse(false);
    }

    /**
     * Appends a batch with the group's next entry; completes with its outcome. A batch Ratis refused because
     * leadership is changing hands here ({@link Handover}: nothing was appended) waits for the handover to end
     * instead of failing at once ({@link GroupCommit}, which keeps the batches' order through it): appended again
     * when this replica leads after it, else answered NOT_LEADER naming the new leader, whom the producer then calls
     * at once. A planned transfer so pauses a producer for the election and no retry backoff.
     */
    CompletableFuture<AppendResult> append(GroupEntryFormat.Submitted batch) {
        return groupCommit.append(batch).exceptionallyCompose(failure -> CompletableFuture.failedFuture(
                notCommitted(failure, batch.partition())));
    }

    /**
     * Submits batches to be stored all or none, in an entry of their own ({@link GroupEntryFormat#ALL_OR_NONE}):
     * transaction markers and batches without a producer id, one per partition. Completes with each batch's outcome,
     * in order: all appended, or all refused with one reason; fails NOT_AVAILABLE when the entry was not committed
     * (a leader change: whether it is stored shows once a leader is ready).
     */
    CompletableFuture<List<GroupEntryFormat.Outcome>> appendAllOrNone(List<GroupEntryFormat.Submitted> batches) {
        return submitOnce(GroupEntryFormat.allOrNone(batches))
                .thenApply(reply -> GroupEntryFormat.readReply(reply, batches.size()));
    }

    /**
     * Completes once the handover that refused an entry has settled here (this replica leads and is ready, or knows
     * another leader); fails with NOT_AVAILABLE when it did not within {@code eventsLeft} leadership events, each
     * waited for up to {@link #HANDOVER_WAIT_MS}.
     */
    private CompletableFuture<Void> afterHandover(Handover handover, int eventsLeft) {
        RaftServer.Division division = division();
        CompletableFuture<Void> next = ((GroupStateMachine) division.getStateMachine()).nextLeadershipEvent();
        DivisionInfo info = division.getInfo();
        boolean settled = info.isLeader() ? !handover.steppingDown && info.isLeaderReady() : info.getLeaderId() != null;
        if (settled) {
            return CompletableFuture.completedFuture(null);
        }
        if (eventsLeft == 0) {
            return CompletableFuture.failedFuture(new TidemarkException(ErrorCode.NOT_AVAILABLE, "leadership of Raft "
                    + "group " + groupId + " is changing hands here and has not settled; retry: " + handover.getMessage()));
        }
        return next.copy().orTimeout(HANDOVER_WAIT_MS, TimeUnit.MILLISECONDS)
                .exceptionallyCompose(timeout -> CompletableFuture.failedFuture(new TidemarkException(
                        ErrorCode.NOT_AVAILABLE, "leadership of Raft group " + groupId + " is changing hands here and "
                        + "did not settle within " + HANDOVER_WAIT_MS + " ms; retry: " + handover.getMessage())))
                .thenCompose(event -> afterHandover(new Handover(false, handover.getMessage()), eventsLeft - 1));
    }

    /**
     * Asks this replica of the group for a snapshot now (one entry past the last is enough), unless one asked for is
     * still being taken: retention deletes only segments a snapshot covers.
     */
    public void requestSnapshot() {
        if (!snapshotRequested.compareAndSet(false, true)) {
            return;
        }
        try {
            server.snapshotManagementAsync(SnapshotManagementRequest.newCreate(localClientId, server.getId(), groupId,
                    callIds.incrementAndGet(), SNAPSHOT_TIMEOUT_MS, 1)).whenComplete((reply, failure) -> {
                        snapshotRequested.set(false);
                        if (failure != null || !reply.isSuccess()) {
                            LOG.warn("Snapshot of Raft group {} for retention failed: {}", groupId,
                                    failure != null ? failure.toString() : reply.getException());
                        }
                    });
        } catch (RuntimeException e) {
            snapshotRequested.set(false);
            LOG.warn("Snapshot of Raft group {} for retention not started: {}", groupId, e.toString());
        }
    }

    /** Submits a change of the partitions the group hosts; completes with the group's answer. */
    @Override
    public CompletableFuture<GroupChangeReply> submitChange(GroupChange change) {
        return submitOnce(GroupEntryFormat.change(change)).thenApply(reply -> {
            try {
                return GroupChangeReply.parseFrom(reply);
            } catch (InvalidProtocolBufferException e) {
                throw new IllegalStateException(groupId + " answered a partition change with no GroupChangeReply", e);
            }
        });
    }

    /** Submits batches copied into a partition the group imports; completes with the group's answer. */
    @Override
    public CompletableFuture<GroupEntryFormat.CopyOutcome> submitCopy(PartitionKey partition, long logStartOffset,
                                                                      ByteBuffer batches) {
        return submitOnce(GroupEntryFormat.copy(partition, logStartOffset, batches))
                .thenApply(GroupEntryFormat::readCopyReply);
    }

    /**
     * Submits a request its caller retries itself: a refusal during a handover fails it NOT_AVAILABLE, like a leader
     * change or a lost quorum, instead of being waited out as {@link #append} does.
     */
    private CompletableFuture<ByteBuffer> submitOnce(ByteString request) {
        return submit(request).exceptionallyCompose(failure -> CompletableFuture.failedFuture(
                notCommitted(failure, groupId)));
    }

    /**
     * Submits a request to the group: straight to the local Raft server when it leads, through a Raft client to the
     * leader otherwise; completes with the state machine's reply.
     */
    private CompletableFuture<ByteBuffer> submit(ByteString request) {
        Message message = Message.valueOf(request);
        RaftServer.Division division = division();
        if (division.getInfo().isLeader()) {
            RaftClientRequest local = RaftClientRequest.newBuilder().setClientId(localClientId)
                    .setServerId(server.getId()).setGroupId(groupId).setCallId(callIds.incrementAndGet())
                    .setMessage(message).setType(RaftClientRequest.writeRequestType()).build();
            try {
                return submitted(server.submitClientRequestAsync(local), null);
            } catch (IOException e) {
                return CompletableFuture.failedFuture(notCommitted(e, groupId));
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
                throw notCommitted(failure, groupId);
            }
            return replyContent(answer);
        });
    }

    /**
     * A Raft failure as a retriable error: the leader changed or the group has no quorum right now. A retry is safe:
     * an idempotent producer's batch that was committed after all is answered with its first result.
     */
    private TidemarkException notCommitted(Throwable failure, Object what) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof TidemarkException e) {
            return e;
        }
        if (cause instanceof NotLeaderException e) {
            return notLeader(e.getSuggestedLeader() == null ? null : e.getSuggestedLeader().getId(), what);
        }
        return new TidemarkException(ErrorCode.NOT_AVAILABLE, "the Raft group of " + what + " did not commit the "
                + "entry (leader change or no quorum; retry): " + cause);
    }

    private ByteBuffer replyContent(RaftClientReply reply) {
        if (reply.getException() instanceof LeaderSteppingDownException
                || reply.getException() instanceof LeaderNotReadyException) {
            throw new Handover(reply.getException() instanceof LeaderSteppingDownException,
                    String.valueOf(reply.getException()));
        }
        if (!reply.isSuccess()) {
            if (reply.getStateMachineException() != null) {
                throw new TidemarkException(ErrorCode.INVALID_REQUEST, "Raft group " + groupId + " refused the entry: "
                        + reply.getStateMachineException().getMessage());
            }
            if (reply.getNotLeaderException() != null) {
                RaftPeerId leader = reply.getNotLeaderException().getSuggestedLeader() == null ? null
                        : reply.getNotLeaderException().getSuggestedLeader().getId();
                throw notLeader(leader, groupId);
            }
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "Raft group " + groupId + " did not take the entry: "
                    + reply.getException());
        }
        return reply.getMessage().getContent().asReadOnlyByteBuffer();
    }

    /** NOT_LEADER for {@code what}, naming the group's leader and its epoch (as this replica knows them). */
    TidemarkException notLeader(Object what) {
        return notLeader(leader(), what);
    }

    /** NOT_LEADER naming the leader a Raft server suggested, of an epoch not known with it. */
    private TidemarkException notLeader(RaftPeerId suggested, Object what) {
        return notLeader(suggested == null ? PartitionLeader.NONE : new PartitionLeader(RaftPeerIds.nodeId(suggested),
                0), what);
    }

    private TidemarkException notLeader(PartitionLeader leader, Object what) {
        if (leader.nodeId() == TidemarkException.NO_LEADER) {
            return TidemarkException.notLeader("this broker does not lead " + what + " and no leader is elected yet",
                    TidemarkException.NO_LEADER, "");
        }
        String address = members.find(leader.nodeId()).map(ClusterMembers.Member::clientAddress).orElse("");
        return TidemarkException.notLeader("node " + leader.nodeId() + " leads " + what + ", not this broker",
                leader.nodeId(), leader.epoch(), address);
    }

    /**
     * Throws unless this replica leads and Ratis calls it ready: the first entry of its term is applied, and with it
     * every entry committed before (Ratis' LeaderStateImpl.isReady).
     */
    void checkReadyLeader(Object what) {
        RaftServer.Division division = division();
        if (!division.getInfo().isLeader()) {
            throw notLeader(leader(), what);
        }
        if (!division.getInfo().isLeaderReady()) {
            throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "this broker has just become the leader of " + what
                    + " and is applying what its predecessors committed; retry");
        }
    }

    /** Throws NOT_LEADER unless this replica leads. */
    void checkLeader(Object what) {
        if (!division().getInfo().isLeader()) {
            throw notLeader(leader(), what);
        }
    }

    /**
     * The group's leader as this replica knows it, with the term it leads in ({@link PartitionLeader#NONE} when the
     * group does not run here). Ratis sets a new term and the leader of it one after the other: the two are read
     * between two reads of the same term, so a leader is not paired with a term of its successor's (a tie of epochs
     * goes to the metadata at the client all the same).
     */
    public PartitionLeader leader() {
        Optional<RaftServer.Division> division = divisions.get(groupId);
        if (division.isEmpty()) {
            return PartitionLeader.NONE;
        }
        DivisionInfo info = division.get().getInfo();
        while (true) {
            long term = info.getCurrentTerm();
            RaftPeerId leader = info.getLeaderId();
            if (info.getCurrentTerm() == term) {
                return new PartitionLeader(leader == null ? TidemarkException.NO_LEADER : RaftPeerIds.nodeId(leader),
                        term);
            }
        }
    }

    /**
     * Whether every replica has the same Raft priority in the group's configuration as this replica knows it (true
     * when it is not running here).
     */
    public boolean prioritiesEqual() {
        return divisions.get(groupId).map(division -> division.getGroup().getPeers().stream()
                .map(RaftPeer::getPriority).distinct().count() <= 1).orElse(true);
    }

    /** The Raft term in which this replica leads the group; empty when it does not lead or is not running. */
    public OptionalLong leaderTerm() {
        return divisions.get(groupId).filter(division -> division.getInfo().isLeader())
                .map(division -> OptionalLong.of(division.getInfo().getCurrentTerm())).orElse(OptionalLong.empty());
    }

    /** The group as this replica sees it when it leads; empty when it does not lead or is not running. */
    public Optional<LeaderView> leaderView() {
        return divisions.get(groupId).flatMap(division -> RaftFollower.seenBy(division.getInfo()).map(followers ->
                new LeaderView(division.getInfo().getCurrentTerm(), division.getRaftLog().getLastCommittedIndex(),
                        followers)));
    }

    @Override
    public String toString() {
        return "Raft group " + groupId;
    }
}
