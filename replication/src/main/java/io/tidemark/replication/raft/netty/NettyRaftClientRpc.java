package io.tidemark.replication.raft.netty;

import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.client.impl.RaftClientRpcWithProxy;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoRequest;
import org.apache.ratis.protocol.GroupListRequest;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.LeaderElectionManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.util.TimeDuration;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A Raft client's transport over Netty, speaking {@link RaftCallFormat} to the brokers' {@link NettyRaftServerRpc}:
 * its calls to one broker share one connection, any number in flight. A call waits Ratis' client request timeout plus
 * the request's own. As Ratis' Netty client does, an asynchronous call whose reply names another leader, or a leader
 * not ready yet, fails with that exception, which Ratis' client retries on; a blocking call returns the reply with
 * the exception in it, which Ratis' blocking client takes from there.
 */
public final class NettyRaftClientRpc extends RaftClientRpcWithProxy<RaftConnection> {
    private final RaftConnections connections;
    private final TimeDuration callTimeout;

    /**
     * Its connections run on an event loop thread of its own, never on the broker's: a reply completes the caller's
     * future on that thread, and whatever the caller chained to it runs there.
     */
    public NettyRaftClientRpc(ClientId clientId, RaftProperties properties) {
        this(RaftConnections.of(clientId + "-raft-client", properties, Optional.empty(), 1), properties);
    }

    private NettyRaftClientRpc(RaftConnections connections, RaftProperties properties) {
        super(connections);
        this.connections = connections;
        this.callTimeout = RaftClientConfigKeys.Rpc.requestTimeout(properties);
    }

    @Override
    public CompletableFuture<RaftClientReply> sendRequestAsync(RaftClientRequest request) {
        return call(request).thenCompose(reply -> {
            if (reply.getNotLeaderException() != null) {
                return CompletableFuture.failedFuture(reply.getNotLeaderException());
            }
            if (reply.getLeaderNotReadyException() != null) {
                return CompletableFuture.failedFuture(reply.getLeaderNotReadyException());
            }
            return CompletableFuture.completedFuture(reply);
        });
    }

    /** The reply as it came, a leader's exception in it: Ratis' blocking client redirects from there. */
    @Override
    public RaftClientReply sendRequest(RaftClientRequest request) throws IOException {
        try {
            return call(request).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("a Raft client request to " + request.getServerId()
                    + " was interrupted");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        }
    }

    private CompletableFuture<RaftClientReply> call(RaftClientRequest request) {
        RaftConnection connection;
        try {
            connection = connections.connection(request.getServerId());
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        return connection.call(toProto(request), callTimeout.add(request.getTimeoutMs(), TimeUnit.MILLISECONDS))
                .thenApply(reply -> toReply(request, reply));
    }

    private static RaftClientReply toReply(RaftClientRequest request, RaftNettyServerReplyProto proto) {
        if (request instanceof GroupListRequest) {
            return ClientProtoUtils.toGroupListReply(proto.getGroupListReply());
        }
        if (request instanceof GroupInfoRequest) {
            return ClientProtoUtils.toGroupInfoReply(proto.getGroupInfoReply());
        }
        return ClientProtoUtils.toRaftClientReply(proto.getRaftClientReply());
    }

    private static RaftNettyServerRequestProto toProto(RaftClientRequest request) {
        RaftNettyServerRequestProto.Builder proto = RaftNettyServerRequestProto.newBuilder();
        if (request instanceof GroupManagementRequest r) {
            proto.setGroupManagementRequest(ClientProtoUtils.toGroupManagementRequestProto(r));
        } else if (request instanceof SetConfigurationRequest r) {
            proto.setSetConfigurationRequest(ClientProtoUtils.toSetConfigurationRequestProto(r));
        } else if (request instanceof GroupListRequest r) {
            proto.setGroupListRequest(ClientProtoUtils.toGroupListRequestProto(r));
        } else if (request instanceof GroupInfoRequest r) {
            proto.setGroupInfoRequest(ClientProtoUtils.toGroupInfoRequestProto(r));
        } else if (request instanceof TransferLeadershipRequest r) {
            proto.setTransferLeadershipRequest(ClientProtoUtils.toTransferLeadershipRequestProto(r));
        } else if (request instanceof SnapshotManagementRequest r) {
            proto.setSnapshotManagementRequest(ClientProtoUtils.toSnapshotManagementRequestProto(r));
        } else if (request instanceof LeaderElectionManagementRequest r) {
            proto.setLeaderElectionManagementRequest(ClientProtoUtils.toLeaderElectionManagementRequestProto(r));
        } else {
            proto.setRaftClientRequest(ClientProtoUtils.toRaftClientRequestProto(request));
        }
        return proto.build();
    }
}
