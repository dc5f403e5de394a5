package io.tidemark.core.auth;

import com.google.protobuf.Message;
import io.tidemark.core.group.GroupOffsetStore;
import io.grpc.MethodDescriptor;
import io.tidemark.proto.v1.AddPartitionsToTxnRequest;
import io.tidemark.proto.v1.AdminServiceGrpc;
import io.tidemark.proto.v1.AlterTopicConfigRequest;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ClusterServiceGrpc;
import io.tidemark.proto.v1.CommitOffsetsRequest;
import io.tidemark.proto.v1.CreateTopicRequest;
import io.tidemark.proto.v1.DeleteOffsetsRequest;
import io.tidemark.proto.v1.DescribeTopicsRequest;
import io.tidemark.proto.v1.DescribeTopicsResponse;
import io.tidemark.proto.v1.FetchOffsetsRequest;
import io.tidemark.proto.v1.FetchOffsetsResponse;
import io.tidemark.proto.v1.GroupServiceGrpc;
import io.tidemark.proto.v1.InitProducerIdRequest;
import io.tidemark.proto.v1.ListGroupsResponse;
import io.tidemark.proto.v1.ListTopicsResponse;
import io.tidemark.proto.v1.MetadataRequest;
import io.tidemark.proto.v1.MetadataResponse;
import io.tidemark.proto.v1.PartitionOffset;
import io.tidemark.proto.v1.ReplicaServiceGrpc;
import io.tidemark.proto.v1.TopicPartitionRef;
import io.tidemark.proto.v1.TransactionServiceGrpc;
import io.tidemark.proto.v1.TxnOffsetCommitRequest;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

import static io.tidemark.proto.v1.AclOperation.ALTER;
import static io.tidemark.proto.v1.AclOperation.CLUSTER_ACTION;
import static io.tidemark.proto.v1.AclOperation.CREATE;
import static io.tidemark.proto.v1.AclOperation.DELETE;
import static io.tidemark.proto.v1.AclOperation.DESCRIBE;
import static io.tidemark.proto.v1.AclOperation.READ;
import static io.tidemark.proto.v1.AclOperation.WRITE;
import static io.tidemark.proto.v1.AclResourceType.CLUSTER;
import static io.tidemark.proto.v1.AclResourceType.GROUP;
import static io.tidemark.proto.v1.AclResourceType.TOPIC;

/**
 * What every method of every service the broker serves asks of its caller, in one table: each method has a rule, so a
 * method added without one is refused ({@link AuthorizingInterceptor}) and fails {@code AccessRulesTest}.
 * <table>
 *   <caption>The rules (as Kafka's, by the request each method matches)</caption>
 *   <tr><td>Produce, ProduceMany, ProduceStream</td><td>WRITE on each batch's topic, checked per batch by the broker
 *       service, so a refused batch fails alone</td></tr>
 *   <tr><td>Fetch; ListOffsets, OriginOffset</td><td>READ; DESCRIBE on the topic</td></tr>
 *   <tr><td>FetchMany</td><td>READ on each partition's topic, checked per partition by the broker service, so a
 *       refused partition fails alone</td></tr>
 *   <tr><td>Metadata, DescribeTopics; ListTopics</td><td>DESCRIBE on each topic named; an answer for every topic
 *       holds those the caller may DESCRIBE. Metadata of {@code __group_offsets} is open to every caller: its
 *       partitions' leaders are the group and transaction coordinators clients look for (Kafka's FindCoordinator
 *       asks nothing of the topic either)</td></tr>
 *   <tr><td>CreateTopic; DeleteTopic; AlterTopicConfig</td><td>CREATE on the cluster or the topic; DELETE; ALTER on
 *       the topic</td></tr>
 *   <tr><td>ClusterStatus, DescribeAcls, DescribeClientQuotas; TransferLeadership, ReassignPartition, CreateAcls,
 *       DeleteAcls, AlterClientQuotas</td><td>DESCRIBE; ALTER on the cluster</td></tr>
 *   <tr><td>CommitOffsets; DeleteOffsets</td><td>READ; DELETE on the group, and READ on each topic</td></tr>
 *   <tr><td>FetchOffsets</td><td>DESCRIBE on the group and each topic named; for every partition, those of topics
 *       the caller may DESCRIBE</td></tr>
 *   <tr><td>ListGroups; DescribeGroup; DeleteGroup; ConsumerGroupHeartbeat</td><td>the groups the caller may
 *       DESCRIBE; DESCRIBE; DELETE; READ on the group</td></tr>
 *   <tr><td>InitProducerId</td><td>WRITE on the transactional id; without one, IDEMPOTENT_WRITE on the cluster or
 *       WRITE on some topic</td></tr>
 *   <tr><td>AddPartitionsToTxn; TxnOffsetCommit; EndTxn</td><td>WRITE on the transactional id, and WRITE on each
 *       topic; READ on the group and each topic</td></tr>
 *   <tr><td>WriteTxnMarker, ClusterService, ReplicaService</td><td>CLUSTER_ACTION: brokers only</td></tr>
 * </table>
 */
public final class AccessRules {
    /** What one method asks: of its request, and of its answer (to leave out what the caller may not see). */
    public record Rule(BiConsumer<CallAccess, Object> request, BiFunction<CallAccess, Object, Object> answer) {
    }

    private static final Rule CHECKED_BY_SERVICE = new Rule((access, request) -> {
    }, (access, answer) -> answer);

    private final Map<String, Rule> rules = new HashMap<>();

    private AccessRules() {
    }

    /** The rule of the method named (its full gRPC name); empty when it has none. */
    public Optional<Rule> rule(String fullMethodName) {
        return Optional.ofNullable(rules.get(fullMethodName));
    }

    /** The rules of Tidemark's services. */
    public static AccessRules tidemark() {
        AccessRules r = new AccessRules();
        r.add(BrokerServiceGrpc.getProduceMethod(), CHECKED_BY_SERVICE);
        r.add(BrokerServiceGrpc.getProduceManyMethod(), CHECKED_BY_SERVICE);
        r.add(BrokerServiceGrpc.getProduceStreamMethod(), CHECKED_BY_SERVICE);
        r.request(BrokerServiceGrpc.getFetchMethod(), (a, q) -> a.requireTopic(READ, q.getTopic()));
        r.add(BrokerServiceGrpc.getFetchManyMethod(), CHECKED_BY_SERVICE);
        r.request(BrokerServiceGrpc.getListOffsetsMethod(), (a, q) -> a.requireTopic(DESCRIBE, q.getTopic()));
        r.request(BrokerServiceGrpc.getOriginOffsetMethod(), (a, q) -> a.requireTopic(DESCRIBE, q.getTopic()));
        r.add(BrokerServiceGrpc.getMetadataMethod(), (a, q) -> ((MetadataRequest) q).getTopicsList().stream()
                .filter(topic -> !topic.equals(GroupOffsetStore.TOPIC))
                .forEach(topic -> a.requireTopic(DESCRIBE, topic)), (a, answer) -> {
                    MetadataResponse response = (MetadataResponse) answer;
                    return response.toBuilder().clearTopics().addAllTopics(response.getTopicsList().stream()
                            .filter(topic -> topic.getName().equals(GroupOffsetStore.TOPIC)
                                    || a.permits(DESCRIBE, TOPIC, topic.getName())).toList()).build();
                });

        r.request(AdminServiceGrpc.getCreateTopicMethod(), (a, q) -> createTopic(a, q));
        r.request(AdminServiceGrpc.getDeleteTopicMethod(), (a, q) -> a.requireTopic(DELETE, q.getName()));
        r.add(AdminServiceGrpc.getListTopicsMethod(), (a, q) -> {
        }, (a, answer) -> {
            ListTopicsResponse response = (ListTopicsResponse) answer;
            return response.toBuilder().clearTopics().addAllTopics(response.getTopicsList().stream()
                    .filter(topic -> a.permits(DESCRIBE, TOPIC, topic.getName())).toList()).build();
        });
        r.add(AdminServiceGrpc.getDescribeTopicsMethod(), (a, q) -> ((DescribeTopicsRequest) q).getNamesList()
                .forEach(name -> a.requireTopic(DESCRIBE, name)), (a, answer) -> {
                    DescribeTopicsResponse response = (DescribeTopicsResponse) answer;
                    return response.toBuilder().clearTopics().addAllTopics(response.getTopicsList().stream()
                            .filter(topic -> a.permits(DESCRIBE, TOPIC, topic.getName())).toList()).build();
                });
        r.request(AdminServiceGrpc.getAlterTopicConfigMethod(), (a, q) -> alterTopic(a, q));
        r.request(AdminServiceGrpc.getClusterStatusMethod(), (a, q) -> a.requireCluster(DESCRIBE));
        r.request(AdminServiceGrpc.getTransferLeadershipMethod(), (a, q) -> a.requireCluster(ALTER));
        r.request(AdminServiceGrpc.getReassignPartitionMethod(), (a, q) -> a.requireCluster(ALTER));
        r.request(AdminServiceGrpc.getCreateAclsMethod(), (a, q) -> a.requireCluster(ALTER));
        r.request(AdminServiceGrpc.getDeleteAclsMethod(), (a, q) -> a.requireCluster(ALTER));
        r.request(AdminServiceGrpc.getDescribeAclsMethod(), (a, q) -> a.requireCluster(DESCRIBE));
        r.request(AdminServiceGrpc.getAlterClientQuotasMethod(), (a, q) -> a.requireCluster(ALTER));
        r.request(AdminServiceGrpc.getDescribeClientQuotasMethod(), (a, q) -> a.requireCluster(DESCRIBE));

        r.request(GroupServiceGrpc.getCommitOffsetsMethod(), (a, q) -> commitOffsets(a, q));
        r.add(GroupServiceGrpc.getFetchOffsetsMethod(), (a, q) -> fetchOffsets(a, (FetchOffsetsRequest) q),
                (a, answer) -> {
                    FetchOffsetsResponse response = (FetchOffsetsResponse) answer;
                    return response.toBuilder().clearOffsets().addAllOffsets(response.getOffsetsList().stream()
                            .filter(offset -> a.permits(DESCRIBE, TOPIC, offset.getTopic())).toList()).build();
                });
        r.add(GroupServiceGrpc.getListGroupsMethod(), (a, q) -> {
        }, (a, answer) -> {
            ListGroupsResponse response = (ListGroupsResponse) answer;
            return response.toBuilder().clearGroups().addAllGroups(response.getGroupsList().stream()
                    .filter(group -> a.permits(DESCRIBE, GROUP, group)).toList()).build();
        });
        r.request(GroupServiceGrpc.getDescribeGroupMethod(), (a, q) -> a.requireGroup(DESCRIBE, q.getGroup()));
        r.request(GroupServiceGrpc.getDeleteGroupMethod(), (a, q) -> a.requireGroup(DELETE, q.getGroup()));
        r.request(GroupServiceGrpc.getDeleteOffsetsMethod(), (a, q) -> deleteOffsets(a, q));
        r.request(GroupServiceGrpc.getConsumerGroupHeartbeatMethod(), (a, q) -> a.requireGroup(READ, q.getGroup()));

        r.request(TransactionServiceGrpc.getInitProducerIdMethod(), (a, q) -> initProducerId(a, q));
        r.request(TransactionServiceGrpc.getAddPartitionsToTxnMethod(), (a, q) -> addPartitions(a, q));
        r.request(TransactionServiceGrpc.getTxnOffsetCommitMethod(), (a, q) -> txnOffsetCommit(a, q));
        r.request(TransactionServiceGrpc.getEndTxnMethod(), (a, q) -> a.requireTransactionalId(
                q.getTransactionalId()));
        r.request(TransactionServiceGrpc.getWriteTxnMarkerMethod(), (a, q) -> a.requireCluster(CLUSTER_ACTION));
        for (MethodDescriptor<?, ?> method : List.of(ClusterServiceGrpc.getProbeMethod(),
                ReplicaServiceGrpc.getGetSnapshotMethod(), ReplicaServiceGrpc.getReadPartitionMethod(),
                ReplicaServiceGrpc.getGetMetadataSnapshotMethod(), ReplicaServiceGrpc.getDigestPartitionMethod())) {
            r.add(method, (a, q) -> a.requireCluster(CLUSTER_ACTION), (a, answer) -> answer);
        }
        return r;
    }

    private static void createTopic(CallAccess access, CreateTopicRequest request) {
        if (!access.permits(CREATE, CLUSTER, AclBindingRules.CLUSTER_RESOURCE)) {
            access.requireTopic(CREATE, request.getName());
        }
    }

    private static void alterTopic(CallAccess access, AlterTopicConfigRequest request) {
        access.requireTopic(ALTER, request.getName());
    }

    private static void commitOffsets(CallAccess access, CommitOffsetsRequest request) {
        access.requireGroup(READ, request.getGroup());
        readTopics(access, request.getOffsetsList());
    }

    private static void fetchOffsets(CallAccess access, FetchOffsetsRequest request) {
        access.requireGroup(DESCRIBE, request.getGroup());
        request.getPartitionsList().stream().map(TopicPartitionRef::getTopic).distinct()
                .forEach(topic -> access.requireTopic(DESCRIBE, topic));
    }

    private static void deleteOffsets(CallAccess access, DeleteOffsetsRequest request) {
        access.requireGroup(DELETE, request.getGroup());
        request.getTopicsList().forEach(topic -> access.requireTopic(READ, topic));
    }

    private static void initProducerId(CallAccess access, InitProducerIdRequest request) {
        if (request.getTransactionalId().isEmpty()) {
            access.authorizer().authorizeIdempotentWrite(access.caller());
        } else {
            access.requireTransactionalId(request.getTransactionalId());
        }
    }

    private static void addPartitions(CallAccess access, AddPartitionsToTxnRequest request) {
        access.requireTransactionalId(request.getTransactionalId());
        request.getPartitionsList().stream().map(TopicPartitionRef::getTopic).distinct()
                .forEach(topic -> access.requireTopic(WRITE, topic));
    }

    private static void txnOffsetCommit(CallAccess access, TxnOffsetCommitRequest request) {
        access.requireTransactionalId(request.getTransactionalId());
        access.requireGroup(READ, request.getGroup());
        readTopics(access, request.getOffsetsList());
    }

    private static void readTopics(CallAccess access, List<PartitionOffset> offsets) {
        offsets.stream().map(PartitionOffset::getTopic).distinct().forEach(topic -> access.requireTopic(READ, topic));
    }

    @SuppressWarnings("unchecked")
    private <Q extends Message> void request(MethodDescriptor<Q, ?> method, BiConsumer<CallAccess, Q> check) {
        add(method, (access, request) -> check.accept(access, (Q) request), (access, answer) -> answer);
    }

    private void add(MethodDescriptor<?, ?> method, Rule rule) {
        rules.put(method.getFullMethodName(), rule);
    }

    private void add(MethodDescriptor<?, ?> method, BiConsumer<CallAccess, Object> request,
                     BiFunction<CallAccess, Object, Object> answer) {
        add(method, new Rule(request, answer));
    }
}
