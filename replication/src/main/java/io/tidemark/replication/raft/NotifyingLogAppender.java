package io.tidemark.replication.raft;

import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotResult;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.rpc.CallId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppenderBase;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.util.Timestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Comparator;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A leader's replication to one follower of a group over Tidemark's Netty transport, one request at a time, which tells
 * a follower that needs entries the leader no longer has to install a snapshot of its own (notification mode,
 * {@code raft.server.log.appender.install.snapshot.enabled} false) instead of sending it the leader's snapshot files.
 * Ratis' Netty transport replicates with its {@code LogAppenderDefault}, which only sends files: a Tidemark snapshot
 * names a position in the partition logs, not their bytes, and a follower catches up by copying segments through the
 * brokers' API when told to ({@code InstallableStateMachine}). Ratis' gRPC appender sends the notice, but on gRPC.
 *
 * <p>Each turn of the loop, when the follower is due a request (entries it lacks, a heartbeat):
 * <ul>
 *   <li>if the follower's next entry is before the leader's log start (purged), or the follower joins the group and
 *       has not been told yet, a notice naming the leader's first entry: at most one per heartbeat interval while the
 *       follower answers "in progress"; its answer "installed at index i" moves the follower to i + 1, from where
 *       the leader sends entries again;</li>
 *   <li>else one appendEntries with the entries after the follower's next (or none: a heartbeat), its answer handled
 *       as Ratis' appenders do (success moves the follower on, an inconsistency moves it back, a higher term steps
 *       the leader down); a failed call is retried after Ratis' RPC sleep time.</li>
 * </ul>
 * Between turns it waits for new entries or the next heartbeat, as Ratis' appenders do, on a wake-up that is not lost
 * when the leader appends just before the wait begins ({@link PendingWakeup}).
 *
 * <p>The leader's commit index reaches a follower in each appendEntries, but only up to the entries the follower is
 * known to hold: with no commit-index entries in the log ({@link RaftSettings}), a commit that no entry follows is
 * heard at the next heartbeat, up to half the shortest election timeout later. In a group that tells its followers of
 * each commit at once (the metadata group: every broker answers from what it applied, so a topic just created is
 * known to every broker a few milliseconds later), the appender sends a heartbeat as soon as the leader committed an
 * entry the follower holds and was not told of, one per commit index. A partition group's followers serve nothing
 * until one of them leads, and Ratis' new leader applies every committed entry first: theirs wait, and a batch costs
 * one appendEntries round.
 */
final class NotifyingLogAppender extends LogAppenderBase {
    private static final Logger LOG = LoggerFactory.getLogger(NotifyingLogAppender.class);
    /** Failed calls in a row between two warnings: a follower that is down fails every call. */
    private static final int FAILURES_PER_WARNING = 10;

    private final long noticeIntervalMs;
    /** Whether the follower is told of each commit at once, rather than with the next entries or heartbeat. */
    private final boolean commitsAtOnce;
    /** Ended by new entries, a commit, or a heartbeat due: Ratis' own wait loses a wake-up ({@link PendingWakeup}). */
    private final PendingWakeup wakeup = new PendingWakeup();
    /**
     * The commit index the follower could take when the last appendEntries went (the leader's, up to the follower's
     * match index): a commit is told once, whether or not the request could carry it (a heartbeat whose previous entry
     * was purged carries none).
     */
    private long commitTold = RaftLog.INVALID_LOG_INDEX;
    /** When the last install notice went out; null before the first. */
    private Timestamp lastNotice;
    private int failuresInARow;
    /** The follower answered the last notice "in progress": the notices that follow are logged at DEBUG only. */
    private boolean installing;

    /** @param commitsAtOnce whether the follower is told of each commit at once (see the class comment) */
    NotifyingLogAppender(RaftServer.Division server, LeaderState leaderState, FollowerInfo follower,
                         boolean commitsAtOnce) {
        super(server, leaderState, follower);
        noticeIntervalMs = server.properties().minRpcTimeoutMs() / 2;
        this.commitsAtOnce = commitsAtOnce;
    }

    @Override
    public long getCallId() {
        return CallId.get();
    }

    @Override
    public Comparator<Long> getCallIdComparator() {
        return CallId.getComparator();
    }

    /**
     * A follower answered with a higher term: the leader steps down (an event on its queue). Ratis' default does this
     * holding the server's lock, which a leader stepping down holds while it waits for its appenders to end: with the
     * answer handled on the appender's own thread, as here (Ratis' gRPC appender handles it on gRPC's), the two wait
     * for each other for good, and every vote and appendEntries the server takes waits behind them (seen in
     * ClusterChaosIT: a leader paused and resumed never stepped down nor heard its new leader).
     */
    @Override
    public boolean onFollowerTerm(long followerTerm) {
        return isRunning() && getLeaderState().onFollowerTerm(getFollower(), followerTerm);
    }

    /** Ratis calls this when the leader appends an entry, commits, or wants a heartbeat sent now. */
    @Override
    public void notifyLogAppender() {
        wakeup.signal();
    }

    @Override
    public void run() throws InterruptedException, IOException {
        while (isRunning()) {
            if (shouldSendAppendEntries() || commitDue()) {
                TermIndex firstAvailable = installNoticeDue();
                if (firstAvailable == null) {
                    appendEntries();
                } else {
                    long waitMs = lastNotice == null ? 0 : noticeIntervalMs - lastNotice.elapsedTimeMs();
                    if (waitMs > 0) {
                        wakeup.await(waitMs, TimeUnit.MILLISECONDS);
                    } else {
                        notifyInstall(firstAvailable);
                    }
                }
            }
            if (isRunning() && !hasAppendEntries() && !commitDue()) {
                wakeup.await(getHeartbeatWaitTimeMs(), TimeUnit.MILLISECONDS);
            }
            getLeaderState().checkHealth(getFollower());
        }
    }

    /**
     * The leader's first entry, when the follower is to be told to install a snapshot: it needs an entry before it,
     * or it joins the group and has not been told yet; else null.
     */
    private TermIndex installNoticeDue() {
        FollowerInfo follower = getFollower();
        RaftLog log = getRaftLog();
        long leaderNext = log.getNextIndex();
        long leaderStart = log.getStartIndex();
        boolean joining = getLeaderState().isFollowerBootstrapping(follower)
                && !follower.hasAttemptedToInstallSnapshot();
        boolean behindStart = follower.getNextIndex() < leaderNext
                && (follower.getNextIndex() < leaderStart || leaderStart == RaftLog.INVALID_LOG_INDEX);
        if (!joining && !behindStart) {
            return null;
        }
        return Optional.ofNullable(log.getTermIndex(leaderStart))
                .orElseGet(() -> TermIndex.valueOf(getServer().getInfo().getCurrentTerm(), leaderNext));
    }

    /**
     * Whether the follower is to be told of a commit now: the group tells of commits at once, and the leader committed
     * an entry the follower holds past both the commit index last sent and the follower's own. Ratis wakes the
     * appender when its commit index moves.
     */
    private boolean commitDue() {
        return commitsAtOnce
                && commitTheFollowerCanTake() > Math.max(commitTold, getFollower().getCommitIndex());
    }

    private long commitTheFollowerCanTake() {
        return Math.min(getRaftLog().getLastCommittedIndex(), getFollower().getMatchIndex());
    }

    private void notifyInstall(TermIndex firstAvailable) throws InterruptedIOException {
        FollowerInfo follower = getFollower();
        if (!installing) {
            LOG.info("{}: notifying {} (next index {}) to install a snapshot; the leader's log starts at {}", this,
                    follower.getId(), follower.getNextIndex(), firstAvailable);
        }
        lastNotice = Timestamp.currentTime();
        InstallSnapshotReplyProto reply;
        try {
            follower.updateLastRpcSendTime(false);
            reply = getServerRpc().installSnapshot(newInstallSnapshotNotificationRequest(firstAvailable));
            follower.updateLastRpcResponseTime();
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            failed("an install notice", e);
            return;
        }
        failuresInARow = 0;
        installing = reply.getResult() == InstallSnapshotResult.IN_PROGRESS;
        switch (reply.getResult()) {
            case SNAPSHOT_INSTALLED, ALREADY_INSTALLED -> {
                long index = reply.getSnapshotIndex();
                LOG.info("{}: {} is at snapshot {} ({})", this, follower.getId(), index, reply.getResult());
                follower.setSnapshotIndex(index);
                follower.setAttemptedToInstallSnapshot();
                getLeaderState().onFollowerCommitIndex(follower, index);
                follower.updateNextIndex(index + 1);
                if (reply.getResult() == InstallSnapshotResult.SNAPSHOT_INSTALLED
                        && index + 1 >= getRaftLog().getStartIndex()) {
                    getServer().getStateMachine().event().notifySnapshotInstalled(InstallSnapshotResult.SUCCESS,
                            index, follower.getPeer());
                }
            }
            case SUCCESS -> follower.setAttemptedToInstallSnapshot();
            case SNAPSHOT_UNAVAILABLE -> {
                follower.setAttemptedToInstallSnapshot();
                getServer().getStateMachine().event().notifySnapshotInstalled(
                        InstallSnapshotResult.SNAPSHOT_UNAVAILABLE, RaftLog.INVALID_LOG_INDEX, follower.getPeer());
            }
            case NOT_LEADER -> onFollowerTerm(reply.getTerm());
            case IN_PROGRESS -> LOG.debug("{}: {} is installing a snapshot", this, follower.getId());
            default -> LOG.warn("{}: {} answered the install notice {}", this, follower.getId(), reply.getResult());
        }
    }

    private void appendEntries() throws InterruptedException, IOException {
        long commit = commitTheFollowerCanTake();
        AppendEntriesRequestProto request = newAppendEntriesRequest(CallId.getAndIncrement(), !hasAppendEntries());
        if (request == null) {
            return;
        }
        resetHeartbeatTrigger();
        commitTold = commit;
        FollowerInfo follower = getFollower();
        Timestamp sent = Timestamp.currentTime();
        AppendEntriesReplyProto reply;
        try {
            follower.updateLastRpcSendTime(request.getEntriesCount() == 0);
            reply = getServerRpc().appendEntries(request);
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            failed("appendEntries", e);
            if (isRunning()) {
                getServer().properties().rpcSleepTime().sleep();
            }
            return;
        }
        failuresInARow = 0;
        follower.updateLastRpcResponseTime();
        follower.updateLastRespondedAppendEntriesSendTime(sent);
        getLeaderState().onFollowerCommitIndex(follower, reply.getFollowerCommit());
        switch (reply.getResult()) {
            case SUCCESS -> {
                long matched = lastIndexSent(request);
                boolean moved = follower.updateMatchIndex(matched);
                if (matched + 1 > follower.getNextIndex()) {
                    follower.increaseNextIndex(matched + 1);
                    moved = true;
                }
                if (moved) {
                    getLeaderState().onFollowerSuccessAppendEntries(follower);
                }
            }
            case NOT_LEADER -> onFollowerTerm(reply.getTerm());
            case INCONSISTENCY -> {
                long first = request.getEntriesCount() > 0 ? request.getEntries(0).getIndex()
                        : RaftLog.INVALID_LOG_INDEX;
                follower.setNextIndex(getNextIndexForInconsistency(first, reply.getNextIndex()));
            }
            default -> LOG.warn("{}: {} answered appendEntries {}", this, follower.getId(), reply.getResult());
        }
        getLeaderState().onAppendEntriesReply(this, reply);
    }

    /**
     * The last index a successful appendEntries shows the follower to hold as the leader does: its last entry, or for a
     * heartbeat its previous entry. Not the follower's answer: that is the end of its own log, which may hold entries of
     * an older term that no leader committed (a replica that led alone for a moment at start-up, seen in
     * ClusterChaosIT). Taken as matched, they made the leader send from after them, the follower refuse, and the
     * leader's match index send it back there, for good: the follower never caught up, and once the leader stopped,
     * the group could not elect (a candidate that committed entries does not count the vote of a replica with none).
     */
    static long lastIndexSent(AppendEntriesRequestProto request) {
        if (request.getEntriesCount() > 0) {
            return request.getEntries(request.getEntriesCount() - 1).getIndex();
        }
        return request.hasPreviousLog() ? request.getPreviousLog().getIndex() : RaftLog.INVALID_LOG_INDEX;
    }

    /**
     * A call failed: the connection is dropped (and made again at the next call) when it broke, as Ratis does, and
     * also when the call timed out. Seen in CatchUpIT, when Ratis' Netty server answered a connection's requests one
     * at a time, in order: a follower's group shut down on a failed install just after it took an appendEntries, its
     * broker restarted on the same port, and every call of the leader's broker to it timed out for the test's
     * remaining minute, on the connection to the old server, which never answered again.
     */
    private void failed(String call, IOException e) {
        if (failuresInARow++ % FAILURES_PER_WARNING == 0) {
            LOG.warn("{}: {} to {} failed ({} in a row)", this, call, getFollowerId(), failuresInARow, e);
        }
        getServerRpc().handleException(getFollowerId(), e, e instanceof TimeoutIOException);
    }
}
