package io.tidemark.client.api;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.tls.TlsMaterial;

import java.io.Closeable;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The gRPC channels of one client, one per broker address, made on first use by the configured factory and shut
 * down together by {@link #close}. One channel per address is enough: a channel multiplexes every concurrent call
 * to its broker over one connection.
 *
 * <p>Every call of a client starts on a channel {@link #get} returns, so this is where the client's token is
 * attached: with a {@link BearerToken} configured, each call carries it as its call credentials ({@code
 * authorization: Bearer <token>}), and a call on a plain-text channel fails instead of sending it.
 *
 * <p>Thread-safe: a concurrent map. A {@link #get} after {@link #close} fails with {@link IllegalStateException}.
 */
final class BrokerChannels implements Closeable {
    /**
     * Largest message a default channel accepts: 64 MiB. A fetch answer holds up to {@code fetch.max.bytes} of
     * batches but always at least one whole batch, which can be larger; 64 MiB leaves room for both.
     */
    static final int MAX_INBOUND_MESSAGE_BYTES = 64 * ConfigChecks.MIB;
    /**
     * The HTTP/2 flow-control window a default channel starts with (gRPC still tunes it from there): one whole FetchMany
     * answer at the default {@code fetch.request.max.bytes}, so that a broker sends it without waiting for the window
     * updates that grpc-java's 1 MiB default needs several times per answer.
     */
    static final int FLOW_CONTROL_WINDOW_BYTES = ConsumerConfig.DEFAULT_FETCH_REQUEST_MAX_BYTES;
    /** How long {@link #close} waits for calls to end before it cancels them, for all channels together. */
    private static final long SHUTDOWN_WAIT_MS = 5_000;

    /**
     * The default channel factory: plaintext netty to {@code host:port}, accepting messages up to 64 MiB. One
     * instance, so that {@link ConnectionSettings} can tell it from the others and refuse a token with it.
     */
    static final Function<String, ManagedChannel> PLAINTEXT = BrokerChannels::plaintext;

    private final Function<String, ManagedChannel> factory;
    private final Optional<ClientInterceptor> credentials;
    private final ConcurrentHashMap<String, Connection> channels = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** A broker's channel, and the channel calls start on: the same one, or it with the token attached. */
    private record Connection(ManagedChannel managed, Channel calls) {
    }

    BrokerChannels(ConnectionSettings connection) {
        this.factory = connection.channelFactory();
        this.credentials = connection.token().map(BrokerChannels::carrying);
    }

    private static ManagedChannel plaintext(String address) {
        return TlsMaterial.channelTo(address, Optional.empty()).maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
                .initialFlowControlWindow(FLOW_CONTROL_WINDOW_BYTES).build();
    }

    /** The channel factory of a TLS client: as {@link #plaintext}, in TLS with {@code tls}'s material. */
    static Function<String, ManagedChannel> tls(TlsMaterial tls) {
        return address -> TlsMaterial.channelTo(address, Optional.of(tls))
                .maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES).initialFlowControlWindow(FLOW_CONTROL_WINDOW_BYTES)
                .build();
    }

    /**
     * The channel to {@code address} ({@code host:port}), made on first use, whose calls carry the token when there
     * is one. A channel whose last connection attempt failed reconnects at once instead of after gRPC's growing
     * backoff (up to 2 minutes): a broker that was down is back within seconds, and this client's own retry backoff
     * already paces the attempts.
     */
    Channel get(String address) {
        if (closed) {
            throw new IllegalStateException("the client is closed; no new call to " + address + " can start");
        }
        Connection connection = channels.computeIfAbsent(address, this::connect);
        if (connection.managed().getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
            connection.managed().resetConnectBackoff();
        }
        return connection.calls();
    }

    private Connection connect(String address) {
        ManagedChannel channel = factory.apply(address);
        return new Connection(channel, credentials.map(c -> ClientInterceptors.intercept(channel, c))
                .orElse(channel));
    }

    /** Makes every call carry {@code token} as its call credentials. */
    private static ClientInterceptor carrying(BearerToken token) {
        return new ClientInterceptor() {
            @Override
            public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options,
                                                         Channel next) {
                return next.newCall(method, options.withCallCredentials(token));
            }
        };
    }

    /** Shuts every channel down, waits up to 5 s in all for calls to end, then cancels the rest. */
    @Override
    public void close() {
        closed = true;
        channels.values().forEach(c -> c.managed().shutdown());
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SHUTDOWN_WAIT_MS);
        try {
            for (Connection connection : channels.values()) {
                connection.managed().awaitTermination(Math.max(0, deadlineNanos - System.nanoTime()),
                        TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeNow();
        }
    }

    /** Shuts every channel down at once, cancelling the calls in flight (their callers see NOT_AVAILABLE). */
    void closeNow() {
        closed = true;
        channels.values().forEach(c -> c.managed().shutdownNow());
    }
}
