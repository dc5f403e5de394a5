package io.tidemark.core.server;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.tidemark.core.auth.AccessRules;
import io.tidemark.core.auth.Authenticator;
import io.tidemark.core.auth.Authorizer;
import io.tidemark.core.auth.AuthorizingInterceptor;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.HostPort;
import io.tidemark.core.group.GroupCoordinator;
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.quota.ClientQuotas;
import io.tidemark.core.topic.Topics;
import io.tidemark.core.txn.MarkerWriter;
import io.tidemark.core.txn.TransactionCoordinator;
import io.tidemark.proto.tls.TlsMaterial;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The broker's gRPC server: the broker, admin and group services over the given topics, on the listen address,
 * and the cluster's internal services. Every call is authenticated ({@link Authenticator}) and held to its method's
 * access rule ({@link AuthorizingInterceptor}) before its service sees it. Its connections run on the broker's
 * {@link EventLoops}, which its Raft transport shares. A few quick calls run on the event loop that read them, the
 * others on a pool of at most {@value #RPC_THREADS} threads {@code tidemark-rpc-N} ({@link CallExecutors},
 * {@link BoundedPool}): far more than the cores, since produce and group calls wait on Raft rounds. A connection may
 * have at most {@value #MAX_CALLS_PER_CONNECTION} calls at once (HTTP/2's concurrent streams: the client waits to open
 * more), so with the flow-control windows, what one connection can make the broker hold is bounded; an address may
 * hold at most {@code max.connections.per.ip} connections ({@link ConnectionsPerAddress}).
 */
public final class GrpcEndpoint implements Closeable {
    private static final long SHUTDOWN_GRACE_MS = 5_000;
    /** Calls one connection may have under way at once. */
    static final int MAX_CALLS_PER_CONNECTION = 1_000;

    /** Threads calls run on, at most. */
    static final int RPC_THREADS = 256;

    private final ExecutorService pool = BoundedPool.create("tidemark-rpc-%d", RPC_THREADS);
    private final Server server;
    private final HostPort address;

    private final LeaderMarkerWriter markers;
    private final TransactionCoordinator transactions;

    /**
     * @param transactions builds the transaction coordinator over the marker writer the endpoint makes (and closes)
     * @param tls          the broker's TLS material: the listener and its calls to other brokers speak TLS with it;
     *                     empty for plain text
     * @param authenticator names each call's caller
     * @param authorizer   decides what each call's caller may do ({@link AccessRules})
     * @param quotas       holds back the answers of principals over their produce or fetch quota
     * @param loops        the broker's event loops, which accept and serve the connections (the caller stops them
     *                     after {@link #close})
     */
    public GrpcEndpoint(BrokerConfig config, Topics topics, GroupOffsetStore groups, GroupCoordinator coordinator,
                        Function<MarkerWriter, TransactionCoordinator> transactions, ClusterServices cluster,
                        BrokerMetrics metrics, Optional<TlsMaterial> tls, Authenticator authenticator,
                        Authorizer authorizer, ClientQuotas quotas, EventLoops loops) {
        this.markers = new LeaderMarkerWriter(topics, tls);
        this.transactions = transactions.apply(markers);
        CaughtUpGate caughtUp = new CaughtUpGate(cluster.caughtUp());
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(config.listen().host(),
                        config.listen().port()))
                .bossEventLoopGroup(loops.group())
                .workerEventLoopGroup(loops.group())
                .channelType(loops.serverChannel())
                .directExecutor()
                .callExecutor(new CallExecutors(pool))
                .maxInboundMessageSize(config.maxRequestBytes())
                .maxConcurrentCallsPerConnection(MAX_CALLS_PER_CONNECTION)
                .addService(ServerInterceptors.intercept(new BrokerServiceAdapter(topics, config, cluster.view(),
                        metrics, pool, authorizer, quotas), caughtUp))
                .addService(ServerInterceptors.intercept(new AdminServiceAdapter(topics, config, cluster, metrics),
                        caughtUp))
                .addService(ServerInterceptors.intercept(new GroupServiceAdapter(topics, groups, coordinator, config,
                        metrics), new ClientAddress(), caughtUp))
                .addService(ServerInterceptors.intercept(new TransactionServiceAdapter(topics, this.transactions,
                        groups, config, metrics), caughtUp));
        cluster.internalServices().forEach(builder::addService);
        // The interceptor added last runs first: the authenticator names the caller the authorizer asks about.
        builder.intercept(new AuthorizingInterceptor(AccessRules.tidemark(), authorizer)).intercept(authenticator)
                .addTransportFilter(authenticator);
        builder.protocolNegotiator(new ConnectionsPerAddress(tls.map(TlsMaterial::serverNegotiator)
                .orElseGet(InternalProtocolNegotiators::serverPlaintext), config.maxConnectionsPerIp(),
                metrics.connectionsRefused()));
        this.server = builder.build();
        this.address = config.listen();
    }

    /** @throws TidemarkException INVALID_CONFIG when the address cannot be bound, naming it and why */
    public GrpcEndpoint start() throws IOException {
        try {
            server.start();
        } catch (IOException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "cannot listen for clients on " + address
                    + " (--listen): " + cause.getMessage() + ". When it is in use, another process holds it, perhaps "
                    + "another broker's Raft server: a broker running alone takes its listen port + 100 for Raft");
        }
        return this;
    }

    /** The transaction coordinator the endpoint serves. */
    public TransactionCoordinator transactions() {
        return transactions;
    }

    public int port() {
        return server.getPort();
    }

    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    /**
     * Stops taking requests and waits up to 5 s for those under way, then cancels what is left; the pool's threads
     * end once idle.
     */
    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(SHUTDOWN_GRACE_MS, TimeUnit.MILLISECONDS)) {
                server.shutdownNow();
                server.awaitTermination(SHUTDOWN_GRACE_MS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        } finally {
            pool.shutdown();
            markers.close();
        }
    }
}
