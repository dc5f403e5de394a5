package io.tidemark.core.server;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;

import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Puts the address a call came from, {@code host:port} as this broker sees the connection, into the call's gRPC
 * context, where a service reads it with {@link #current()}: {@code groups describe} shows where each member
 * heartbeats from.
 */
final class ClientAddress implements ServerInterceptor {
    private static final Context.Key<String> KEY = Context.key("tidemark-client-address");

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                      ServerCallHandler<Q, A> next) {
        SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        String address = remote instanceof InetSocketAddress inet ? inet.getHostString() + ":" + inet.getPort()
                : String.valueOf(remote);
        return Contexts.interceptCall(Context.current().withValue(KEY, address), call, headers, next);
    }

    /** The address of the call being served; empty outside a call this interceptor saw. */
    static String current() {
        String address = KEY.get();
        return address == null ? "" : address;
    }
}
