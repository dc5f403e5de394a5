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
 * Answers one request of the Raft transport from the local Ratis server, without waiting for it: a follower's
 * appendEntries (its log write), a client request (its commit) and the admin requests through Ratis' asynchronous
 * calls; a vote, a leader-election start and an install notice, which Ratis answers only synchronously (a vote
 * persists the term and vote first), on {@code blocking}. So the thread that read the request goes on reading: one
 * group's slow request holds no other group's between the same brokers. What Ratis still does on the calling thread
 * is an appendEntries' first part: its checks under the division's lock, persisting a new term, and handing the
 * entries to the group's log worker (which waits only when that worker's queue is full).
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

    /** The reply to {@code request}; never fails: a failure is the exception reply. */
    CompletableFuture<RaftNettyServerReplyProto> handle(RaftNettyServerRequestProto request) {
        CompletableFuture<RaftNettyServerReplyProto> reply;
        try {
            reply = dispatch(request);
        } catch (IOException | RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.exceptionally(RaftRequestHandler::exceptionReply);
    }

    private CompletableFuture<RaftNettyServerReplyProto> dispatch(RaftNettyServerRequestProto request)
            throws IOException {
        RaftNettyServerReplyProto.Builder reply = RaftNettyServerReplyProto.newBuilder();
        return switch (request.getRaftNettyServerRequestCase()) {
            case APPENDENTRIESREQUEST -> server.appendEntriesAsync(request.getAppendEntriesRequest())
                    .thenApply(answer -> reply.setAppendEntriesReply(answer).build());
            case RAFTCLIENTREQUEST -> clientReply(reply, server.submitClientRequestAsync(
                    ClientProtoUtils.toRaftClientRequest(request.getRaftClientRequest())));
            case REQUESTVOTEREQUEST -> blocking(() -> reply.setRequestVoteReply(
                    server.requestVote(request.getRequestVoteRequest())).build());
            case STARTLEADERELECTIONREQUEST -> blocking(() -> reply.setStartLeaderElectionReply(
                    server.startLeaderElection(request.getStartLeaderElectionRequest())).build());
            case INSTALLSNAPSHOTREQUEST -> blocking(() -> reply.setInstallSnapshotReply(
                    server.installSnapshot(request.getInstallSnapshotRequest())).build());
            case TRANSFERLEADERSHIPREQUEST -> clientReply(reply, server.transferLeadershipAsync(
                    ClientProtoUtils.toTransferLeadershipRequest(request.getTransferLeadershipRequest())));
            case SNAPSHOTMANAGEMENTREQUEST -> clientReply(reply, server.snapshotManagementAsync(
                    ClientProtoUtils.toSnapshotManagementRequest(request.getSnapshotManagementRequest())));
            case LEADERELECTIONMANAGEMENTREQUEST -> clientReply(reply, server.leaderElectionManagementAsync(
                    ClientProtoUtils.toLeaderElectionManagementRequest(
                            request.getLeaderElectionManagementRequest())));
            case SETCONFIGURATIONREQUEST -> clientReply(reply, server.setConfigurationAsync(
                    ClientProtoUtils.toSetConfigurationRequest(request.getSetConfigurationRequest())));
            case GROUPMANAGEMENTREQUEST -> clientReply(reply, server.groupManagementAsync(
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

    private static CompletableFuture<RaftNettyServerReplyProto> clientReply(
            RaftNettyServerReplyProto.Builder reply, CompletableFuture<RaftClientReply> answer) {
        return answer.thenApply(client -> reply.setRaftClientReply(ClientProtoUtils.toRaftClientReplyProto(client))
                .build());
    }

    private CompletableFuture<RaftNettyServerReplyProto> blocking(BlockingCall call) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return call.answer();
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        }, blocking);
    }

    private static RaftNettyServerReplyProto exceptionReply(Throwable failure) {
        IOException e = IOUtils.asIOException(JavaUtils.unwrapCompletionException(failure));
        return RaftNettyServerReplyProto.newBuilder().setExceptionReply(RaftNettyExceptionReplyProto.newBuilder()
                .setException(ProtoUtils.writeObject2ByteString(e))).build();
    }

    @FunctionalInterface
    private interface BlockingCall {
        RaftNettyServerReplyProto answer() throws IOException;
    }
}
