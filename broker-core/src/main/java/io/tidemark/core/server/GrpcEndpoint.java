package io.tidemark.core.server;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.topic.Topics;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The broker's gRPC server: the broker, admin and group services over the given topics, on the listen address,
 * and the cluster's internal services.
 */
public final class GrpcEndpoint implements Closeable {
    private static final long SHUTDOWN_GRACE_MS = 5_000;

    private final Server server;

    public GrpcEndpoint(BrokerConfig config, Topics topics, GroupOffsetStore groups, ClusterServices cluster,
                        BrokerMetrics metrics) {
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(config.listen().host(),
                        config.listen().port()))
                .maxInboundMessageSize(config.maxRequestBytes())
                .addService(new BrokerServiceAdapter(topics, config, cluster.view(), metrics))
                .addService(new AdminServiceAdapter(topics, config, cluster, metrics))
                .addService(new GroupServiceAdapter(topics, groups, config, metrics));
        cluster.internalServices().forEach(builder::addService);
        this.server = builder.build();
    }

    public GrpcEndpoint start() throws IOException {
        server.start();
        return this;
    }

    public int port() {
        return server.getPort();
    }

    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    /** Stops taking requests and waits up to 5 s for those under way, then cancels what is left. */
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
        }
    }
}
