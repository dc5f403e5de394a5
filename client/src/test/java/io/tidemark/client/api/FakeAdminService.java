package io.tidemark.client.api;

import io.grpc.stub.StreamObserver;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.AdminServiceGrpc;
import io.tidemark.proto.v1.AlterTopicConfigRequest;
import io.tidemark.proto.v1.AlterTopicConfigResponse;
import io.tidemark.proto.v1.BrokerStatus;
import io.tidemark.proto.v1.ClusterStatusRequest;
import io.tidemark.proto.v1.ClusterStatusResponse;
import io.tidemark.proto.v1.CreateTopicRequest;
import io.tidemark.proto.v1.CreateTopicResponse;
import io.tidemark.proto.v1.DeleteTopicRequest;
import io.tidemark.proto.v1.DeleteTopicResponse;
import io.tidemark.proto.v1.DescribeTopicsRequest;
import io.tidemark.proto.v1.DescribeTopicsResponse;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ListTopicsRequest;
import io.tidemark.proto.v1.ListTopicsResponse;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.ReassignPartitionRequest;
import io.tidemark.proto.v1.ReassignPartitionResponse;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TopicSummary;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** One fake node's AdminService over the {@link FakeCluster}'s topics. */
final class FakeAdminService extends AdminServiceGrpc.AdminServiceImplBase {
    private final FakeCluster cluster;
    private final int node;

    FakeAdminService(FakeCluster cluster, int node) {
        this.cluster = cluster;
        this.node = node;
    }

    @Override
    public void createTopic(CreateTopicRequest request, StreamObserver<CreateTopicResponse> observer) {
        cluster.serve("CreateTopic", node, observer, () -> {
            if (cluster.topics.containsKey(request.getName())) {
                throw new TidemarkException(ErrorCode.TOPIC_EXISTS, "topic " + request.getName() + " already exists");
            }
            cluster.createTopic(request.getName(), request.getPartitions());
            cluster.topicConfigs.put(request.getName(), new ConcurrentHashMap<>(request.getConfigsMap()));
            return CreateTopicResponse.newBuilder().setTopic(describe(request.getName())).build();
        });
    }

    @Override
    public void deleteTopic(DeleteTopicRequest request, StreamObserver<DeleteTopicResponse> observer) {
        cluster.serve("DeleteTopic", node, observer, () -> {
            known(request.getName());
            cluster.topics.remove(request.getName());
            return DeleteTopicResponse.getDefaultInstance();
        });
    }

    @Override
    public void listTopics(ListTopicsRequest request, StreamObserver<ListTopicsResponse> observer) {
        cluster.serve("ListTopics", node, observer, () -> {
            ListTopicsResponse.Builder answer = ListTopicsResponse.newBuilder();
            new TreeMap<>(cluster.topics).forEach((name, partitions) -> {
                if (request.getIncludeInternal() || !name.startsWith("__")) {
                    answer.addTopics(TopicSummary.newBuilder().setName(name).setPartitions(partitions)
                            .setReplicationFactor(1));
                }
            });
            return answer.build();
        });
    }

    @Override
    public void describeTopics(DescribeTopicsRequest request, StreamObserver<DescribeTopicsResponse> observer) {
        cluster.serve("DescribeTopics", node, observer, () -> {
            DescribeTopicsResponse.Builder answer = DescribeTopicsResponse.newBuilder();
            for (String name : request.getNamesList()) {
                answer.addTopics(describe(name));
            }
            return answer.build();
        });
    }

    @Override
    public void alterTopicConfig(AlterTopicConfigRequest request, StreamObserver<AlterTopicConfigResponse> observer) {
        cluster.serve("AlterTopicConfig", node, observer, () -> {
            known(request.getName());
            Map<String, String> configs = cluster.topicConfigs.get(request.getName());
            configs.putAll(request.getSetMap());
            request.getRemoveList().forEach(configs::remove);
            return AlterTopicConfigResponse.newBuilder().setTopic(describe(request.getName())).build();
        });
    }

    @Override
    public void clusterStatus(ClusterStatusRequest request, StreamObserver<ClusterStatusResponse> observer) {
        cluster.serve("ClusterStatus", node, observer, () -> ClusterStatusResponse.newBuilder()
                .addBrokers(BrokerStatus.newBuilder().setNodeId(node).setAddress(cluster.address(node)).setUp(true))
                .setTopics(cluster.topics.size())
                .setPartitions(cluster.topics.values().stream().mapToInt(Integer::intValue).sum())
                .setClusterName(cluster.clusterName).build());
    }

    @Override
    public void reassignPartition(ReassignPartitionRequest request,
                                  StreamObserver<ReassignPartitionResponse> observer) {
        cluster.serve("ReassignPartition", node, observer, () -> {
            known(request.getTopic());
            cluster.reassignments.add(request);
            return ReassignPartitionResponse.newBuilder().addAllReplicaNodeIds(request.getReplicaNodeIdsList())
                    .build();
        });
    }

    private void known(String name) {
        if (!cluster.topics.containsKey(name)) {
            throw new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic " + name + " does not exist");
        }
    }

    private TopicDescription describe(String name) {
        known(name);
        TopicDescription.Builder topic = TopicDescription.newBuilder().setName(name).setReplicationFactor(1)
                .putAllConfigs(cluster.topicConfigs.getOrDefault(name, Map.of()))
                .addAllOverriddenKeys(cluster.topicConfigs.getOrDefault(name, Map.of()).keySet());
        for (int p = 0; p < cluster.topics.get(name); p++) {
            TopicPartition tp = new TopicPartition(name, p);
            topic.addPartitions(PartitionDescription.newBuilder().setPartition(p)
                    .setLeaderNodeId(cluster.leaders.get(tp)).setLogEndOffset(cluster.log(tp).endOffset())
                    .setLastReceiveTimeMs(-1));
        }
        return topic.build();
    }
}
