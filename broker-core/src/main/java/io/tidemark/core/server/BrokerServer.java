package io.tidemark.core.server;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.metrics.MetricsEndpoint;
import io.tidemark.core.partition.LocalPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.TopicRegistry;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.v1.BrokerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.time.InstantSource;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A single-node broker: opens the topics in the data directory, loads committed group offsets, serves the
 * broker, admin and group services over gRPC, exposes metrics, and runs retention and flushes on a schedule.
 * {@link #close()} stops taking requests, lets those under way finish (bounded), and closes every log cleanly,
 * which writes their clean-shutdown markers.
 */
public final class BrokerServer implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerServer.class);

    private final BrokerConfig config;
    private final TopicRegistry topics;
    private final GrpcEndpoint grpc;
    private final MetricsEndpoint metricsEndpoint;
    private final MetricRegistry metricRegistry;
    private final ScheduledExecutorService maintenance;

    private BrokerServer(BrokerConfig config, TopicRegistry topics, GrpcEndpoint grpc, MetricsEndpoint metricsEndpoint,
                         MetricRegistry metricRegistry, ScheduledExecutorService maintenance) {
        this.config = config;
        this.topics = topics;
        this.grpc = grpc;
        this.metricsEndpoint = metricsEndpoint;
        this.metricRegistry = metricRegistry;
        this.maintenance = maintenance;
    }

    /** Starts a broker; it serves until {@link #close()}. */
    public static BrokerServer start(BrokerConfig config, InstantSource clock) throws IOException {
        Files.createDirectories(config.dataDir());
        MetricRegistry registry = new MetricRegistry();
        BrokerMetrics metrics = new BrokerMetrics(registry);
        TopicRegistry topics = TopicRegistry.open(config.dataDir(), config.topicDefaults(),
                (id, dir, topicConfig) -> LocalPartition.open(id, config.nodeId(), dir, topicConfig, clock),
                new TopicRegistry.Limits(config.maxPartitionsPerTopic(), 1), metrics, UUID::randomUUID);
        try {
            Topic offsetsTopic = topics.ensureInternal(GroupOffsetStore.TOPIC, 1, GroupOffsetStore.TOPIC_CONFIG);
            topics.ensureInternal(MirrorStateFormat.TOPIC, MirrorStateFormat.PARTITIONS, MirrorStateFormat.TOPIC_CONFIG);
            GroupOffsetStore store = GroupOffsetStore.over(offsetsTopic.partitions().get(0), clock);
            ServerAddress self = new ServerAddress(config.nodeId(), config.listen().host());
            GrpcEndpoint grpc = new GrpcEndpoint(config, topics, store, ClusterServices.singleNode(self), metrics);
            self.bind(grpc.server());
            grpc.start();
            MetricsEndpoint endpoint = MetricsEndpoint.start(registry, config.metricsListen());
            ScheduledExecutorService maintenance = MaintenanceScheduler.start(topics, config, clock);
            LOG.info("Tidemark broker node {} serving on {}:{}{}", config.nodeId(), config.listen().host(),
                    grpc.port(), endpoint.httpPort().map(p -> ", metrics on http://" + config.metricsListen()
                            .get().host() + ":" + p + "/metrics").orElse(""));
            return new BrokerServer(config, topics, grpc, endpoint, registry, maintenance);
        } catch (IOException | RuntimeException e) {
            topics.close();
            throw e;
        }
    }

    /** The port clients connect to. */
    public int port() {
        return grpc.port();
    }

    /** The port of the Prometheus metrics listener, when one is configured. */
    public Optional<Integer> metricsPort() {
        return metricsEndpoint.httpPort();
    }

    public MetricRegistry metrics() {
        return metricRegistry;
    }

    /** Blocks until the server stops. */
    public void awaitTermination() throws InterruptedException {
        grpc.awaitTermination();
    }

    /**
     * Stops taking requests, waits up to 5 s for those under way, then closes every partition cleanly (fsync,
     * clean-shutdown marker).
     */
    @Override
    public void close() throws IOException {
        LOG.info("Stopping broker node {}", config.nodeId());
        grpc.close();
        maintenance.shutdownNow();
        metricsEndpoint.close();
        topics.close();
        LOG.info("Broker node {} stopped; logs closed cleanly", config.nodeId());
    }
}
