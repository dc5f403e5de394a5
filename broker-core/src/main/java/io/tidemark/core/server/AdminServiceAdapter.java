package io.tidemark.core.server;

import io.grpc.stub.StreamObserver;
import io.tidemark.core.auth.AclBindingRules;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.PartitionStatus;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.v1.AdminServiceGrpc;
import io.tidemark.proto.v1.AlterClientQuotasRequest;
import io.tidemark.proto.v1.AlterClientQuotasResponse;
import io.tidemark.proto.v1.CreateAclsRequest;
import io.tidemark.proto.v1.CreateAclsResponse;
import io.tidemark.proto.v1.DeleteAclsRequest;
import io.tidemark.proto.v1.DeleteAclsResponse;
import io.tidemark.proto.v1.DescribeAclsRequest;
import io.tidemark.proto.v1.DescribeAclsResponse;
import io.tidemark.proto.v1.DescribeClientQuotasRequest;
import io.tidemark.proto.v1.DescribeClientQuotasResponse;
import io.tidemark.proto.v1.AlterTopicConfigRequest;
import io.tidemark.proto.v1.AlterTopicConfigResponse;
import io.tidemark.proto.v1.PartitionRef;
import io.tidemark.proto.v1.ClusterStatusRequest;
import io.tidemark.proto.v1.ClusterStatusResponse;
import io.tidemark.proto.v1.CreateTopicRequest;
import io.tidemark.proto.v1.CreateTopicResponse;
import io.tidemark.proto.v1.DeleteTopicRequest;
import io.tidemark.proto.v1.DeleteTopicResponse;
import io.tidemark.proto.v1.DescribeTopicsRequest;
import io.tidemark.proto.v1.DescribeTopicsResponse;
import io.tidemark.proto.v1.ListTopicsRequest;
import io.tidemark.proto.v1.ListTopicsResponse;
import io.tidemark.proto.v1.OverridesInUse;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.ReassignPartitionRequest;
import io.tidemark.proto.v1.ReassignPartitionResponse;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TopicSummary;
import io.tidemark.proto.v1.TransferLeadershipRequest;
import io.tidemark.proto.v1.TransferLeadershipResponse;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.record.TopicIds;

import java.util.List;

/**
 * Topic administration over gRPC: create, delete, list, describe, alter config, the cluster's status (with its
 * name, this broker's {@code cluster.name}, and the largest batch it takes), and moving a partition's leadership or
 * replicas; the cluster's ACLs (add, remove, describe) and principals' own quotas (alter, describe).
 */
final class AdminServiceAdapter extends AdminServiceGrpc.AdminServiceImplBase {
    private static final long DEFAULT_REASSIGN_TIMEOUT_MS = 60_000;
    private static final long DEFAULT_TRANSFER_TIMEOUT_MS = 10_000;

    private final Topics topics;
    private final BrokerConfig config;
    private final ClusterServices cluster;
    private final Responses responses;

    AdminServiceAdapter(Topics topics, BrokerConfig config, ClusterServices cluster, BrokerMetrics metrics) {
        this.topics = topics;
        this.config = config;
        this.cluster = cluster;
        this.responses = new Responses(metrics);
    }

    @Override
    public void createTopic(CreateTopicRequest request, StreamObserver<CreateTopicResponse> observer) {
        responses.respond(observer, () -> {
            Topic topic = topics.create(request.getName(), request.getPartitions(), request.getReplicationFactor(),
                    request.getConfigsMap());
            return CreateTopicResponse.newBuilder().setTopic(describe(topic)).build();
        });
    }

    @Override
    public void deleteTopic(DeleteTopicRequest request, StreamObserver<DeleteTopicResponse> observer) {
        responses.respond(observer, () -> {
            topics.delete(request.getName());
            return DeleteTopicResponse.getDefaultInstance();
        });
    }

    @Override
    public void listTopics(ListTopicsRequest request, StreamObserver<ListTopicsResponse> observer) {
        responses.respond(observer, () -> {
            ListTopicsResponse.Builder response = ListTopicsResponse.newBuilder();
            for (Topic topic : topics.topics()) {
                if (request.getIncludeInternal() || !topic.internal()) {
                    response.addTopics(TopicSummary.newBuilder().setName(topic.name())
                            .setTopicId(TopicIds.toBytes(topic.id())).setPartitions(topic.partitions().size())
                            .setReplicationFactor(topic.replicationFactor()));
                }
            }
            return response.build();
        });
    }

    @Override
    public void describeTopics(DescribeTopicsRequest request, StreamObserver<DescribeTopicsResponse> observer) {
        responses.respond(observer, () -> {
            if (request.getNamesCount() > config.maxTopicsPerRequest()) {
                throw Responses.invalid("a DescribeTopics request may name at most " + config.maxTopicsPerRequest()
                        + " topics (max.topics.per.request), not " + request.getNamesCount());
            }
            List<Topic> wanted = request.getNamesCount() == 0
                    ? topics.topics().stream().filter(t -> !t.internal()).toList()
                    : request.getNamesList().stream().map(topics::topic).toList();
            DescribeTopicsResponse.Builder response = DescribeTopicsResponse.newBuilder();
            wanted.forEach(t -> response.addTopics(describe(t)));
            return response.build();
        });
    }

    @Override
    public void alterTopicConfig(AlterTopicConfigRequest request, StreamObserver<AlterTopicConfigResponse> observer) {
        responses.respond(observer, () -> {
            Topic topic = topics.alterConfig(request.getName(), request.getSetMap(), request.getRemoveList());
            return AlterTopicConfigResponse.newBuilder().setTopic(describe(topic)).build();
        });
    }

    @Override
    public void clusterStatus(ClusterStatusRequest request, StreamObserver<ClusterStatusResponse> observer) {
        responses.respond(observer, () -> {
            List<Topic> all = topics.topics();
            int partitions = all.stream().mapToInt(t -> t.partitions().size()).sum();
            int led = (int) all.stream().flatMap(t -> t.partitions().stream())
                    .filter(p -> p.status().leaderNodeId() == config.nodeId()).count();
            return ClusterStatusResponse.newBuilder().addAllBrokers(cluster.view().brokers()).setTopics(all.size())
                    .setPartitions(partitions).setLeaderPartitions(led).setClusterName(config.clusterName().orElse(""))
                    .setLargestBatchBytes(Math.min(config.largestBatchBytes(), cluster.largestBatchBytes())).build();
        });
    }

    @Override
    public void transferLeadership(TransferLeadershipRequest request,
                                   StreamObserver<TransferLeadershipResponse> observer) {
        responses.respond(observer, () -> {
            topics.partition(request.getTopic(), request.getPartition());
            long timeoutMs = Responses.timeoutMs("timeout_ms", request.getTimeoutMs(), DEFAULT_TRANSFER_TIMEOUT_MS);
            Leadership.Transferred transferred = cluster.leadership().transfer(new TopicPartition(request.getTopic(),
                    request.getPartition()), request.getToNodeId(), timeoutMs);
            TransferLeadershipResponse.Builder response = TransferLeadershipResponse.newBuilder()
                    .setLeaderNodeId(transferred.leaderNodeId());
            transferred.moved().forEach(moved -> response.addMoved(PartitionRef.newBuilder().setTopic(moved.topic())
                    .setPartition(moved.partition())));
            return response.build();
        });
    }

    @Override
    public void reassignPartition(ReassignPartitionRequest request,
                                  StreamObserver<ReassignPartitionResponse> observer) {
        responses.respond(observer, () -> {
            topics.partition(request.getTopic(), request.getPartition());
            long timeoutMs = Responses.timeoutMs("timeout_ms", request.getTimeoutMs(), DEFAULT_REASSIGN_TIMEOUT_MS);
            List<Integer> replicas = cluster.reassignment().reassign(new TopicPartition(request.getTopic(),
                    request.getPartition()), request.getReplicaNodeIdsList(), timeoutMs);
            return ReassignPartitionResponse.newBuilder().addAllReplicaNodeIds(replicas).build();
        });
    }

    @Override
    public void createAcls(CreateAclsRequest request, StreamObserver<CreateAclsResponse> observer) {
        responses.respond(observer, () -> {
            cluster.acls().create(request.getBindingsList());
            return CreateAclsResponse.getDefaultInstance();
        });
    }

    @Override
    public void deleteAcls(DeleteAclsRequest request, StreamObserver<DeleteAclsResponse> observer) {
        responses.respond(observer, () -> DeleteAclsResponse.newBuilder()
                .addAllDeleted(cluster.acls().delete(request.getFiltersList())).build());
    }

    @Override
    public void describeAcls(DescribeAclsRequest request, StreamObserver<DescribeAclsResponse> observer) {
        responses.respond(observer, () -> DescribeAclsResponse.newBuilder().addAllBindings(cluster.acls().index()
                .bindings().stream().filter(binding -> AclBindingRules.matches(request.getFilter(), binding))
                .toList()).build());
    }

    @Override
    public void alterClientQuotas(AlterClientQuotasRequest request,
                                  StreamObserver<AlterClientQuotasResponse> observer) {
        responses.respond(observer, () -> {
            cluster.quotas().alter(request.getQuotasList());
            return AlterClientQuotasResponse.getDefaultInstance();
        });
    }

    @Override
    public void describeClientQuotas(DescribeClientQuotasRequest request,
                                     StreamObserver<DescribeClientQuotasResponse> observer) {
        responses.respond(observer, () -> DescribeClientQuotasResponse.newBuilder().addAllQuotas(cluster.quotas()
                .quotas().values().stream().filter(quota -> request.getPrincipal().isEmpty()
                        || request.getPrincipal().equals(quota.getPrincipal())).toList()).build());
    }

    private static TopicDescription describe(Topic topic) {
        TopicDescription.Builder description = TopicDescription.newBuilder().setName(topic.name())
                .setTopicId(TopicIds.toBytes(topic.id())).setReplicationFactor(topic.replicationFactor())
                .putAllConfigs(topic.config().toMap())
                .addAllOverriddenKeys(topic.overrides().keySet().stream().sorted().toList());
        for (Partition partition : topic.partitions()) {
            PartitionStatus status = partition.status();
            PartitionDescription.Builder described = PartitionDescription.newBuilder()
                    .setPartition(partition.id().partition())
                    .setLeaderNodeId(status.leaderNodeId()).addAllReplicaNodeIds(status.replicaNodeIds())
                    .setLogStartOffset(status.logStartOffset()).setLogEndOffset(status.logEndOffset())
                    .setSizeBytes(status.sizeBytes()).setSegments(status.segments())
                    .setLastReceiveTimeMs(status.lastReceiveTimeMs()).setGroupId(status.groupId());
            status.overridesInUse().filter(inUse -> !inUse.equals(topic.overrides())).ifPresent(inUse ->
                    described.setOverridesInUse(OverridesInUse.newBuilder().putAllOverrides(inUse)));
            description.addPartitions(described);
        }
        return description.build();
    }
}
