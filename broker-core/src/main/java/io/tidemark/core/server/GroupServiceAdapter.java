package io.tidemark.core.server;

import io.grpc.stub.StreamObserver;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.core.group.GroupOffsetStore.Committed;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.CommitOffsetsRequest;
import io.tidemark.proto.v1.CommitOffsetsResponse;
import io.tidemark.proto.v1.CommittedOffset;
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

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** Consumer-group offsets over gRPC, stored by the {@link GroupOffsetStore}. */
final class GroupServiceAdapter extends GroupServiceGrpc.GroupServiceImplBase {
    static final int MAX_GROUP_NAME_BYTES = 255;
    static final int MAX_METADATA_BYTES = 4096;

    private final Topics topics;
    private final GroupOffsetStore store;
    private final BrokerConfig config;
    private final Responses responses;

    GroupServiceAdapter(Topics topics, GroupOffsetStore store, BrokerConfig config, BrokerMetrics metrics) {
        this.topics = topics;
        this.store = store;
        this.config = config;
        this.responses = new Responses(metrics);
    }

    @Override
    public void commitOffsets(CommitOffsetsRequest request, StreamObserver<CommitOffsetsResponse> observer) {
        responses.respond(observer, () -> {
            checkGroup(request.getGroup());
            if (request.getOffsetsCount() < 1 || request.getOffsetsCount() > config.maxOffsetsPerCommit()) {
                throw Responses.invalid("a commit carries 1 to " + config.maxOffsetsPerCommit()
                        + " offsets (max.offsets.per.commit), not " + request.getOffsetsCount());
            }
            Map<TopicPartition, Committed> offsets = new LinkedHashMap<>();
            for (PartitionOffset offset : request.getOffsetsList()) {
                topics.partition(offset.getTopic(), offset.getPartition());
                if (offset.getOffset() < 0) {
                    throw Responses.invalid("offset " + offset.getOffset() + " for " + offset.getTopic() + "-"
                            + offset.getPartition() + " is negative; commit the next offset to read, 0 or above");
                }
                if (offset.getMetadata().getBytes(StandardCharsets.UTF_8).length > MAX_METADATA_BYTES) {
                    throw Responses.invalid("metadata of " + offset.getTopic() + "-" + offset.getPartition()
                            + " is above " + MAX_METADATA_BYTES + " bytes");
                }
                offsets.put(new TopicPartition(offset.getTopic(), offset.getPartition()),
                        new Committed(offset.getOffset(), offset.getMetadata(), 0));
            }
            store.commit(request.getGroup(), offsets);
            return CommitOffsetsResponse.getDefaultInstance();
        });
    }

    @Override
    public void fetchOffsets(FetchOffsetsRequest request, StreamObserver<FetchOffsetsResponse> observer) {
        responses.respond(observer, () -> {
            checkGroup(request.getGroup());
            FetchOffsetsResponse.Builder response = FetchOffsetsResponse.newBuilder();
            if (request.getPartitionsCount() == 0) {
                store.committed(request.getGroup()).forEach((tp, c) -> response.addOffsets(committed(tp, Optional.of(c))));
            }
            for (TopicPartitionRef ref : request.getPartitionsList()) {
                TopicPartition tp = new TopicPartition(ref.getTopic(), ref.getPartition());
                response.addOffsets(committed(tp, store.committed(request.getGroup(), tp)));
            }
            return response.build();
        });
    }

    private static CommittedOffset committed(TopicPartition tp, Optional<Committed> committed) {
        CommittedOffset.Builder offset = CommittedOffset.newBuilder().setTopic(tp.topic()).setPartition(tp.partition())
                .setCommitted(committed.isPresent());
        committed.ifPresent(c -> offset.setOffset(c.offset()).setMetadata(c.metadata())
                .setCommitTimeMs(c.commitTimeMs()));
        return offset.build();
    }

    @Override
    public void listGroups(ListGroupsRequest request, StreamObserver<ListGroupsResponse> observer) {
        responses.respond(observer, () -> ListGroupsResponse.newBuilder().addAllGroups(store.groups()).build());
    }

    @Override
    public void describeGroup(DescribeGroupRequest request, StreamObserver<DescribeGroupResponse> observer) {
        responses.respond(observer, () -> {
            checkGroup(request.getGroup());
            Map<TopicPartition, Committed> committed = store.committed(request.getGroup());
            if (committed.isEmpty()) {
                throw new TidemarkException(ErrorCode.UNKNOWN_GROUP, "group '" + request.getGroup()
                        + "' has committed no offsets");
            }
            DescribeGroupResponse.Builder response = DescribeGroupResponse.newBuilder().setGroup(request.getGroup());
            committed.forEach((tp, c) -> {
                long end = logEndOffset(tp);
                response.addPartitions(GroupPartitionLag.newBuilder().setTopic(tp.topic()).setPartition(tp.partition())
                        .setCommittedOffset(c.offset()).setLogEndOffset(end).setLag(Math.max(0, end - c.offset()))
                        .setMetadata(c.metadata()).setCommitTimeMs(c.commitTimeMs()));
            });
            return response.build();
        });
    }

    /** The partition's log end offset, or -1 when its topic was deleted since the commit. */
    private long logEndOffset(TopicPartition tp) {
        try {
            return topics.partition(tp.topic(), tp.partition()).highWatermark();
        } catch (TidemarkException e) {
            return -1;
        }
    }

    private static void checkGroup(String group) {
        int bytes = group.getBytes(StandardCharsets.UTF_8).length;
        if (bytes < 1 || bytes > MAX_GROUP_NAME_BYTES) {
            throw Responses.invalid("group name '" + group + "' is not allowed: 1 to " + MAX_GROUP_NAME_BYTES
                    + " bytes of UTF-8");
        }
    }
}
