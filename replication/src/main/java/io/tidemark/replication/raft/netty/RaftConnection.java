package io.tidemark.replication.raft.netty;

import io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFuture;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoop;
import io.grpc.netty.shaded.io.netty.channel.SimpleChannelInboundHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.ScheduledFuture;
import io.tidemark.core.server.EventLoops;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.util.NetUtils;
import org.apache.ratis.util.ProtoUtils;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The calling side of one connection of the Raft transport, to one peer: any number of calls in flight, each answered
 * by the reply that carries its id ({@link RaftCallFormat}), in whatever order the peer answers. A call fails with
 * its peer's exception reply, with {@link TimeoutIOException} when its time is up (a reply after that is dropped), or
 * with {@link SocketException} when the connection closes; the connection is not made again: its owner drops it
 * ({@link RaftConnections}).
 */
final class RaftConnection implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(RaftConnection.class);

    private final RaftPeer peer;
    private final ChannelFuture connected;
    private final AtomicLong callIds = new AtomicLong();
    private final Map<Long, CompletableFuture<RaftNettyServerReplyProto>> calls = new ConcurrentHashMap<>();

    private RaftConnection(RaftPeer peer, EventLoops loops, TimeDuration connectTimeout) {
        this.peer = peer;
        this.connected = new Bootstrap().group(loops.group()).channel(loops.socketChannel())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeout.toIntExact(TimeUnit.MILLISECONDS))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channel.pipeline().addLast(new RaftCallFormat.Decoder<>(RaftNettyServerReplyProto.parser()),
                                RaftCallFormat.Encoder.INSTANCE, new Replies());
                    }
                }).connect(NetUtils.createSocketAddr(peer.getAddress()));
    }

    /**
     * Starts connecting to {@code peer}, without waiting: the calls made before the connection is up are sent once it
     * is, and fail when it cannot be made ({@link ConnectException}), or has not been within {@code connectTimeout}.
     * So no thread waits for a connection, not even an event loop thread that answers a call with another.
     *
     * @throws IOException when the peer's address is not one
     */
    static RaftConnection open(RaftPeer peer, EventLoops loops, TimeDuration connectTimeout) throws IOException {
        try {
            return new RaftConnection(peer, loops, connectTimeout);
        } catch (RuntimeException e) {
            throw new IOException("cannot connect to " + peer + ": " + e.getMessage(), e);
        }
    }

    /**
     * Sends {@code request}; the future completes with its reply, or fails with an {@link IOException}: the peer's,
     * {@link TimeoutIOException} after {@code timeout}, or the connection's.
     */
    CompletableFuture<RaftNettyServerReplyProto> call(RaftNettyServerRequestProto request, TimeDuration timeout) {
        long id = callIds.incrementAndGet();
        CompletableFuture<RaftNettyServerReplyProto> reply = new CompletableFuture<>();
        calls.put(id, reply);
        if (connected.isDone()) {
            send(id, request, timeout);
        } else {
            connected.addListener(done -> send(id, request, timeout));
        }
        return reply;
    }

    private void send(long id, RaftNettyServerRequestProto request, TimeDuration timeout) {
        if (!connected.isSuccess()) {
            Throwable cause = connected.cause();
            ConnectException failure = new ConnectException("cannot connect to " + peer + ": "
                    + (cause == null ? "cancelled" : cause.getMessage()));
            failure.initCause(cause);
            fail(id, failure);
            return;
        }
        Channel channel = connected.channel();
        EventLoop loop = channel.eventLoop();
        if (loop.inEventLoop()) {
            sendOnLoop(channel, id, request, timeout);
        } else {
            loop.execute(() -> sendOnLoop(channel, id, request, timeout));
        }
    }

    /**
     * Writes the call and starts its timer, on the connection's event loop: a timer set there is a place in the loop's
     * queue, where a timer of the JDK's ({@code orTimeout}) wakes a thread of its own for each call; the reply, read on
     * the same loop, takes the timer out again.
     */
    private void sendOnLoop(Channel channel, long id, RaftNettyServerRequestProto request, TimeDuration timeout) {
        CompletableFuture<RaftNettyServerReplyProto> reply = calls.get(id);
        if (reply == null) {
            return;
        }
        ScheduledFuture<?> timer = channel.eventLoop().schedule(() -> fail(id, new TimeoutIOException(
                "Raft call #" + id + " to " + peer + " timed out after " + timeout)), timeout.getDuration(),
                timeout.getUnit());
        reply.whenComplete((answer, failure) -> timer.cancel(false));
        channel.writeAndFlush(new RaftCall<>(id, request)).addListener(written -> {
            if (!written.isSuccess()) {
                fail(id, channel.isActive() ? new IOException("sending a Raft request to " + peer + " failed: "
                        + written.cause(), written.cause()) : closed());
            }
        });
        if (!channel.isActive()) {
            fail(id, closed());
        }
    }

    /** {@link #call} and wait for its reply. */
    RaftNettyServerReplyProto callAndWait(RaftNettyServerRequestProto request, TimeDuration timeout)
            throws IOException {
        try {
            return call(request, timeout).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("a Raft request to " + peer + " was interrupted");
        } catch (ExecutionException e) {
            throw (IOException) e.getCause();
        }
    }

    private void fail(long id, IOException failure) {
        CompletableFuture<RaftNettyServerReplyProto> reply = calls.remove(id);
        if (reply != null) {
            reply.completeExceptionally(failure);
        }
    }

    /** A {@link SocketException}, which Ratis takes as a reason to drop the connection and make a new one. */
    private SocketException closed() {
        return new SocketException("the connection to " + peer + " is closed");
    }

    /** Closes the connection, without waiting: the calls in flight on it fail. */
    @Override
    public void close() {
        connected.channel().close();
    }

    @Override
    public String toString() {
        return "RaftConnection to " + peer;
    }

    /** Completes each call with its reply; fails what is in flight once the channel closes. */
    private final class Replies extends SimpleChannelInboundHandler<RaftCall<RaftNettyServerReplyProto>> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, RaftCall<RaftNettyServerReplyProto> call) {
            CompletableFuture<RaftNettyServerReplyProto> reply = calls.remove(call.id());
            if (reply == null) {
                return;
            }
            RaftNettyServerReplyProto message = call.message();
            if (message.hasExceptionReply()) {
                Object failure = ProtoUtils.toObject(message.getExceptionReply().getException());
                reply.completeExceptionally(failure instanceof IOException e ? e
                        : new IOException(peer + " answered a Raft request with " + failure));
            } else {
                reply.complete(message);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            IOException failure = closed();
            for (Long id : calls.keySet()) {
                fail(id, failure);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.warn("Closing the Raft connection to {}", peer, cause);
            ctx.close();
        }
    }
}
