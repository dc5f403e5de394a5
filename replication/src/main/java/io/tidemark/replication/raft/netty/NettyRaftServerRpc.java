package io.tidemark.replication.raft.netty;

import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.ThreadFactoryBuilder;
import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.SimpleChannelInboundHandler;
import io.grpc.netty.shaded.io.netty.channel.group.ChannelGroup;
import io.grpc.netty.shaded.io.netty.channel.group.DefaultChannelGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.GlobalEventExecutor;
import io.tidemark.core.server.EventLoops;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionReplyProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerRpcWithProxy;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A broker's Raft server transport over Netty, speaking {@link RaftCallFormat}: it answers each request when the
 * local Ratis server is done with it ({@link RaftRequestHandler}), not one at a time in order as Ratis' Netty server
 * does, and calls its peers (appendEntries, votes, install notices) through one {@link RaftConnection} per peer, with
 * any number of calls in flight on it. So a follower whose write for one group is slow (an fsync behind the
 * kernel's write-back, a Raft log purge) holds up neither the heartbeats of the other groups from the same leader's
 * broker nor the requests of other connections on the same event loop thread.
 *
 * <p>A peer call waits Ratis' client request timeout plus the request's own; one that times out fails with
 * {@code TimeoutIOException}, and the appender then drops the connection.
 */
public final class NettyRaftServerRpc extends RaftServerRpcWithProxy<RaftConnection, RaftConnections> {
    private static final Logger LOG = LoggerFactory.getLogger(NettyRaftServerRpc.class);
    /** The event loop threads of the server, and of its peer connections, when it runs without a broker's. */
    private static final int OWN_THREADS = 2;

    private final TransportLoops loops;
    /** The connections the server accepted: closed with it, since the loops they run on may run on. */
    private final ChannelGroup accepted = new DefaultChannelGroup("raft-server-connections",
            GlobalEventExecutor.INSTANCE);
    private final ExecutorService blocking;
    private final InetSocketAddress address;
    private final TimeDuration callTimeout;
    private final RaftRequestHandler handler;
    private volatile Channel channel;

    /**
     * @param broker the broker's event loops, which the server's and its peer connections' channels run on; empty
     *               for threads of their own
     */
    public NettyRaftServerRpc(RaftServer server, Optional<EventLoops> broker) {
        super(server::getId, id -> RaftConnections.of(id + "-raft-peers", server.getProperties(), broker,
                OWN_THREADS));
        this.loops = TransportLoops.of(broker, "raft-server", OWN_THREADS);
        this.blocking = Executors.newCachedThreadPool(new ThreadFactoryBuilder()
                .setNameFormat("raft-server-blocking-%d").setDaemon(true).build());
        String host = NettyConfigKeys.Server.host(server.getProperties());
        int port = NettyConfigKeys.Server.port(server.getProperties());
        this.address = host == null || host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
        this.callTimeout = RaftClientConfigKeys.Rpc.requestTimeout(server.getProperties());
        this.handler = new RaftRequestHandler(server, blocking);
    }

    @Override
    public SupportedRpcType getRpcType() {
        return SupportedRpcType.NETTY;
    }

    @Override
    protected void startImpl() throws IOException {
        try {
            channel = new ServerBootstrap().group(loops.loops().group())
                    .channel(loops.loops().serverChannel())
                    // A broker started again on its port binds while its last run's connections are in TIME_WAIT
                    // (the JDK's sockets allow that by default, epoll's do not)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            accepted.add(channel);
                            channel.pipeline().addLast(
                                    new RaftCallFormat.Decoder<>(RaftNettyServerRequestProto.parser()),
                                    RaftCallFormat.Encoder.INSTANCE, new Requests());
                        }
                    }).bind(address).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            throw new IOException(getId() + ": cannot listen for Raft on " + address + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void closeImpl() throws IOException {
        if (channel != null) {
            channel.close().syncUninterruptibly();
        }
        accepted.close().awaitUninterruptibly();
        blocking.shutdownNow();
        super.closeImpl();
        loops.close();
    }

    @Override
    public InetSocketAddress getInetSocketAddress() {
        Channel listening = channel;
        return listening == null ? address : (InetSocketAddress) listening.localAddress();
    }

    @Override
    public RequestVoteReplyProto requestVote(RequestVoteRequestProto request) throws IOException {
        return call(request.getServerRequest(), RaftNettyServerRequestProto.newBuilder()
                .setRequestVoteRequest(request).build()).getRequestVoteReply();
    }

    @Override
    public AppendEntriesReplyProto appendEntries(AppendEntriesRequestProto request) throws IOException {
        return call(request.getServerRequest(), RaftNettyServerRequestProto.newBuilder()
                .setAppendEntriesRequest(request).build()).getAppendEntriesReply();
    }

    @Override
    public InstallSnapshotReplyProto installSnapshot(InstallSnapshotRequestProto request) throws IOException {
        return call(request.getServerRequest(), RaftNettyServerRequestProto.newBuilder()
                .setInstallSnapshotRequest(request).build()).getInstallSnapshotReply();
    }

    @Override
    public StartLeaderElectionReplyProto startLeaderElection(StartLeaderElectionRequestProto request)
            throws IOException {
        return call(request.getServerRequest(), RaftNettyServerRequestProto.newBuilder()
                .setStartLeaderElectionRequest(request).build()).getStartLeaderElectionReply();
    }

    private RaftNettyServerReplyProto call(RaftRpcRequestProto header, RaftNettyServerRequestProto request)
            throws IOException {
        RaftPeerId peer = RaftPeerId.valueOf(header.getReplyId());
        try {
            return getProxies().connection(peer).callAndWait(request,
                    callTimeout.add(header.getTimeoutMs(), TimeUnit.MILLISECONDS));
        } catch (IOException e) {
            getProxies().handleException(peer, e, false);
            throw e;
        }
    }

    /**
     * Hands each request of one connection to the handler and writes its reply when it is ready, on any thread. The
     * connection's client and admin requests are submitted one after another on the blocking pool.
     */
    private final class Requests extends SimpleChannelInboundHandler<RaftCall<RaftNettyServerRequestProto>> {
        private final Executor submissions = MoreExecutors.newSequentialExecutor(blocking);

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, RaftCall<RaftNettyServerRequestProto> call) {
            handler.handle(call.message(), submissions)
                    .thenAccept(reply -> ctx.writeAndFlush(new RaftCall<>(call.id(), reply)));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.warn("{}: closing a Raft connection from {}", getId(), ctx.channel().remoteAddress(), cause);
            ctx.close();
        }
    }
}
