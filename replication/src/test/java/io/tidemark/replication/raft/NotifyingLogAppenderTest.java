package io.tidemark.replication.raft;

import io.tidemark.core.config.BrokerConfig;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real Ratis servers over {@link NettyRaftRpcType}: a member that joins a group whose leader purged its log
 * behind a snapshot is told to install a snapshot of its own (notification mode), answers with the entry before the
 * leader's first (at once, or later, as a member copying the leader's logs does), and then receives every entry after
 * it. Ratis' own Netty appender would send the leader's snapshot
 * files instead, and never call the joining member's {@code notifyInstallSnapshotFromLeader}.
 */
class NotifyingLogAppenderTest {
    private static final RaftGroupId GROUP = RaftGroupId.valueOf(new UUID(5, 6));
    private static final ClientId CLIENT = ClientId.randomId();
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int ENTRIES = 300;

    @TempDir
    Path dir;
    private final List<RaftServer> running = new ArrayList<>();
    private long callId;

    @AfterEach
    void stop() throws IOException {
        for (RaftServer server : running) {
            server.close();
        }
    }

    @Test
    void aMemberJoiningBehindThePurgeIsToldToInstallThenGetsEveryEntryAfterIt() throws Exception {
        joinBehindThePurge(false);
    }

    /**
     * A member that copies the leader's logs answers the notice later: Ratis answers "in progress" meanwhile, and
     * takes the answer at the next notice, which the appender sends a heartbeat interval later.
     */
    @Test
    void aMemberThatAnswersTheNoticeLaterIsAskedAgainUntilItHasInstalled() throws Exception {
        joinBehindThePurge(true);
    }

    /**
     * The metadata group's followers apply an entry as soon as the leader committed it. Heartbeats go 10 s apart here:
     * a follower that heard of the commit only at the next one (with no commit-index entries in the log, an idle
     * group's only news of it) would apply each entry 10 s after its leader.
     */
    @Test
    void theMetadataGroupsFollowersApplyEachCommitWithoutWaitingForAHeartbeat() throws Exception {
        List<RecordingMachine> machines = List.of(new RecordingMachine(false), new RecordingMachine(false),
                new RecordingMachine(false));
        List<RaftServer> servers = new ArrayList<>();
        for (int node = 1; node <= 3; node++) {
            RaftProperties properties = properties(node, new BrokerConfig.RaftTuning(20_000, 40_000, 1 << 20,
                    64 << 10, 1_000_000, true, 1));
            RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(properties, TimeDuration.valueOf(300,
                    TimeUnit.MILLISECONDS));
            RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(properties, TimeDuration.valueOf(600,
                    TimeUnit.MILLISECONDS));
            servers.add(start(node, properties, machines.get(node - 1)));
        }
        RaftGroup group = RaftGroup.valueOf(RaftGroups.METADATA, servers.stream()
                .map(NotifyingLogAppenderTest::peer).toList());
        for (RaftServer server : servers) {
            reply(server.groupManagementAsync(GroupManagementRequest.newAdd(CLIENT, server.getId(), callId++, group)));
        }
        await().atMost(WAIT).until(() -> servers.stream()
                .anyMatch(server -> isLeaderReady(server, RaftGroups.METADATA)));
        int leading = servers.indexOf(servers.stream().filter(server -> isLeaderReady(server, RaftGroups.METADATA))
                .findFirst().orElseThrow());
        for (int i = 0; i < 3; i++) {
            submit(servers.get(leading), RaftGroups.METADATA, ByteString.copyFrom(new byte[100]));
            List<Long> applied = machines.get(leading).applied;
            long last = applied.get(applied.size() - 1);
            await("entry " + last + " applied by every member").atMost(Duration.ofSeconds(5))
                    .until(() -> machines.stream().allMatch(machine -> machine.applied.contains(last)));
        }
    }

    private static boolean isLeaderReady(RaftServer server, RaftGroupId group) {
        try {
            return server.getDivision(group).getInfo().isLeaderReady();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void joinBehindThePurge(boolean answerLater) throws Exception {
        RecordingMachine leaderMachine = new RecordingMachine(false);
        RecordingMachine secondMachine = new RecordingMachine(false);
        RecordingMachine joinerMachine = new RecordingMachine(answerLater);
        RaftServer leader = start(1, leaderMachine);
        RaftServer second = start(2, secondMachine);
        RaftServer joiner = start(3, joinerMachine);
        RaftGroup two = RaftGroup.valueOf(GROUP, peer(leader), peer(second));
        for (RaftServer server : List.of(leader, second)) {
            reply(server.groupManagementAsync(GroupManagementRequest.newAdd(CLIENT, server.getId(), callId++, two)));
        }
        await().atMost(WAIT).until(() -> leader.getDivision(GROUP).getInfo().isLeaderReady()
                || second.getDivision(GROUP).getInfo().isLeaderReady());
        RaftServer leading = leader.getDivision(GROUP).getInfo().isLeader() ? leader : second;
        for (int i = 0; i < ENTRIES; i++) {
            submit(leading, ByteString.copyFrom(new byte[1024]));
        }
        long snapshot = reply(leading.snapshotManagementAsync(SnapshotManagementRequest.newCreate(CLIENT,
                leading.getId(), GROUP, callId++, 30_000))).getLogIndex();
        // Ratis purges after the snapshot, closed segments only (64 KiB here): the log starts after some entries.
        await().atMost(WAIT).until(() -> leading.getDivision(GROUP).getRaftLog().getStartIndex() > 1);
        long leaderStart = leading.getDivision(GROUP).getRaftLog().getStartIndex();
        assertTrue(leaderStart <= snapshot + 1, () -> "the leader purged past its snapshot " + snapshot + ": "
                + leaderStart);

        RaftGroup three = RaftGroup.valueOf(GROUP, peer(leader), peer(second), peer(joiner));
        reply(joiner.groupManagementAsync(GroupManagementRequest.newAdd(CLIENT, joiner.getId(), callId++, three)));
        // The leader commits the new configuration once the joiner caught up.
        CompletableFuture<RaftClientReply> reconfigured = leading.setConfigurationAsync(new SetConfigurationRequest(
                CLIENT, leading.getId(), GROUP, callId++, List.copyOf(three.getPeers())));
        if (answerLater) {
            await().atMost(WAIT).until(() -> !joinerMachine.notices.isEmpty());
            joinerMachine.answer.complete(joinerMachine.snapshot);
        }
        reply(reconfigured);
        for (int i = 0; i < 10; i++) {
            submit(leading, ByteString.copyFrom(new byte[1024]));
        }

        RecordingMachine leadingMachine = leading == leader ? leaderMachine : secondMachine;
        long last = leadingMachine.applied.get(leadingMachine.applied.size() - 1);
        await().atMost(WAIT).until(() -> !joinerMachine.applied.isEmpty()
                && joinerMachine.applied.get(joinerMachine.applied.size() - 1) == last);
        assertEquals(List.of(leaderStart), joinerMachine.notices.stream().map(TermIndex::getIndex).toList(),
                "one notice, naming the leader's first entry");
        assertEquals(leadingMachine.applied.stream().filter(i -> i >= leaderStart).collect(Collectors.toList()),
                joinerMachine.applied, "the joiner applies every entry after the snapshot it answered, once");
    }

    private RaftServer start(int node, RecordingMachine machine) throws IOException {
        RaftProperties properties = properties(node, new BrokerConfig.RaftTuning(300, 600, 64 << 10, 64 << 10,
                1_000_000, true, 1));
        // Purge behind the snapshot whatever the followers hold, as the purge of a busy group ends up doing.
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, true);
        // A snapshot asked for after fewer than 1,024 entries (Ratis' default gap) would not be taken.
        RaftServerConfigKeys.Snapshot.setCreationGap(properties, 1);
        return start(node, properties, machine);
    }

    private RaftProperties properties(int node, BrokerConfig.RaftTuning tuning) {
        return RaftSettings.server(dir.resolve("node-" + node), "127.0.0.1", 0, tuning, new NettyRaftRpcType());
    }

    private RaftServer start(int node, RaftProperties properties, RecordingMachine machine) throws IOException {
        RaftServer server = RaftServer.newBuilder().setServerId(RaftPeerIds.of(node)).setProperties(properties)
                .setStateMachineRegistry(g -> machine).build();
        running.add(server);
        server.start();
        return server;
    }

    private static RaftPeer peer(RaftServer server) {
        return RaftPeer.newBuilder().setId(server.getId())
                .setAddress(server.getServerRpc().getInetSocketAddress()).build();
    }

    private void submit(RaftServer server, ByteString content) throws Exception {
        submit(server, GROUP, content);
    }

    private void submit(RaftServer server, RaftGroupId group, ByteString content) throws Exception {
        reply(server.submitClientRequestAsync(RaftClientRequest.newBuilder().setClientId(CLIENT)
                .setServerId(server.getId()).setGroupId(group).setCallId(callId++)
                .setMessage(Message.valueOf(content)).setType(RaftClientRequest.writeRequestType()).build()));
    }

    private static RaftClientReply reply(CompletableFuture<RaftClientReply> future) throws Exception {
        RaftClientReply reply = future.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertTrue(reply.isSuccess(), () -> "refused: " + reply.getException());
        return reply;
    }

    /**
     * Records the indexes of the entries it applies and the install notices it gets; its snapshot is an index, and
     * it answers a notice at once with the entry before the leader's first, as a member that copied the leader's
     * partition logs up to there would.
     */
    private static final class RecordingMachine extends BaseStateMachine {
        final List<Long> applied = new CopyOnWriteArrayList<>();
        final List<TermIndex> notices = new CopyOnWriteArrayList<>();
        /** The answer to the notice, when the test completes it (answerLater) rather than the notice. */
        final CompletableFuture<TermIndex> answer = new CompletableFuture<>();
        private final boolean answerLater;
        private volatile TermIndex snapshot;

        RecordingMachine(boolean answerLater) {
            this.answerLater = answerLater;
        }

        @Override
        public void initialize(RaftServer server, RaftGroupId group, RaftStorage storage) throws IOException {
            super.initialize(server, group, storage);
            getLifeCycle().startAndTransition(() -> { });
        }

        /** Ratis pauses a state machine, and checks it did, before it reloads it from an installed snapshot. */
        @Override
        public void pause() {
            getLifeCycle().transition(LifeCycle.State.PAUSING);
            getLifeCycle().transition(LifeCycle.State.PAUSED);
        }

        @Override
        public void reinitialize() {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }

        @Override
        public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
            LogEntryProto entry = trx.getLogEntry();
            updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
            applied.add(entry.getIndex());
            return CompletableFuture.completedFuture(Message.EMPTY);
        }

        @Override
        public long takeSnapshot() {
            snapshot = getLastAppliedTermIndex();
            return snapshot.getIndex();
        }

        @Override
        public SnapshotInfo getLatestSnapshot() {
            TermIndex at = snapshot;
            return at == null ? null : new SnapshotInfo() {
                @Override
                public TermIndex getTermIndex() {
                    return at;
                }

                @Override
                public List<FileInfo> getFiles() {
                    return List.of();
                }
            };
        }

        @Override
        public CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(RoleInfoProto roleInfo,
                                                                            TermIndex firstTermIndex) {
            notices.add(firstTermIndex);
            // One leader wrote every entry: the entry before its first has the first's term.
            snapshot = TermIndex.valueOf(firstTermIndex.getTerm(), firstTermIndex.getIndex() - 1);
            return answerLater ? answer : CompletableFuture.completedFuture(snapshot);
        }
    }
}
