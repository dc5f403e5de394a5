package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupPartitionLag;
import io.tidemark.proto.v1.ReassignPartitionRequest;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TopicSummary;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AdminTest {
    private static final long START_MS = 1_700_000_000_000L;

    private final ManualClock clock = new ManualClock(START_MS);
    private FakeCluster cluster;
    private TidemarkAdmin admin;

    @BeforeEach
    void start() {
        cluster = new FakeCluster(2, clock);
        String unreachable = "nobody-listens-" + System.identityHashCode(this) + ":9092";
        admin = new TidemarkAdmin(AdminConfig.builder(unreachable + "," + cluster.address(2))
                .channelFactory(cluster::channel).requestTimeoutMs(2_000).build());
    }

    @AfterEach
    void stop() throws InterruptedException {
        admin.close();
        cluster.close();
    }

    @Test
    void callsMoveToTheNextBootstrapBrokerWhenOneIsUnreachable() {
        TopicDescription created = admin.createTopic("orders", 3, 0, Map.of("retention.ms", "60000"));

        assertEquals("orders", created.getName());
        assertEquals(3, created.getPartitionsCount());
        assertEquals(Map.of("retention.ms", "60000"), created.getConfigsMap());
        assertEquals(List.of("CreateTopic@2"), cluster.calls);
        admin.listTopics(false);
        assertEquals(List.of("CreateTopic@2", "ListTopics@2"), cluster.calls, "the broker that answered is kept");
    }

    @Test
    void aCallCutByADyingBrokerMovesToTheNextBootstrapBroker() {
        try (TidemarkAdmin both = new TidemarkAdmin(AdminConfig.builder(cluster.address(1) + "," + cluster.address(2))
                .channelFactory(cluster::channel).requestTimeoutMs(2_000).build())) {
            cluster.cutNext("ListTopics", 1);
            assertEquals(List.of(), both.listTopics(false));
            assertEquals(List.of("ListTopics@1", "ListTopics@2"), cluster.calls);
        }
    }

    @Test
    void readReturnsTheRecordsFromAnOffsetOnTheLeader() {
        cluster.createTopic("r", 1);
        TopicPartition r0 = new TopicPartition("r", 0);
        cluster.append(r0, new RecordBatchBuilder().append(5, null, new byte[] {1})
                .append(6, null, new byte[] {2}).append(7, null, new byte[] {3}).build());
        assertEquals(List.of(1L, 2L), admin.read(r0, 1, 1).stream().map(ConsumerRecord::offset).toList(),
                "the whole batch holding the offset, from the offset on");
        assertEquals(List.of(6L, 7L), admin.read(r0, 1, 1).stream().map(ConsumerRecord::sendTimeMs).toList());
        assertEquals(List.of(), admin.read(r0, 3, 1), "nothing at the end");
    }

    @Test
    void aPartitionCallToAnUnreachableClusterSaysItIsUnreachable() {
        String unreachable = "nobody-listens-" + System.identityHashCode(this) + ":9093";
        try (TidemarkAdmin alone = new TidemarkAdmin(AdminConfig.builder(unreachable).channelFactory(cluster::channel)
                .requestTimeoutMs(2_000).build())) {
            TidemarkException e = assertThrows(TidemarkException.class,
                    () -> alone.listOffsets(new TopicPartition("r", 0), OffsetSpec.latest()));
            assertEquals(ErrorCode.NOT_AVAILABLE, e.code(), "not UNKNOWN_TOPIC: the metadata could not be read");
            assertTrue(e.getMessage().startsWith("no broker of bootstrap [" + unreachable + "] answered Metadata"),
                    e.getMessage());
        }
    }

    @Test
    void topicAdministrationRoundTrips() {
        admin.createTopic("orders", 2, 1, Map.of());
        admin.createTopic("__internal", 1, 1, Map.of());

        assertEquals(List.of(TopicSummary.newBuilder().setName("orders").setPartitions(2).setReplicationFactor(1)
                .build()), admin.listTopics(false));
        assertEquals(2, admin.listTopics(true).size());
        TopicDescription altered = admin.alterTopicConfig("orders", Map.of("segment.bytes", "1024"), List.of());
        assertEquals(Map.of("segment.bytes", "1024"), altered.getConfigsMap());
        assertEquals(Map.of(), admin.alterTopicConfig("orders", Map.of(), List.of("segment.bytes")).getConfigsMap());
        assertEquals("orders", admin.describeTopics(List.of("orders")).get(0).getName());
        assertEquals(2, admin.clusterStatus().getTopics());
        assertEquals(2, admin.metadata(List.of()).getBrokersCount());
        assertEquals(List.of("orders"), admin.metadata(List.of("orders")).getTopicsList().stream()
                .map(t -> t.getName()).toList());
        admin.deleteTopic("__internal");
        assertEquals(1, admin.listTopics(true).size());
    }

    @Test
    void clusterNameIsTheNameClusterStatusCarriesEmptyWhenItCarriesNone() {
        assertEquals(Optional.empty(), admin.clusterName());
        cluster.clusterName = "dc-a";
        assertEquals(Optional.of("dc-a"), admin.clusterName());
    }

    @Test
    void reassignPartitionSendsTheReplicasAndTimeoutAndReturnsTheReplicasAfterwards() {
        admin.createTopic("orders", 1, 2, Map.of());

        assertEquals(List.of(2, 3, 1), admin.reassignPartition(new TopicPartition("orders", 0), List.of(2, 3, 1),
                45_000));
        assertEquals(ReassignPartitionRequest.newBuilder().setTopic("orders").setPartition(0)
                .addAllReplicaNodeIds(List.of(2, 3, 1)).setTimeoutMs(45_000).build(), cluster.reassignments.get(0));
        cluster.failNext("ReassignPartition", 1, new TidemarkException(ErrorCode.INVALID_REQUEST,
                "node 7 in replicas [7] is not a broker of this cluster; its brokers are [1, 2]"));
        TidemarkException refused = assertThrows(TidemarkException.class,
                () -> admin.reassignPartition(new TopicPartition("orders", 0), List.of(7), 45_000));
        assertEquals(ErrorCode.INVALID_REQUEST, refused.code());
        assertEquals("node 7 in replicas [7] is not a broker of this cluster; its brokers are [1, 2]",
                refused.getMessage());
    }

    @Test
    void aBrokerErrorSurfacesAsTidemarkExceptionWithItsCodeAndMessage() {
        admin.createTopic("orders", 1, 1, Map.of());
        TidemarkException error = assertThrows(TidemarkException.class,
                () -> admin.createTopic("orders", 1, 1, Map.of()));
        assertEquals(ErrorCode.TOPIC_EXISTS, error.code());
        assertEquals("topic orders already exists", error.getMessage());
    }

    @Test
    void whenNoBootstrapBrokerAnswersTheCallFailsWithNotAvailable() {
        try (TidemarkAdmin lost = new TidemarkAdmin(AdminConfig.builder("gone-a:1,gone-b:2")
                .channelFactory(cluster::channel).build())) {
            TidemarkException error = assertThrows(TidemarkException.class, lost::listGroups);
            assertEquals(ErrorCode.NOT_AVAILABLE, error.code());
            assertTrue(error.getMessage().startsWith("no broker of bootstrap [gone-a:1, gone-b:2] answered"
                    + " ListGroups; the last error: "), error.getMessage());
        }
    }

    @Test
    void listOffsetsAsksThePartitionLeader() {
        cluster.createTopic("t", 1);
        TopicPartition tp = new TopicPartition("t", 0);
        clock.set(5_000);
        cluster.append(tp, new RecordBatchBuilder().append(100, null, new byte[1]).append(300, null, new byte[1])
                .build());

        assertEquals(new OffsetLookup(true, 0, 5_000, 100, 0, 2), admin.listOffsets(tp, OffsetSpec.earliest()));
        assertEquals(new OffsetLookup(false, 2, 0, 0, 0, 2), admin.listOffsets(tp, OffsetSpec.latest()));
        assertEquals(new OffsetLookup(true, 1, 5_000, 300, 0, 2), admin.listOffsets(tp, OffsetSpec.sendTime(200)));
        assertEquals(new OffsetLookup(false, 2, 0, 0, 0, 2), admin.listOffsets(tp, OffsetSpec.receiveTime(5_001)));
        assertEquals(4, cluster.count("ListOffsets@1"), "node 1 leads t-0");
    }

    @Test
    void groupOffsetsRoundTrip() {
        cluster.createTopic("t", 2);
        cluster.createTopic("__group_offsets", 1);
        TopicPartition t0 = new TopicPartition("t", 0);
        TopicPartition t1 = new TopicPartition("t", 1);
        admin.commitOffsets("g", Map.of(t0, new OffsetAndMetadata(7, "m")));

        assertEquals(Map.of(t0, new OffsetAndMetadata(7, "m")), admin.fetchOffsets("g", List.of(t0, t1)));
        assertEquals(List.of("g"), admin.listGroups());
        assertEquals(List.of(GroupPartitionLag.newBuilder().setTopic("t").setPartition(0).setCommittedOffset(7)
                .setLogEndOffset(0).setLag(0).setMetadata("m").build()), admin.describeGroup("g").getPartitionsList());
        TidemarkException error = assertThrows(TidemarkException.class, () -> admin.describeGroup("nobody"));
        assertEquals(ErrorCode.UNKNOWN_GROUP, error.code());
    }
}
