package io.tidemark.replication.cluster;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import com.google.common.base.Throwables;
import io.tidemark.core.auth.Authenticator;
import io.tidemark.core.auth.Authorizer;
import io.tidemark.core.auth.TokenVerifier;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.group.GroupCoordinator;
import io.tidemark.core.txn.TransactionCoordinator;
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.metrics.MetricsEndpoint;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.quota.ClientQuotas;
import io.tidemark.core.server.BoundedPool;
import io.tidemark.core.server.ClusterServices;
import io.tidemark.core.server.EventLoops;
import io.tidemark.core.server.GrpcEndpoint;
import io.tidemark.core.server.MaintenanceScheduler;
import io.tidemark.core.topic.Topic;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.mirror.MirrorStateFormat;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.tls.TlsMaterial;
import io.tidemark.proto.tls.TlsSettings;
import io.tidemark.replication.partition.GroupAllOrNoneAppender;
import io.tidemark.replication.partition.ProduceBacklog;
import io.tidemark.replication.raft.ProtoTextWarmUp;
import io.tidemark.replication.raft.RaftGroups;
import io.tidemark.replication.raft.RaftLogCheck;
import io.tidemark.replication.raft.RaftLogTrash;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import io.tidemark.replication.raft.RaftTransport;
import io.tidemark.replication.raft.RunningDivisions;
import io.tidemark.replication.raft.StuckFollowerWatch;
import io.tidemark.replication.raft.metrics.RaftMetricRegistries;
import io.tidemark.replication.snapshot.CatchUp;
import io.tidemark.replication.snapshot.GrpcSnapshotSource;
import io.tidemark.replication.statemachine.MetadataStateMachine;
import io.tidemark.replication.statemachine.GroupStateMachine;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A broker of a cluster: one Ratis {@link RaftServer} hosting the metadata group (all members are voters) and the
 * partition groups it is a replica of, each hosting many partitions, behind the same gRPC services as a single
 * node. Group offsets live in the
 * replicated internal topic {@code __group_offsets}, created by whichever broker gets there first (so is the
 * mirrors' {@code __mirror_state}). The brokers
 * probe each other ({@link ClusterLiveness}) and hand leadership back to preferred replicas
 * ({@link PreferredLeaderBalancer}).
 */
public final class ClusterNode implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);
    /**
     * How long a starting broker waits for its metadata replica to catch up ({@link MetadataCaughtUp}) before it
     * starts its client API, which refuses calls until then.
     */
    private static final long METADATA_CATCH_UP_WAIT_MS = 3_000;
    /** A replica catching up copies the leader's log in fetches of at most this much (and max.fetch.bytes). */
    private static final int MAX_COPY_CHUNK_BYTES = 4 << 20;

    private final BrokerConfig config;
    private final RaftServer server;
    private final RaftClient admin;
    private final MetadataGroup metadata;
    private final PartitionReplicas replicas;
    private final CatchUp catchUp;
    private final GrpcSnapshotSource snapshotSource;
    private final GrpcEndpoint grpc;
    private final MetricsEndpoint metricsEndpoint;
    private final MetricRegistry registry;
    private final ScheduledExecutorService maintenance;
    private final ClusterLiveness liveness;
    private final PreferredLeaderBalancer balancer;
    private final StuckFollowerWatch stuckFollowers;
    private final Optional<TlsMaterial> tls;
    private final EventLoops loops;

    private ClusterNode(BrokerConfig config, RaftServer server, RaftClient admin, MetadataGroup metadata,
                        PartitionReplicas replicas, CatchUp catchUp, GrpcSnapshotSource snapshotSource,
                        GrpcEndpoint grpc, MetricsEndpoint metricsEndpoint, MetricRegistry registry,
                        ScheduledExecutorService maintenance,
                        ClusterLiveness liveness, PreferredLeaderBalancer balancer,
                        StuckFollowerWatch stuckFollowers, Optional<TlsMaterial> tls, EventLoops loops) {
        this.tls = tls;
        this.loops = loops;
        this.config = config;
        this.server = server;
        this.admin = admin;
        this.metadata = metadata;
        this.replicas = replicas;
        this.catchUp = catchUp;
        this.snapshotSource = snapshotSource;
        this.grpc = grpc;
        this.metricsEndpoint = metricsEndpoint;
        this.registry = registry;
        this.maintenance = maintenance;
        this.liveness = liveness;
        this.balancer = balancer;
        this.stuckFollowers = stuckFollowers;
    }

    public static ClusterNode start(BrokerConfig config, ClusterMembers members, InstantSource clock)
            throws IOException {
        ClusterMembers.Member self = members.member(config.nodeId());
        refuseSingleBrokerData(config.dataDir());
        Files.createDirectories(config.dataDir());
        Path raftStorageDir = config.dataDir().resolve("raft");
        PartitionReplicas.deleteRetiredGroupDirs(raftStorageDir);
        RaftLogCheck.checkGroups(raftStorageDir);
        AtomicReference<ReplicatedTopics> topicsRef = new AtomicReference<>();
        AtomicReference<PartitionReplicas> replicasRef = new AtomicReference<>();
        int copyChunkBytes = Math.min(config.maxFetchBytes(), MAX_COPY_CHUNK_BYTES);
        Optional<TlsMaterial> tls = TlsMaterial.load(config.tls());
        // The network threads of the client API's gRPC server and of the plain-text Raft transport.
        EventLoops loops = EventLoops.start("tidemark-network");
        RaftTransport transport = RaftTransport.of(tls, loops);
        GrpcSnapshotSource snapshotSource = new GrpcSnapshotSource(node -> members.member(node).clientAddress(),
                copyChunkBytes + config.maxRequestBytes(), tls);
        MetadataStateMachine metadataMachine = new MetadataStateMachine(new DeferredListener(topicsRef),
                snapshotSource::latestMetadataSnapshot);
        CatchUp catchUp = new CatchUp(snapshotSource, copyChunkBytes, clock);
        // ReceiveTime is stamped by this clock: the broker's own, bounded ahead by the cluster's median.
        ClusterClock stampClock = new ClusterClock(clock, System::nanoTime, config.receiveTimeMaxAheadMs());
        RunningDivisions divisions = new RunningDivisions();
        DiskStoppedReplicas diskStopped = new DiskStoppedReplicas();
        // The partition groups' snapshot writes: one thread, so their fsyncs take turns on the disk.
        Executor snapshotWriter = BoundedPool.create("tidemark-snapshot-writer-%d", 1);
        // This broker's own submissions to its Raft server: their batches were admitted here (ReplicatedPartition).
        ClientId localClient = ClientId.randomId();
        RaftGroup metadataGroup = RaftGroup.valueOf(RaftGroups.METADATA, members.peers(members.nodeIds()));
        ProtoTextWarmUp.run();
        RaftServer server = RaftServer.newBuilder().setServerId(RaftPeerIds.of(config.nodeId()))
                .setProperties(RaftSettings.server(raftStorageDir, self.host(), self.raftPort(), config.raft(),
                        transport.rpcType()))
                .setStateMachineRegistry(groupId -> groupId.equals(RaftGroups.METADATA) ? metadataMachine
                        : new GroupStateMachine(config::topicConfig, localClient, catchUp, stampClock,
                                new GroupReplicaListener(divisions, replicasRef, diskStopped), snapshotWriter))
                .setParameters(transport.parameters())
                .setOption(RaftStorage.StartupOption.RECOVER)
                // The metadata group with the cluster's members: what Ratis starts it with when its storage holds no
                // configuration yet, as after a stop before its first election (started as a group found in storage,
                // it came back without peers and never elected); a stored configuration takes over as it loads.
                .setGroup(metadataGroup)
                .build();
        RaftClient admin = transport.client(metadataGroup).build();
        MetadataGroup metadata = new MetadataGroup(transport.client(metadataGroup).build(), metadataMachine);
        String clusterName = config.clusterName().orElse("");
        ClusterLiveness liveness = new ClusterLiveness(config.nodeId(), clusterName, members, clock, tls,
                stampClock);
        ProduceBacklog backlog = new ProduceBacklog(config.produceBacklogMaxBytes());
        PartitionReplicas replicas = new PartitionReplicas(config.nodeId(), members, server, divisions, admin,
                config::topicConfig, liveness, metadata, snapshotSource, clock, raftStorageDir,
                config.producerIdExpirationMs(), localClient, backlog, transport);
        replicasRef.set(replicas);
        MetricRegistry registry = new MetricRegistry();
        BrokerMetrics metrics = new BrokerMetrics(registry);
        registry.gauge("produce.backlog.bytes", () -> (Gauge<Long>) backlog::heldBytes);
        registry.gauge("replicas.disk.stopped", () -> (Gauge<Integer>) diskStopped::count);
        registry.gauge("clock.ahead-of-cluster.ms", () -> (Gauge<Long>) stampClock::aheadMs);
        ReplicatedTopics topics = new ReplicatedTopics(members, config.maxPartitionsPerTopic(),
                config.maxPartitionsPerCluster(),
                config.raft().groupsPerReplicaSet(), replicas, metadata, metrics, UUID::randomUUID);
        topicsRef.set(topics);
        MetadataCaughtUp caughtUp;
        try {
            server.start();
            caughtUp = MetadataCaughtUp.of(server);
            if (!caughtUp.await(METADATA_CATCH_UP_WAIT_MS)) {
                LOG.info("The metadata replica has not caught up within {} ms (no quorum yet?): the client API answers "
                        + "NOT_AVAILABLE until it has", METADATA_CATCH_UP_WAIT_MS);
            }
        } catch (IOException | RuntimeException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            closeRaft(replicas, metadata, admin, catchUp, server, snapshotSource);
            loops.close();
            tls.ifPresent(TlsMaterial::close);
            throw new IOException("broker node " + config.nodeId() + " (Raft server on " + self.host() + ":"
                    + self.raftPort() + ") did not start its Raft groups: "
                    + Throwables.getRootCause(e).getMessage(), e);
        }

        AtomicReference<Partition> offsets = new AtomicReference<>();
        GroupOffsetStore store = GroupOffsetStore.awaiting(() -> {
            Partition partition = offsets.get();
            if (partition == null) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "group offsets are not ready yet: the internal "
                        + "topic " + GroupOffsetStore.TOPIC + " is being created (it needs a majority of brokers up)");
            }
            return partition;
        }, clock, metrics.groupOffsetsSkipped());
        RaftLeadership leadership = new RaftLeadership(members, metadata, transport);
        GroupCoordinator coordinator = new GroupCoordinator(topics, store, config.groups(), clock,
                () -> UUID.randomUUID().toString());
        ReplicatedAcls acls = new ReplicatedAcls(metadata, metadataMachine);
        GrpcEndpoint grpc = new GrpcEndpoint(config, topics, store, coordinator, markers -> new TransactionCoordinator(
                topics, store, coordinator, markers, new GroupAllOrNoneAppender(topics), clock,
                TransactionCoordinator.DEFAULT_MAX_TIMEOUT_MS),
                new ClusterServices(liveness, leadership,
                new PartitionReassignment(members, metadata, config.raft().groupsPerReplicaSet()),
                List.of(new ClusterServiceAdapter(config.nodeId(), clusterName, replicas, liveness, clock),
                        new ReplicaServiceAdapter(server, metadataMachine)), replicas.largestBatchBytes(), acls,
                new ReplicatedQuotas(metadata, metadataMachine), caughtUp),
                metrics, tls, new Authenticator(config.auth().mapper(), config.tls().map(TlsSettings::brokerSubjects),
                config.auth().tokenPublicKey().map(key -> new TokenVerifier(key, config.auth().tokenAudience(),
                        clock))), new Authorizer(config.auth(), acls::index, registry),
                new ClientQuotas(config.quotaProduceBytesPerSecond(), config.quotaFetchBytesPerSecond(),
                        metadataMachine::quotas, clock, registry), loops).start();
        liveness.start();
        MetricsEndpoint endpoint = MetricsEndpoint.start(List.of(registry, RaftMetricRegistries.raftMetrics()),
                config.metricsListen(), tls);
        ScheduledExecutorService maintenance = MaintenanceScheduler.start(topics, coordinator, grpc.transactions(),
                config, clock, registry);
        maintenance.execute(() -> createOffsetsTopic(topics, offsets, maintenance));
        RaftLogTrash.sweepEvery(maintenance, raftStorageDir);
        PreferredLeaderBalancer balancer = PreferredLeaderBalancer.start(config, replicas, liveness, leadership, clock,
                registry);
        StuckFollowerWatch stuckFollowers = StuckFollowerWatch.start(server, clock, registry);
        LOG.info("Tidemark broker node {} of cluster {} serving on {} ({})", config.nodeId(), members.nodeIds(),
                self.clientAddress(), tls.map(TlsMaterial::toString).orElse("plain text"));
        return new ClusterNode(config, server, admin, metadata, replicas, catchUp, snapshotSource, grpc, endpoint,
                registry, maintenance, liveness, balancer, stuckFollowers, tls, loops);
    }

    /**
     * Refuses a data directory that a broker of an earlier version wrote when it ran alone ({@code topics/}, no
     * {@code raft/}): a broker runs its partitions in Raft groups now, even alone, and would start empty beside them.
     */
    private static void refuseSingleBrokerData(Path dataDir) {
        if (Files.isDirectory(dataDir.resolve("topics")) && !Files.exists(dataDir.resolve("raft"))) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "data directory " + dataDir + " holds the topics of "
                    + "a broker that ran alone before brokers ran every partition in a Raft group (" + dataDir
                    + "/topics); this version cannot read them. Start with another --data-dir, and copy the topics "
                    + "over with tidemark mirror from a broker of the earlier version");
        }
    }

    /**
     * Creates the internal topics (group offsets, the mirrors' state), or finds them, retrying every second until the
     * metadata group answers.
     */
    private static void createOffsetsTopic(ReplicatedTopics topics, AtomicReference<Partition> offsets,
                                           ScheduledExecutorService retries) {
        try {
            Topic topic = topics.ensureInternal(GroupOffsetStore.TOPIC, 1, GroupOffsetStore.TOPIC_CONFIG);
            offsets.set(topic.partitions().get(0));
            topics.ensureInternal(MirrorStateFormat.TOPIC, MirrorStateFormat.PARTITIONS,
                    MirrorStateFormat.TOPIC_CONFIG);
        } catch (TidemarkException e) {
            LOG.info("Group offsets topic not ready ({}); retrying", e.getMessage());
            retries.schedule(() -> createOffsetsTopic(topics, offsets, retries), 1, TimeUnit.SECONDS);
        }
    }

    /** The port of the Prometheus metrics listener, when one is configured. */
    public Optional<Integer> metricsPort() {
        return metricsEndpoint.httpPort();
    }

    public MetricRegistry metrics() {
        return registry;
    }

    public int port() {
        return grpc.port();
    }

    public void awaitTermination() throws InterruptedException {
        grpc.awaitTermination();
    }

    @Override
    public void close() throws IOException {
        LOG.info("Stopping broker node {}", config.nodeId());
        balancer.close();
        stuckFollowers.close();
        liveness.close();
        grpc.close();
        maintenance.shutdownNow();
        metricsEndpoint.close();
        closeRaft(replicas, metadata, admin, catchUp, server, snapshotSource);
        loops.close();
        tls.ifPresent(TlsMaterial::close);
        LOG.info("Broker node {} stopped; logs closed cleanly", config.nodeId());
    }

    /** Stops the Raft side: the groups' front ends and clients first, then catch-up, the server and its channels. */
    private static void closeRaft(PartitionReplicas replicas, MetadataGroup metadata, RaftClient admin,
                                  CatchUp catchUp, RaftServer server, GrpcSnapshotSource snapshotSource)
            throws IOException {
        replicas.close();
        metadata.close();
        admin.close();
        catchUp.close();
        server.close();
        snapshotSource.close();
    }

    /** Passes metadata changes to the topics once they exist: Ratis may replay the log before they do. */
    private record DeferredListener(AtomicReference<ReplicatedTopics> topics) implements MetadataStateMachine.Listener {
        @Override
        public void topicCreated(io.tidemark.proto.v1.TopicAssignment topic) {
            topics.get().topicCreated(topic);
        }

        @Override
        public void topicAltered(io.tidemark.proto.v1.TopicAssignment topic) {
            topics.get().topicAltered(topic);
        }

        @Override
        public void topicDeleted(io.tidemark.proto.v1.TopicAssignment topic) {
            topics.get().topicDeleted(topic);
        }

        @Override
        public void partitionReassigned(io.tidemark.proto.v1.TopicAssignment topic,
                                        io.tidemark.proto.v1.PartitionAssignment before) {
            topics.get().partitionReassigned(topic, before);
        }
    }
}
