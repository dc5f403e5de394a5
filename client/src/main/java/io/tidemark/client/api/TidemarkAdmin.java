package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclFilter;
import io.tidemark.proto.v1.AlterClientQuotasRequest;
import io.tidemark.proto.v1.AlterTopicConfigRequest;
import io.tidemark.proto.v1.ClientQuota;
import io.tidemark.proto.v1.ClusterStatusRequest;
import io.tidemark.proto.v1.ClusterStatusResponse;
import io.tidemark.proto.v1.CreateAclsRequest;
import io.tidemark.proto.v1.CreateTopicRequest;
import io.tidemark.proto.v1.DeleteAclsRequest;
import io.tidemark.proto.v1.DeleteGroupRequest;
import io.tidemark.proto.v1.DeleteOffsetsRequest;
import io.tidemark.proto.v1.DeleteTopicRequest;
import io.tidemark.proto.v1.DescribeAclsRequest;
import io.tidemark.proto.v1.DescribeClientQuotasRequest;
import io.tidemark.proto.v1.DescribeGroupRequest;
import io.tidemark.proto.v1.DescribeGroupResponse;
import io.tidemark.proto.v1.DescribeTopicsRequest;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.GroupPartitionLag;
import io.tidemark.proto.v1.ListGroupsRequest;
import io.tidemark.proto.v1.ListTopicsRequest;
import io.tidemark.proto.v1.MetadataRequest;
import io.tidemark.proto.v1.MetadataResponse;
import io.tidemark.proto.v1.OriginOffsetResponse;
import io.tidemark.proto.v1.ReassignPartitionRequest;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TopicPartitionRef;
import io.tidemark.proto.v1.TopicSummary;
import io.tidemark.proto.v1.TransferLeadershipRequest;
import io.tidemark.proto.v1.TransferLeadershipResponse;

import java.io.Closeable;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * Administers a Tidemark cluster: topics, their configs, cluster status and metadata, moving partition leadership
 * and replicas, offset lookups by time, consumer group offsets, and ACLs. Calls go to the bootstrap brokers in turn
 * until one answers (an unreachable or stopping broker, NOT_AVAILABLE, moves the call to the next), each with the
 * deadline {@code request.timeout.ms} ({@link #reassignPartition} adds its own timeout to it); {@link #listOffsets},
 * {@link #read} and {@link #originOffset} go to the partition's leader, and the group calls but {@link #listGroups}
 * to the groups' coordinator (the leader of {@code __group_offsets}). Every call blocks until answered and every
 * failure is a {@link TidemarkException} carrying the broker's code and message. Answers are the API's protobuf
 * messages where they have one; a topic's id is their {@code topic_id} bytes ({@link TopicIds#fromBytes} makes the
 * UUID).
 *
 * <p>A create or delete that timed out may have taken effect on the broker that did not answer; its retry on
 * the next broker can then fail with TOPIC_EXISTS or UNKNOWN_TOPIC. A retried {@link #createAcls} changes nothing;
 * a retried {@link #deleteAcls} does not answer the bindings the attempt that timed out removed.
 *
 * <p>Thread-safe. The answers of the leader's calls complete on the transport thread that read them, which wakes the
 * waiting caller directly ({@link LeaderCaller.Callbacks#TRANSPORT_THREAD}).
 */
public final class TidemarkAdmin implements Closeable {
    private final BrokerChannels channels;
    private final AnyBrokerCaller anyBroker;
    private final LeaderCaller leaders;
    private final GroupOffsets groupOffsets;
    private final long requestTimeoutMs;

    public TidemarkAdmin(AdminConfig config) {
        ConnectionSettings connection = config.connection();
        this.requestTimeoutMs = connection.requestTimeoutMs();
        this.channels = new BrokerChannels(connection);
        this.anyBroker = new AnyBrokerCaller(connection.bootstrap(), channels, connection.requestTimeoutMs());
        this.leaders = new LeaderCaller(new ClusterMetadata(anyBroker), channels, connection.requestTimeoutMs(),
                LeaderCaller.Callbacks.TRANSPORT_THREAD);
        this.groupOffsets = new GroupOffsets(leaders);
    }

    /**
     * Creates a topic.
     *
     * @param replicationFactor 0 for the cluster's default
     * @param configs           topic config overrides; the rest take the broker's defaults
     */
    public TopicDescription createTopic(String name, int partitions, int replicationFactor,
                                        Map<String, String> configs) {
        CreateTopicRequest request = CreateTopicRequest.newBuilder().setName(name).setPartitions(partitions)
                .setReplicationFactor(replicationFactor).putAllConfigs(configs).build();
        return await(anyBroker.call("CreateTopic",
                channel -> anyBroker.admin(channel).createTopic(request))).getTopic();
    }

    public void deleteTopic(String name) {
        DeleteTopicRequest request = DeleteTopicRequest.newBuilder().setName(name).build();
        await(anyBroker.call("DeleteTopic",
                channel -> anyBroker.admin(channel).deleteTopic(request)));
    }

    /** @param includeInternal also list internal topics (names starting with "__") */
    public List<TopicSummary> listTopics(boolean includeInternal) {
        ListTopicsRequest request = ListTopicsRequest.newBuilder().setIncludeInternal(includeInternal).build();
        return await(anyBroker.call("ListTopics",
                channel -> anyBroker.admin(channel).listTopics(request))).getTopicsList();
    }

    /** @param names empty for every topic (internal ones excluded) */
    public List<TopicDescription> describeTopics(List<String> names) {
        DescribeTopicsRequest request = DescribeTopicsRequest.newBuilder().addAllNames(names).build();
        return await(anyBroker.call("DescribeTopics",
                channel -> anyBroker.admin(channel).describeTopics(request))).getTopicsList();
    }

    /** Sets and removes config overrides of a topic; returns the topic as it is afterwards. */
    public TopicDescription alterTopicConfig(String name, Map<String, String> set, List<String> remove) {
        AlterTopicConfigRequest request = AlterTopicConfigRequest.newBuilder().setName(name).putAllSet(set)
                .addAllRemove(remove).build();
        return await(anyBroker.call("AlterTopicConfig",
                channel -> anyBroker.admin(channel).alterTopicConfig(request))).getTopic();
    }

    public ClusterStatusResponse clusterStatus() {
        return await(anyBroker.call("ClusterStatus",
                channel -> anyBroker.admin(channel).clusterStatus(ClusterStatusRequest.getDefaultInstance())));
    }

    /**
     * The cluster's name, its brokers' {@code cluster.name}, as {@link #clusterStatus} carries it; empty when the
     * cluster has none.
     */
    public Optional<String> clusterName() {
        String name = clusterStatus().getClusterName();
        return name.isEmpty() ? Optional.empty() : Optional.of(name);
    }

    /**
     * Moves a partition's leadership to the replica on {@code toNodeId} (planned migration) and waits up to
     * {@code timeoutMs} for it. Leadership is held per partition group: the other partitions of the group move with
     * it.
     *
     * @return the new leader's node id, and every partition that moved (the group's)
     */
    public TransferLeadershipResponse transferLeadership(TopicPartition tp, int toNodeId, long timeoutMs) {
        TransferLeadershipRequest request = TransferLeadershipRequest.newBuilder().setTopic(tp.topic())
                .setPartition(tp.partition()).setToNodeId(toNodeId).setTimeoutMs(timeoutMs).build();
        return await(anyBroker.call("TransferLeadership",
                channel -> anyBroker.admin(channel).transferLeadership(request)));
    }

    /**
     * Moves a partition to the replicas {@code replicaNodeIds} (the preferred leader first), keeping its data, and
     * waits up to {@code timeoutMs} for the move to complete; the call's deadline is that plus
     * {@code request.timeout.ms}. A move that did not complete in time is finished by calling again with the same
     * replicas.
     *
     * @return the partition's replicas afterwards
     */
    public List<Integer> reassignPartition(TopicPartition tp, List<Integer> replicaNodeIds, long timeoutMs) {
        ReassignPartitionRequest request = ReassignPartitionRequest.newBuilder().setTopic(tp.topic())
                .setPartition(tp.partition()).addAllReplicaNodeIds(replicaNodeIds).setTimeoutMs(timeoutMs).build();
        return await(anyBroker.call("ReassignPartition", channel -> anyBroker.admin(channel,
                timeoutMs + requestTimeoutMs).reassignPartition(request))).getReplicaNodeIdsList();
    }

    /**
     * Adds ACLs; one the cluster holds already stays as it is. Answered once the metadata group stored them, when
     * every broker enforces them as soon as it applied the entry.
     *
     * @throws TidemarkException CLUSTER_AUTHORIZATION_FAILED without ALTER on the cluster
     */
    public void createAcls(List<AclBinding> bindings) {
        CreateAclsRequest request = CreateAclsRequest.newBuilder().addAllBindings(bindings).build();
        await(anyBroker.call("CreateAcls",
                channel -> anyBroker.admin(channel).createAcls(request)));
    }

    /**
     * Removes every ACL one of {@code filters} matches (a filter's unset fields match any value).
     *
     * @return the bindings removed
     * @throws TidemarkException CLUSTER_AUTHORIZATION_FAILED without ALTER on the cluster
     */
    public List<AclBinding> deleteAcls(List<AclFilter> filters) {
        DeleteAclsRequest request = DeleteAclsRequest.newBuilder().addAllFilters(filters).build();
        return await(anyBroker.call("DeleteAcls",
                channel -> anyBroker.admin(channel).deleteAcls(request))).getDeletedList();
    }

    /**
     * The ACLs {@code filter} matches (its unset fields match any value), sorted by resource type, resource name,
     * pattern type, principal, host, operation and permission.
     *
     * @throws TidemarkException CLUSTER_AUTHORIZATION_FAILED without DESCRIBE on the cluster
     */
    public List<AclBinding> describeAcls(AclFilter filter) {
        DescribeAclsRequest request = DescribeAclsRequest.newBuilder().setFilter(filter).build();
        return await(anyBroker.call("DescribeAcls",
                channel -> anyBroker.admin(channel).describeAcls(request))).getBindingsList();
    }

    /**
     * Sets principals' own quotas, each replacing what the principal had (both rates 0: removed, the brokers'
     * defaults apply again); answered once the broker asked applies them.
     *
     * @throws TidemarkException INVALID_REQUEST for a quota that is not valid; CLUSTER_AUTHORIZATION_FAILED without
     *                           ALTER on the cluster
     */
    public void alterClientQuotas(List<ClientQuota> quotas) {
        AlterClientQuotasRequest request = AlterClientQuotasRequest.newBuilder().addAllQuotas(quotas).build();
        await(anyBroker.call("AlterClientQuotas", channel -> anyBroker.admin(channel).alterClientQuotas(request)));
    }

    /**
     * Principals' own quotas, sorted by principal.
     *
     * @param principal {@code User:NAME}, or empty for every principal with quotas of its own
     * @throws TidemarkException CLUSTER_AUTHORIZATION_FAILED without DESCRIBE on the cluster
     */
    public List<ClientQuota> describeClientQuotas(String principal) {
        DescribeClientQuotasRequest request = DescribeClientQuotasRequest.newBuilder().setPrincipal(principal).build();
        return await(anyBroker.call("DescribeClientQuotas",
                channel -> anyBroker.admin(channel).describeClientQuotas(request))).getQuotasList();
    }

    /** @param topics empty for every topic */
    public MetadataResponse metadata(List<String> topics) {
        MetadataRequest request = MetadataRequest.newBuilder().addAllTopics(topics).build();
        return await(anyBroker.call("Metadata", channel -> anyBroker.broker(channel).metadata(request)));
    }

    /** Looks an offset up on the partition's leader: earliest, latest, or by ReceiveTime or SendTime. */
    public OffsetLookup listOffsets(TopicPartition tp, OffsetSpec spec) {
        return OffsetLookup.of(await(leaders.listOffsets(tp, spec)));
    }

    /**
     * Reads the records at and after {@code offset} of the batches a fetch returns from the partition's leader:
     * at most {@code maxBytes} of batches but at least the whole one holding {@code offset}; empty at the end of
     * the partition. Every batch is validated first; transaction markers are left out, records of aborted transactions
     * are not (it reads as read_uncommitted).
     *
     * @throws TidemarkException OFFSET_OUT_OF_RANGE naming the partition's offsets; CORRUPT_BATCH
     */
    public List<ConsumerRecord> read(TopicPartition tp, long offset, int maxBytes) {
        FetchRequest request = FetchRequest.newBuilder().setTopic(tp.topic()).setPartition(tp.partition())
                .setOffset(offset).setMaxBytes(maxBytes).build();
        return new Fetcher(leaders, maxBytes, maxBytes, ConsumerConfig.IsolationLevel.READ_UNCOMMITTED)
                .records(tp, offset, await(leaders.fetch(request))).records();
    }

    /**
     * The last origin offset of {@code origin} (a partition of another cluster, its topic named by name and id) that
     * {@code tp} holds through mirrored batches, from the partition's leader; empty when it holds none, also when it
     * holds copies of another topic of that name only (deleted and created again since).
     */
    public OptionalLong originOffset(TopicPartition tp, OriginPartition origin) {
        OriginOffsetResponse held = await(leaders.originOffset(tp, origin));
        return held.getHeld() ? OptionalLong.of(held.getOriginOffset()) : OptionalLong.empty();
    }

    public void commitOffsets(String group, Map<TopicPartition, OffsetAndMetadata> offsets) {
        await(groupOffsets.commit(group, offsets));
    }

    /**
     * The group's committed offsets of {@code partitions} (every partition it committed when empty); a partition
     * never committed is absent.
     */
    public Map<TopicPartition, OffsetAndMetadata> fetchOffsets(String group, Collection<TopicPartition> partitions) {
        return await(groupOffsets.fetch(group, partitions));
    }

    public List<String> listGroups() {
        return await(anyBroker.call("ListGroups",
                channel -> anyBroker.group(channel).listGroups(ListGroupsRequest.getDefaultInstance()))).getGroupsList();
    }

    /**
     * The group as its coordinator knows it: state, members, and committed offsets with each partition's log end
     * offset and lag.
     *
     * @throws TidemarkException UNKNOWN_GROUP when the group has no members and committed nothing
     */
    public DescribeGroupResponse describeGroup(String group) {
        DescribeGroupRequest request = DescribeGroupRequest.newBuilder().setGroup(group).build();
        return await(leaders.coordinator(stub -> stub.describeGroup(request)));
    }

    /**
     * Deletes every committed offset of a group without members.
     *
     * @return the partitions whose offsets were deleted
     * @throws TidemarkException NON_EMPTY_GROUP while it has members; UNKNOWN_GROUP when it committed nothing
     */
    public List<TopicPartition> deleteGroup(String group) {
        DeleteGroupRequest request = DeleteGroupRequest.newBuilder().setGroup(group).build();
        return partitions(await(leaders.coordinator(stub -> stub.deleteGroup(request))).getDeletedList());
    }

    /**
     * Deletes the group's committed offsets of every partition of {@code topics}.
     *
     * @return the partitions whose offsets were deleted (none when the group committed none of them)
     * @throws TidemarkException GROUP_SUBSCRIBED_TO_TOPIC when a member subscribes to one of them
     */
    public List<TopicPartition> deleteOffsets(String group, Collection<String> topics) {
        DeleteOffsetsRequest request = DeleteOffsetsRequest.newBuilder().setGroup(group).addAllTopics(topics).build();
        return partitions(await(leaders.coordinator(stub -> stub.deleteOffsets(request))).getDeletedList());
    }

    private static List<TopicPartition> partitions(List<TopicPartitionRef> refs) {
        return refs.stream().map(ref -> new TopicPartition(ref.getTopic(), ref.getPartition())).toList();
    }

    /** The partitions the group committed, as {@link #describeGroup} answers them; empty when it committed none. */
    public List<GroupPartitionLag> committedPartitions(String group) {
        try {
            return describeGroup(group).getPartitionsList();
        } catch (TidemarkException e) {
            if (e.code() == ErrorCode.UNKNOWN_GROUP) {
                return List.of();
            }
            throw e;
        }
    }

    /** Shuts the channels down. */
    @Override
    public void close() {
        channels.close();
    }

    private static <T> T await(CompletableFuture<T> call) {
        return GrpcFutures.await(call);
    }
}
