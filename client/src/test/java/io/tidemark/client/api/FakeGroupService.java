package io.tidemark.client.api;

import io.grpc.stub.StreamObserver;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.CommitOffsetsRequest;
import io.tidemark.proto.v1.CommitOffsetsResponse;
import io.tidemark.proto.v1.CommittedOffset;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatRequest;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatResponse;
import io.tidemark.proto.v1.DescribeGroupRequest;
import io.tidemark.proto.v1.DescribeGroupResponse;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchOffsetsRequest;
import io.tidemark.proto.v1.FetchOffsetsResponse;
import io.tidemark.proto.v1.GroupPartitionLag;
import io.tidemark.proto.v1.GroupServiceGrpc;
import io.tidemark.proto.v1.ListGroupsRequest;
import io.tidemark.proto.v1.ListGroupsResponse;
import io.tidemark.proto.v1.PartitionOffset;
import io.tidemark.proto.v1.TopicPartitionRef;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** One fake node's GroupService: group offsets in the {@link FakeCluster}'s map. */
final class FakeGroupService extends GroupServiceGrpc.GroupServiceImplBase {
    private final FakeCluster cluster;
    private final int node;

    FakeGroupService(FakeCluster cluster, int node) {
        this.cluster = cluster;
        this.node = node;
    }

    @Override
    public void commitOffsets(CommitOffsetsRequest request, StreamObserver<CommitOffsetsResponse> observer) {
        cluster.serve("CommitOffsets", node, observer, () -> {
            Map<TopicPartition, OffsetAndMetadata> group = cluster.groups.computeIfAbsent(request.getGroup(),
                    g -> new ConcurrentHashMap<>());
            for (PartitionOffset offset : request.getOffsetsList()) {
                group.put(new TopicPartition(offset.getTopic(), offset.getPartition()),
                        new OffsetAndMetadata(offset.getOffset(), offset.getMetadata()));
            }
            return CommitOffsetsResponse.getDefaultInstance();
        });
    }

    @Override
    public void fetchOffsets(FetchOffsetsRequest request, StreamObserver<FetchOffsetsResponse> observer) {
        cluster.serve("FetchOffsets", node, observer, () -> {
            Map<TopicPartition, OffsetAndMetadata> group = cluster.groups.getOrDefault(request.getGroup(), Map.of());
            FetchOffsetsResponse.Builder answer = FetchOffsetsResponse.newBuilder();
            for (TopicPartitionRef ref : request.getPartitionsList()) {
                OffsetAndMetadata committed = group.get(new TopicPartition(ref.getTopic(), ref.getPartition()));
                CommittedOffset.Builder offset = CommittedOffset.newBuilder().setTopic(ref.getTopic())
                        .setPartition(ref.getPartition()).setCommitted(committed != null);
                if (committed != null) {
                    offset.setOffset(committed.offset()).setMetadata(committed.metadata())
                            .setCommitTimeMs(cluster.clock.millis());
                }
                answer.addOffsets(offset);
            }
            return answer.build();
        });
    }

    /** Answers by the next of {@link FakeCluster#heartbeatAnswers}; NOT_AVAILABLE when none is left. */
    @Override
    public void consumerGroupHeartbeat(ConsumerGroupHeartbeatRequest request,
                                       StreamObserver<ConsumerGroupHeartbeatResponse> observer) {
        cluster.serve("ConsumerGroupHeartbeat", node, observer, () -> {
            cluster.heartbeats.add(request);
            var answer = cluster.heartbeatAnswers.poll();
            if (answer == null) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the test scripted no more heartbeat answers");
            }
            return answer.apply(request);
        });
    }

    @Override
    public void listGroups(ListGroupsRequest request, StreamObserver<ListGroupsResponse> observer) {
        cluster.serve("ListGroups", node, observer,
                () -> ListGroupsResponse.newBuilder().addAllGroups(new TreeMap<>(cluster.groups).keySet()).build());
    }

    @Override
    public void describeGroup(DescribeGroupRequest request, StreamObserver<DescribeGroupResponse> observer) {
        cluster.serve("DescribeGroup", node, observer, () -> {
            Map<TopicPartition, OffsetAndMetadata> group = cluster.groups.get(request.getGroup());
            if (group == null) {
                throw new TidemarkException(ErrorCode.UNKNOWN_GROUP, "group " + request.getGroup()
                        + " has no committed offsets");
            }
            DescribeGroupResponse.Builder answer = DescribeGroupResponse.newBuilder().setGroup(request.getGroup());
            group.forEach((tp, committed) -> {
                long end = cluster.log(tp).endOffset();
                answer.addPartitions(GroupPartitionLag.newBuilder().setTopic(tp.topic()).setPartition(tp.partition())
                        .setCommittedOffset(committed.offset()).setLogEndOffset(end)
                        .setLag(Math.max(0, end - committed.offset())).setMetadata(committed.metadata()));
            });
            return answer.build();
        });
    }
}
