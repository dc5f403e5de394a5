package io.tidemark.replication.raft.netty;

import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyExceptionReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.IOUtils;
import org.apache.ratis.util.JavaUtils;
import org.apache.ratis.util.ProtoUtils;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

/**
 * Answers one request of the Raft transport from the local Ratis server, never waiting on the thread that read it:
 * <ul>
 *   <li>a follower's appendEntries through Ratis' asynchronous call, on the calling thread. What Ratis does there is
 *       its first part: its checks under the division's lock, persisting a new term, and handing the entries to the
 *       group's log worker (which waits only when that worker's queue is full).</li>
 *   <li>a client request (its commit) and the admin requests on the connection's {@code submissions} executor, one
 *       after another in the order they arrived. Ratis' "asynchronous" calls for these run the submission on a Ratis
 *       executor and join it ({@code RaftServerImpl.executeSubmitClientRequestAsync} and
 *       {@code executeSubmitServerRequestAsync}): on an event loop thread that join held every group's traffic on the
 *       loop, for up to 245 ms in a fresh cluster (docs/benchmarks.md, "Ratis' submissions off the event loop"). One
 *       after another keeps a client's requests appended in the order it sent them, as the loop did.</li>
 *   <li>a vote, a leader-election start and an install notice, which Ratis answers only synchronously (a vote
 *       persists the term and vote first), on {@code blocking}.</li>
 * </ul>
 * So the thread that read the request goes on reading: one group's slow request holds no other group's between the
 * same brokers.
 *
 * <p>Every failure becomes the exception reply (Ratis' serialized {@link IOException}).
 */
final class RaftRequestHandler {
    private final RaftServer server;
    private final Executor blocking;

    RaftRequestHandler(RaftServer server, Executor blocking) {
        this.server = server;
        this.blocking = blocking;
    }

    /**
     * The reply to {@code request}; never fails: a failure is the exception reply.
     *
     * @param submissions runs the connection's client and admin requests one after another, in the order given
     */
    CompletableFuture<RaftNettyServerReplyProto> handle(RaftNettyServerRequestProto request, Executor submissions) {
        CompletableFuture<RaftNettyServerReplyProto> reply;
        try {
            reply = dispatch(request, submissions);
        } catch (IOException | RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.exceptionally(RaftRequestHandler::exceptionReply);
    }

    private CompletableFuture<RaftNettyServerReplyProto> dispatch(RaftNettyServerRequestProto request,
                                                                  Executor submissions) throws IOException {
        RaftNettyServerReplyProto.Builder reply = RaftNettyServerReplyProto.newBuilder();
        return switch (request.getRaftNettyServerRequestCase()) {
            case APPENDENTRIESREQUEST -> server.appendEntriesAsync(request.getAppendEntriesRequest())
                    .thenApply(answer -> reply.setAppendEntriesReply(answer).build());
            case RAFTCLIENTREQUEST -> clientReply(reply, submissions, () -> server.submitClientRequestAsync(
                    ClientProtoUtils.toRaftClientRequest(request.getRaftClientRequest())));
            case REQUESTVOTEREQUEST -> blocking(() -> reply.setRequestVoteReply(
                    server.requestVote(request.getRequestVoteRequest())).build());
            case STARTLEADERELECTIONREQUEST -> blocking(() -> reply.setStartLeaderElectionReply(
                    server.startLeaderElection(request.getStartLeaderElectionRequest())).build());
            case INSTALLSNAPSHOTREQUEST -> blocking(() -> reply.setInstallSnapshotReply(
                    server.installSnapshot(request.getInstallSnapshotRequest())).build());
            case TRANSFERLEADERSHIPREQUEST -> clientReply(reply, submissions, () -> server.transferLeadershipAsync(
                    ClientProtoUtils.toTransferLeadershipRequest(request.getTransferLeadershipRequest())));
            case SNAPSHOTMANAGEMENTREQUEST -> clientReply(reply, submissions, () -> server.snapshotManagementAsync(
                    ClientProtoUtils.toSnapshotManagementRequest(request.getSnapshotManagementRequest())));
            case LEADERELECTIONMANAGEMENTREQUEST -> clientReply(reply, submissions,
                    () -> server.leaderElectionManagementAsync(ClientProtoUtils.toLeaderElectionManagementRequest(
                            request.getLeaderElectionManagementRequest())));
            case SETCONFIGURATIONREQUEST -> clientReply(reply, submissions, () -> server.setConfigurationAsync(
                    ClientProtoUtils.toSetConfigurationRequest(request.getSetConfigurationRequest())));
            case GROUPMANAGEMENTREQUEST -> clientReply(reply, submissions, () -> server.groupManagementAsync(
                    ClientProtoUtils.toGroupManagementRequest(request.getGroupManagementRequest())));
            case GROUPLISTREQUEST -> server.getGroupListAsync(
                    ClientProtoUtils.toGroupListRequest(request.getGroupListRequest()))
                    .thenApply(answer -> reply.setGroupListReply(
                            ClientProtoUtils.toGroupListReplyProto(answer)).build());
            case GROUPINFOREQUEST -> server.getGroupInfoAsync(
                    ClientProtoUtils.toGroupInfoRequest(request.getGroupInfoRequest()))
                    .thenApply(answer -> reply.setGroupInfoReply(
                            ClientProtoUtils.toGroupInfoReplyProto(answer)).build());
            case RAFTNETTYSERVERREQUEST_NOT_SET -> throw new IOException(
                    "a Raft request without a request; one of RaftNettyServerRequestProto's is required");
        };
    }

    /** Submits a client or admin request on {@code submissions}; its reply when Ratis answers it. */
    private static CompletableFuture<RaftNettyServerReplyProto> clientReply(RaftNettyServerReplyProto.Builder reply,
            Executor submissions, Call<CompletableFuture<RaftClientReply>> submit) {
        return on(submissions, submit).thenCompose(answer -> answer).thenApply(client -> reply.setRaftClientReply(
                ClientProtoUtils.toRaftClientReplyProto(client)).build());
    }

    private CompletableFuture<RaftNettyServerReplyProto> blocking(Call<RaftNettyServerReplyProto> call) {
        return on(blocking, call);
    }

    /** Runs {@code call} on {@code executor}; its failure fails the future. */
    private static <T> CompletableFuture<T> on(Executor executor, Call<T> call) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return call.run();
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        }, executor);
    }

    private static RaftNettyServerReplyProto exceptionReply(Throwable failure) {
        IOException e = IOUtils.asIOException(JavaUtils.unwrapCompletionException(failure));
        return RaftNettyServerReplyProto.newBuilder().setExceptionReply(RaftNettyExceptionReplyProto.newBuilder()
                .setException(ProtoUtils.writeObject2ByteString(e))).build();
    }

    /** A call into the Ratis server that may throw its {@link IOException}. */
    @FunctionalInterface
    private interface Call<T> {
        T run() throws IOException;
    }
}
