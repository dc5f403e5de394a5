package io.tidemark.client.api;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
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
 * <p>Thread-safe: a concurrent map. A {@link #get} after {@link #close} fails with {@link IllegalStateException}.
 */
final class BrokerChannels implements Closeable {
    /**
     * Largest message a default channel accepts: 64 MiB. A fetch answer holds up to {@code fetch.max.bytes} of
     * batches but always at least one whole batch, which can be larger; 64 MiB leaves room for both.
     */
    static final int MAX_INBOUND_MESSAGE_BYTES = 64 * ConfigChecks.MIB;
    /** How long {@link #close} waits for calls to end before it cancels them, for all channels together. */
    private static final long SHUTDOWN_WAIT_MS = 5_000;

    private final Function<String, ManagedChannel> factory;
    private final ConcurrentHashMap<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private volatile boolean closed;

    BrokerChannels(Function<String, ManagedChannel> factory) {
        this.factory = factory;
    }

    /** The default channel factory: plaintext netty to {@code host:port}, accepting messages up to 64 MiB. */
    static ManagedChannel plaintext(String address) {
        return TlsMaterial.channelTo(address, Optional.empty()).maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
                .build();
    }

    /** The channel factory of a TLS client: as {@link #plaintext}, in TLS with {@code tls}'s material. */
    static Function<String, ManagedChannel> tls(TlsMaterial tls) {
        return address -> TlsMaterial.channelTo(address, Optional.of(tls))
                .maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES).build();
    }

    /**
     * The channel to {@code address} ({@code host:port}), made on first use. A channel whose last connection
     * attempt failed reconnects at once instead of after gRPC's growing backoff (up to 2 minutes): a broker that
     * was down is back within seconds, and this client's own retry backoff already paces the attempts.
     */
    ManagedChannel get(String address) {
        if (closed) {
            throw new IllegalStateException("the client is closed; no new call to " + address + " can start");
        }
        ManagedChannel channel = channels.computeIfAbsent(address, factory);
        if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
            channel.resetConnectBackoff();
        }
        return channel;
    }

    /** Shuts every channel down, waits up to 5 s in all for calls to end, then cancels the rest. */
    @Override
    public void close() {
        closed = true;
        channels.values().forEach(ManagedChannel::shutdown);
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SHUTDOWN_WAIT_MS);
        try {
            for (ManagedChannel channel : channels.values()) {
                channel.awaitTermination(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
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
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
