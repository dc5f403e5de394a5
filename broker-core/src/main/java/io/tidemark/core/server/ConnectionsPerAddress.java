package io.tidemark.core.server;

import com.codahale.metrics.Meter;
import io.grpc.netty.shaded.io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.util.AsciiString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Bounds the connections one client address may hold open to the broker's client listener
 * ({@code max.connections.per.ip}, as Kafka's): a connection beyond the bound is closed as it is accepted, before
 * TLS or HTTP/2 take any of its bytes, counted in the meter {@code connections.refused} and logged (at most one line
 * per address while it stays over the bound). Wraps the listener's own negotiation (plain text or TLS), which a
 * connection within the bound goes on to.
 *
 * <p>Thread-safe: connections of several event loops count in one map.
 */
final class ConnectionsPerAddress implements InternalProtocolNegotiator.ProtocolNegotiator {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionsPerAddress.class);

    private final InternalProtocolNegotiator.ProtocolNegotiator next;
    private final int max;
    private final Meter refused;
    private final ConcurrentMap<InetAddress, Integer> open = new ConcurrentHashMap<>();
    private final ConcurrentMap<InetAddress, Boolean> logged = new ConcurrentHashMap<>();

    ConnectionsPerAddress(InternalProtocolNegotiator.ProtocolNegotiator next, int max, Meter refused) {
        this.next = next;
        this.max = max;
        this.refused = refused;
    }

    @Override
    public AsciiString scheme() {
        return next.scheme();
    }

    @Override
    public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
        ChannelHandler negotiation = next.newHandler(grpcHandler);
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void handlerAdded(ChannelHandlerContext ctx) {
                InetAddress address = address(ctx.channel().remoteAddress());
                if (address != null && !admit(address)) {
                    ctx.close();
                    return;
                }
                if (address != null) {
                    ctx.channel().closeFuture().addListener(closed -> release(address));
                }
                ctx.pipeline().replace(this, null, negotiation);
            }
        };
    }

    private static InetAddress address(SocketAddress remote) {
        return remote instanceof InetSocketAddress inet ? inet.getAddress() : null;
    }

    private boolean admit(InetAddress address) {
        if (open.merge(address, 1, Integer::sum) <= max) {
            return true;
        }
        release(address);
        refused.mark();
        if (logged.putIfAbsent(address, Boolean.TRUE) == null) {
            LOG.warn("Refused a connection from {}: it holds {} open, max.connections.per.ip is {}",
                    address.getHostAddress(), max, max);
        }
        return false;
    }

    private void release(InetAddress address) {
        Integer left = open.computeIfPresent(address, (a, n) -> n == 1 ? null : n - 1);
        if (left == null || left < max) {
            logged.remove(address);
        }
    }

    /** Connections open from {@code address} now. */
    int open(InetAddress address) {
        return open.getOrDefault(address, 0);
    }

    @Override
    public void close() {
        next.close();
    }
}
