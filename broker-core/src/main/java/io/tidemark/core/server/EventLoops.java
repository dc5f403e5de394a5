package io.tidemark.core.server;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;

import java.io.Closeable;
import java.util.concurrent.TimeUnit;

/**
 * A broker's network threads: one Netty event loop group, on epoll where the platform has it (NIO elsewhere), which
 * the client API's gRPC server and the Raft transport both run their connections on (accepting, reading, decoding,
 * writing). One group rather than one per server and per client, and one copy of Netty (grpc-java's shaded one)
 * rather than two: fewer threads to wake per request, and less code for a fresh broker's JIT to compile. Nothing may
 * block on these threads: what waits (a Raft log write, a vote's fsync, a produce's commit) is handed to other threads
 * by the code that reads the request.
 */
public final class EventLoops implements Closeable {
    /** How long {@link #close} lets the threads finish what is queued. */
    private static final long CLOSE_TIMEOUT_MS = 3_000;

    private final EventLoopGroup group;
    private final boolean epoll;

    private EventLoops(EventLoopGroup group, boolean epoll) {
        this.group = group;
        this.epoll = epoll;
    }

    /**
     * Starts {@code threads} event loop threads named {@code name-N}.
     *
     * @param threads at least 1
     */
    public static EventLoops start(String name, int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("event loop threads: " + threads + "; at least 1 is required");
        }
        DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
        return Epoll.isAvailable() ? new EventLoops(new EpollEventLoopGroup(threads, factory), true)
                : new EventLoops(new NioEventLoopGroup(threads, factory), false);
    }

    /** As many threads as the machine has cores. */
    public static EventLoops start(String name) {
        return start(name, Runtime.getRuntime().availableProcessors());
    }

    public EventLoopGroup group() {
        return group;
    }

    /** The listening channel's class for {@link #group()}. */
    public Class<? extends ServerChannel> serverChannel() {
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /** A connection's channel class for {@link #group()}. */
    public Class<? extends SocketChannel> socketChannel() {
        return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    /** Stops the threads once what is queued on them ran, waiting up to 3 s. */
    @Override
    public void close() {
        group.shutdownGracefully(0, CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .awaitUninterruptibly(CLOSE_TIMEOUT_MS + 1_000);
    }

    @Override
    public String toString() {
        return "EventLoops(" + (epoll ? "epoll" : "nio") + ")";
    }
}
