package io.tidemark.replication.raft.netty;

import io.tidemark.core.server.EventLoops;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcReplyProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.ProtoUtils;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Proxy;
import java.net.ConnectException;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two Raft server transports on 127.0.0.1, a leader's calling a follower's, and a Raft client's transport calling the
 * follower, whose Ratis server is a double that holds each group's appendEntries and each client request until the
 * test answers it: requests of one group wait for nothing of another's on their shared connection, each reply reaches
 * its own call, and a call fails alone (its time up, the peer's exception, the connection closed or not made, after
 * which the next call connects again). The servers and their peer connections run on one event loop thread, as a
 * broker's share its {@link EventLoops}: nothing may wait on it.
 */
class NettyRaftTransportTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final RaftPeerId LEADER = RaftPeerId.valueOf("leader");
    private static final RaftPeerId FOLLOWER = RaftPeerId.valueOf("follower");
    private static final RaftGroupId SLOW = RaftGroupId.valueOf(new UUID(1, 1));
    private static final RaftGroupId FAST = RaftGroupId.valueOf(new UUID(2, 2));
    private static final RaftGroupId MISSING = RaftGroupId.valueOf(new UUID(3, 3));
    private static final ClientId CLIENT = ClientId.randomId();

    /** The follower's pending appendEntries by group; FAST's is answered at once with next index 7. */
    private final Map<RaftGroupId, CompletableFuture<AppendEntriesReplyProto>> appends = new ConcurrentHashMap<>();
    private final CompletableFuture<RequestVoteReplyProto> vote = new CompletableFuture<>();
    /** The follower's pending client requests by their message; "fast" is answered at once with "ok". */
    private final Map<String, CompletableFuture<RaftClientReply>> clientReplies = new ConcurrentHashMap<>();
    /** The client requests' messages in the order the follower's Ratis server was given them. */
    private final List<String> submitted = new CopyOnWriteArrayList<>();
    /**
     * Released by the test: until then the follower's Ratis server holds the thread that submits a "held" client
     * request, as Ratis' own submission does (it joins the request's run on a Ratis executor).
     */
    private final CountDownLatch held = new CountDownLatch(1);
    private final List<NettyRaftServerRpc> running = new ArrayList<>();
    private final EventLoops loops = EventLoops.start("test-network", 1);
    private long clientCallId;
    private NettyRaftServerRpc follower;
    private NettyRaftServerRpc leader;

    @BeforeEach
    void start() throws IOException {
        appends.put(FAST, CompletableFuture.completedFuture(appendReply(FAST, 7)));
        clientReplies.put("fast", CompletableFuture.completedFuture(clientReply(2, "ok")));
        follower = start(FOLLOWER, 0, 3_000);
        leader = start(LEADER, 0, 1_000);
        leader.addRaftPeers(List.of(peer(FOLLOWER, follower)));
    }

    @AfterEach
    void stop() throws IOException {
        held.countDown();
        for (NettyRaftServerRpc rpc : running) {
            rpc.close();
        }
        loops.close();
    }

    @Test
    void aGroupsSlowAppendHoldsNoOtherGroupsCallOnTheSameConnection() throws Exception {
        CompletableFuture<AppendEntriesReplyProto> slow = CompletableFuture.supplyAsync(() -> append(SLOW));
        await().atMost(WAIT).until(() -> appends.containsKey(SLOW));

        assertEquals(7, leader.appendEntries(appendRequest(FAST)).getNextIndex(), "answered while SLOW's waits");
        assertFalse(slow.isDone());

        appends.get(SLOW).complete(appendReply(SLOW, 42));
        assertEquals(42, slow.get(WAIT.toSeconds(), TimeUnit.SECONDS).getNextIndex(), "SLOW's reply reaches SLOW");
    }

    @Test
    void aVoteWaitingForItsWriteHoldsNoAppendEntries() throws Exception {
        CompletableFuture<RequestVoteReplyProto> voted = CompletableFuture.supplyAsync(() -> {
            try {
                return leader.requestVote(RequestVoteRequestProto.newBuilder()
                        .setServerRequest(header(FAST)).setCandidateTerm(9).build());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        assertEquals(7, leader.appendEntries(appendRequest(FAST)).getNextIndex());
        assertFalse(voted.isDone());

        vote.complete(RequestVoteReplyProto.newBuilder().setTerm(9).setServerReply(
                RaftRpcReplyProto.newBuilder().setSuccess(true)).build());
        assertEquals(9, voted.get(WAIT.toSeconds(), TimeUnit.SECONDS).getTerm());
    }

    @Test
    void theFollowersFailureReachesItsCallAsItsOwnException() {
        GroupMismatchException e = assertThrows(GroupMismatchException.class,
                () -> leader.appendEntries(appendRequest(MISSING)));
        assertEquals("follower: group-" + MISSING.getUuid().toString().substring(24) + " not found.",
                e.getMessage());
    }

    @Test
    void aCallWhoseTimeIsUpFailsAloneAndItsLateReplyIsDropped() throws Exception {
        TimeoutIOException e = assertThrows(TimeoutIOException.class, () -> leader.appendEntries(
                appendRequest(SLOW)));
        assertEquals("Raft call #1 to follower|127.0.0.1:" + follower.getInetSocketAddress().getPort()
                + " timed out after 1000ms", e.getMessage());

        appends.get(SLOW).complete(appendReply(SLOW, 42));
        assertEquals(7, leader.appendEntries(appendRequest(FAST)).getNextIndex(), "the connection goes on");
    }

    @Test
    void theCallsInFlightFailWhenTheConnectionClosesAndTheNextCallConnectsAgain() throws Exception {
        CompletableFuture<AppendEntriesReplyProto> slow = CompletableFuture.supplyAsync(() -> append(SLOW));
        await().atMost(WAIT).until(() -> appends.containsKey(SLOW));

        int port = follower.getInetSocketAddress().getPort();
        follower.close();
        ExecutionException failed = assertThrows(ExecutionException.class, () -> slow.get(WAIT.toSeconds(),
                TimeUnit.SECONDS));
        SocketException cause = assertInstanceOf(SocketException.class, failed.getCause().getCause());
        assertEquals("the connection to follower|127.0.0.1:" + port + " is closed", cause.getMessage());

        follower = start(FOLLOWER, port, 3_000);
        assertEquals(7, leader.appendEntries(appendRequest(FAST)).getNextIndex(), "a new connection");
    }

    @Test
    void aCallToAPeerNotListeningFailsNamingItAndTheNextCallConnectsOnceItListens() throws Exception {
        int port = follower.getInetSocketAddress().getPort();
        follower.close();

        ConnectException e = assertThrows(ConnectException.class, () -> leader.appendEntries(appendRequest(FAST)));
        assertTrue(e.getMessage().startsWith("cannot connect to follower|127.0.0.1:" + port + ": "), e.getMessage());
        assertTrue(e.getMessage().endsWith("Connection refused: /127.0.0.1:" + port), e.getMessage());

        follower = start(FOLLOWER, port, 3_000);
        assertEquals(7, leader.appendEntries(appendRequest(FAST)).getNextIndex(), "a new connection");
    }

    @Test
    void aCallMadeOnTheEventLoopThreadConnectsWithoutWaitingOnIt() throws Exception {
        try (RaftConnections connections = RaftConnections.of("test-peers", new RaftProperties(), Optional.of(loops),
                1)) {
            connections.addRaftPeers(List.of(peer(FOLLOWER, follower)));
            RaftNettyServerRequestProto request = RaftNettyServerRequestProto.newBuilder()
                    .setAppendEntriesRequest(appendRequest(FAST)).build();
            RaftNettyServerReplyProto reply = CompletableFuture.supplyAsync(() -> {
                try {
                    return connections.connection(FOLLOWER).call(request, TimeDuration.ONE_MINUTE);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, loops.group()).thenCompose(answer -> answer).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(7, reply.getAppendEntriesReply().getNextIndex());
        }
    }

    @Test
    void aClientsRequestsAreAnsweredEachWithItsOwnReplyInTheOrderTheyAreReady() throws Exception {
        try (NettyRaftClientRpc client = client()) {
            CompletableFuture<RaftClientReply> slow = client.sendRequestAsync(clientRequest("slow"));
            await().atMost(WAIT).until(() -> clientReplies.containsKey("slow"));

            RaftClientReply fast = client.sendRequestAsync(clientRequest("fast")).get(WAIT.toSeconds(),
                    TimeUnit.SECONDS);
            assertEquals("ok", fast.getMessage().getContent().toStringUtf8());
            assertEquals(2, fast.getCallId());
            assertFalse(slow.isDone());

            clientReplies.get("slow").complete(clientReply(1, "done"));
            RaftClientReply done = slow.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertEquals("done", done.getMessage().getContent().toStringUtf8());
            assertEquals(1, done.getCallId());
        }
    }

    @Test
    void aClientRequestWhoseSubmissionHoldsItsThreadHoldsNoCallOnTheEventLoopNorLetsTheNextOvertakeIt()
            throws Exception {
        clientReplies.put("held", CompletableFuture.completedFuture(clientReply(1, "was held")));
        clientReplies.put("next", CompletableFuture.completedFuture(clientReply(2, "after it")));
        try (NettyRaftClientRpc client = client()) {
            CompletableFuture<RaftClientReply> first = client.sendRequestAsync(clientRequest("held"));
            CompletableFuture<RaftClientReply> second = client.sendRequestAsync(clientRequest("next"));
            await().atMost(WAIT).until(() -> submitted.contains("held"));

            assertEquals(7, CompletableFuture.supplyAsync(() -> append(FAST)).get(WAIT.toSeconds(), TimeUnit.SECONDS)
                    .getNextIndex(), "the event loop thread answers while a submission holds its thread");
            // The next request reached the follower with the held one; it stays unsubmitted while that one is held
            await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> submitted.equals(List.of("held")));
            assertFalse(first.isDone());

            held.countDown();
            assertEquals("was held", first.get(WAIT.toSeconds(), TimeUnit.SECONDS).getMessage().getContent()
                    .toStringUtf8());
            assertEquals("after it", second.get(WAIT.toSeconds(), TimeUnit.SECONDS).getMessage().getContent()
                    .toStringUtf8());
            assertEquals(List.of("held", "next"), submitted);
        }
    }

    @Test
    void aReplyNamingAnotherLeaderFailsTheClientsAsynchronousCallWithItAndIsTheBlockingCallsAnswer() throws Exception {
        try (NettyRaftClientRpc client = client()) {
            RaftClientRequest request = clientRequest("moved");
            RaftPeer leaderPeer = RaftPeer.newBuilder().setId(LEADER).setAddress("127.0.0.1:1").build();
            clientReplies.put("moved", CompletableFuture.completedFuture(RaftClientReply.newBuilder()
                    .setRequest(request).setException(new NotLeaderException(
                            RaftGroupMemberId.valueOf(FOLLOWER, FAST), leaderPeer, List.of(leaderPeer))).build()));

            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> client.sendRequestAsync(request).get(WAIT.toSeconds(), TimeUnit.SECONDS));
            NotLeaderException notLeader = assertInstanceOf(NotLeaderException.class, failed.getCause());
            assertEquals(LEADER, notLeader.getSuggestedLeader().getId());

            RaftClientReply blocking = client.sendRequest(request);
            assertEquals(LEADER, blocking.getNotLeaderException().getSuggestedLeader().getId(),
                    "a blocking call gets the reply, the exception in it, as Ratis' blocking client expects");
        }
    }

    private AppendEntriesReplyProto append(RaftGroupId group) {
        try {
            return leader.appendEntries(appendRequest(group));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private NettyRaftServerRpc start(RaftPeerId id, int port, long callTimeoutMs) throws IOException {
        RaftProperties properties = new RaftProperties();
        NettyConfigKeys.Server.setHost(properties, "127.0.0.1");
        NettyConfigKeys.Server.setPort(properties, port);
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(callTimeoutMs,
                TimeUnit.MILLISECONDS));
        NettyRaftServerRpc rpc = new NettyRaftServerRpc(server(id, properties), Optional.of(loops));
        running.add(rpc);
        rpc.start();
        return rpc;
    }

    /** A Ratis server that answers appendEntries from {@link #appends} and a vote from {@link #vote}. */
    private RaftServer server(RaftPeerId id, RaftProperties properties) {
        return (RaftServer) Proxy.newProxyInstance(RaftServer.class.getClassLoader(), new Class<?>[]{RaftServer.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getId" -> id;
                    case "getProperties" -> properties;
                    case "appendEntriesAsync" -> {
                        RaftGroupId group = ProtoUtils.toRaftGroupId(
                                ((AppendEntriesRequestProto) args[0]).getServerRequest().getRaftGroupId());
                        if (group.equals(MISSING)) {
                            throw new GroupMismatchException(id + ": " + group + " not found.");
                        }
                        yield appends.computeIfAbsent(group, g -> new CompletableFuture<>());
                    }
                    case "requestVote" -> vote.get();
                    case "submitClientRequestAsync" -> {
                        String message = ((RaftClientRequest) args[0]).getMessage().getContent().toStringUtf8();
                        submitted.add(message);
                        if (message.equals("held")) {
                            held.await();
                        }
                        yield clientReplies.computeIfAbsent(message, m -> new CompletableFuture<>());
                    }
                    case "toString" -> "double of " + id;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private NettyRaftClientRpc client() {
        NettyRaftClientRpc client = new NettyRaftClientRpc(ClientId.randomId(), new RaftProperties());
        client.addRaftPeers(List.of(peer(FOLLOWER, follower)));
        return client;
    }

    private static RaftPeer peer(RaftPeerId id, NettyRaftServerRpc rpc) {
        return RaftPeer.newBuilder().setId(id).setAddress("127.0.0.1:" + rpc.getInetSocketAddress().getPort()).build();
    }

    private RaftClientRequest clientRequest(String content) {
        return RaftClientRequest.newBuilder().setClientId(CLIENT).setServerId(FOLLOWER).setGroupId(FAST)
                .setCallId(++clientCallId).setMessage(Message.valueOf(content))
                .setType(RaftClientRequest.writeRequestType()).build();
    }

    private RaftClientReply clientReply(long callId, String answer) {
        return RaftClientReply.newBuilder().setClientId(CLIENT).setServerId(FOLLOWER).setGroupId(FAST)
                .setCallId(callId).setSuccess().setMessage(Message.valueOf(answer)).build();
    }

    private static RaftRpcRequestProto header(RaftGroupId group) {
        return RaftRpcRequestProto.newBuilder().setRequestorId(LEADER.toByteString()).setReplyId(
                FOLLOWER.toByteString()).setRaftGroupId(ProtoUtils.toRaftGroupIdProtoBuilder(group)).build();
    }

    private static AppendEntriesRequestProto appendRequest(RaftGroupId group) {
        return AppendEntriesRequestProto.newBuilder().setServerRequest(header(group)).setLeaderTerm(3).build();
    }

    private static AppendEntriesReplyProto appendReply(RaftGroupId group, long nextIndex) {
        return AppendEntriesReplyProto.newBuilder().setServerReply(RaftRpcReplyProto.newBuilder()
                .setRaftGroupId(ProtoUtils.toRaftGroupIdProtoBuilder(group)).setSuccess(true))
                .setNextIndex(nextIndex).build();
    }
}
