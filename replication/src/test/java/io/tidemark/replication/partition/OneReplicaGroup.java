package io.tidemark.replication.partition;

import com.google.common.util.concurrent.MoreExecutors;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.replication.cluster.ClusterMembers;
import io.tidemark.replication.raft.NettyRaftRpcType;
import io.tidemark.replication.raft.RaftPeerIds;
import io.tidemark.replication.raft.RaftSettings;
import io.tidemark.replication.raft.RunningDivisions;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import io.tidemark.replication.statemachine.GroupStateMachine;
import io.tidemark.replication.statemachine.PartitionKey;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A partition group with one replica on a real Ratis server (127.0.0.1, a port the kernel picks): the production
 * partition ({@link ReplicatedPartition}) for tests of what sits on top of one. Its state machine stamps ReceiveTime
 * with the test's clock; a topic's config changes through the group's log, as a broker changes it.
 */
public final class OneReplicaGroup implements Closeable {
    private static final RaftGroupId GROUP = RaftGroupId.valueOf(new UUID(5, 6));
    private static final int NODE = 1;
    private static final Duration READY_MAX = Duration.ofSeconds(30);

    private final RaftServer server;
    private final PartitionGroup group;
    private final ExecutorService replies = Executors.newSingleThreadExecutor();
    private final ClientId localClient = ClientId.randomId();

    private OneReplicaGroup(Path dir, InstantSource clock) throws IOException {
        RunningDivisions divisions = new RunningDivisions();
        GroupStateMachine.Listener listener = new GroupStateMachine.Listener() {
            @Override
            public void leaderChanged(RaftGroupId groupId) {
            }

            @Override
            public void started(RaftServer started, RaftGroupId groupId) throws IOException {
                divisions.started(started.getDivision(groupId));
            }

            @Override
            public void closed(RaftGroupId groupId) {
                divisions.stopped(groupId);
            }
        };
        server = RaftServer.newBuilder().setServerId(RaftPeerIds.of(NODE))
                .setProperties(RaftSettings.server(dir, "127.0.0.1", 0, new BrokerConfig.RaftTuning(300, 600,
                        32 << 20, 2 << 20, 10_000, true, 1), new NettyRaftRpcType()))
                .setStateMachineRegistry(g -> new GroupStateMachine(TopicConfig::parse, localClient, null, clock,
                        listener, Runnable::run))
                .setOption(RaftStorage.StartupOption.FORMAT)
                .setGroup(RaftGroup.valueOf(GROUP, RaftPeer.newBuilder().setId(RaftPeerIds.of(NODE))
                        .setAddress("127.0.0.1:0").build()))
                .build();
        group = new PartitionGroup(GROUP, List.of(NODE), server, divisions, ClusterMembers.of(NODE, "127.0.0.1", 1, 1),
                new PartitionGroup.RaftClients() {
                    @Override
                    public RaftClient get() {
                        throw new IllegalStateException("the only replica leads: nothing is forwarded");
                    }

                    @Override
                    public void discard(RaftClient failed) {
                    }
                }, localClient, MoreExecutors.newSequentialExecutor(replies), new ProduceBacklog(64 << 20));
    }

    /** Starts the group's replica in {@code dir} and waits until it leads. */
    public static OneReplicaGroup start(Path dir, InstantSource clock) throws IOException {
        OneReplicaGroup started = new OneReplicaGroup(dir, clock);
        try {
            started.server.start();
            await().atMost(READY_MAX).until(() -> started.group.leads()
                    && started.group.division().getInfo().isLeaderReady());
            return started;
        } catch (IOException | RuntimeException e) {
            started.close();
            throw e;
        }
    }

    /**
     * Adds a partition with a topic's config overrides, as its group's leader does once the metadata assigned it;
     * returns it once the group's log added it.
     */
    public ReplicatedPartition add(TopicPartition id, UUID topicId, Map<String, String> overrides) {
        ReplicatedPartition partition = new ReplicatedPartition(id, new PartitionKey(topicId, id.partition()), group,
                List.of(NODE), true, GroupEntryFormat.largestBatchBytes(RaftSettings.maxRequestBytes(
                        server.getProperties())));
        group.submitChange(GroupChange.newBuilder().addAdd(groupPartition(id, topicId, overrides)).build()).join();
        return partition;
    }

    /** Gives the partition other config overrides, through the group's log as a topic's alter does. */
    public void configure(TopicPartition id, UUID topicId, Map<String, String> overrides) {
        group.submitChange(GroupChange.newBuilder().addConfigure(groupPartition(id, topicId, overrides)).build())
                .join();
    }

    /**
     * Takes a snapshot of the group and waits until it is recorded with the partition's log end: compaction and
     * retention leave what the latest snapshot does not cover.
     */
    public void snapshot(ReplicatedPartition partition) {
        await().atMost(READY_MAX).until(() -> {
            server.snapshotManagement(SnapshotManagementRequest.newCreate(localClient, server.getId(), GROUP,
                    0, READY_MAX.toMillis(), 1));
            return group.host().snapshotLogEndOffset(partition.key()) == partition.logEndOffset();
        });
    }

    private static GroupPartition groupPartition(TopicPartition id, UUID topicId, Map<String, String> overrides) {
        return GroupPartition.newBuilder().setTopic(id.topic()).setTopicId(TopicIds.toBytes(topicId))
                .setPartition(id.partition()).putAllOverrides(overrides).build();
    }

    @Override
    public void close() throws IOException {
        try {
            server.close();
        } finally {
            replies.shutdown();
            try {
                replies.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
