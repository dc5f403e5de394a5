package io.tidemark.core.server;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.grpc.stub.StreamObserver;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.group.GroupCoordinator;
import io.tidemark.core.group.GroupOffsetStore;
import io.tidemark.core.group.GroupOffsetStore.Committed;
import io.tidemark.core.group.membership.ConsumerGroup;
import io.tidemark.core.group.membership.PartitionRefs;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.metrics.BrokerMetrics.GroupCall;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.CommitOffsetsRequest;
import io.tidemark.proto.v1.CommitOffsetsResponse;
import io.tidemark.proto.v1.CommittedOffset;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatRequest;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatResponse;
import io.tidemark.proto.v1.DescribeGroupRequest;
import io.tidemark.proto.v1.DeleteGroupRequest;
import io.tidemark.proto.v1.DeleteGroupResponse;
import io.tidemark.proto.v1.DeleteOffsetsRequest;
import io.tidemark.proto.v1.DeleteOffsetsResponse;
import io.tidemark.proto.v1.DescribeGroupResponse;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchOffsetsRequest;
import io.tidemark.proto.v1.FetchOffsetsResponse;
import io.tidemark.proto.v1.GroupMemberDescription;
import io.tidemark.proto.v1.GroupPartitionLag;
import io.tidemark.proto.v1.GroupServiceGrpc;
import io.tidemark.proto.v1.ListGroupsRequest;
import io.tidemark.proto.v1.ListGroupsResponse;
import io.tidemark.proto.v1.PartitionOffset;
import io.tidemark.proto.v1.Subscription;
import io.tidemark.proto.v1.TopicPartitionRef;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * Consumer groups over gRPC: offsets, stored by the {@link GroupOffsetStore}, and membership, kept by the
 * {@link GroupCoordinator}, which also fences members' commits.
 */
final class GroupServiceAdapter extends GroupServiceGrpc.GroupServiceImplBase {
    static final int MAX_GROUP_NAME_BYTES = 255;
    static final int MAX_METADATA_BYTES = 4096;

    private final Topics topics;
    private final GroupOffsetStore store;
    private final GroupCoordinator coordinator;
    private final BrokerConfig config;
    private final Responses responses;
    private final BrokerMetrics metrics;

    GroupServiceAdapter(Topics topics, GroupOffsetStore store, GroupCoordinator coordinator, BrokerConfig config,
                        BrokerMetrics metrics) {
        this.topics = topics;
        this.store = store;
        this.coordinator = coordinator;
        this.config = config;
        this.responses = new Responses(metrics);
        this.metrics = metrics;
    }

    /** Answers a call as {@link Responses#respond} does, timing it from arrival to answer. */
    private <T> void timed(GroupCall call, StreamObserver<T> observer, Callable<T> body) {
        responses.respondTimed(metrics.groupLatency(call), observer, body);
    }

    @Override
    public void commitOffsets(CommitOffsetsRequest request, StreamObserver<CommitOffsetsResponse> observer) {
        timed(GroupCall.COMMIT_OFFSETS, observer, () -> {
            checkGroup(request.getGroup());
            Map<TopicPartition, Committed> offsets = offsets(topics, config, request.getOffsetsList());
            coordinator.checkCommit(request.getGroup(), request.getMemberId(), request.getMemberEpoch(),
                    offsets.keySet());
            store.checkRoomFor(request.getGroup(), config.groups().maxCount());
            store.commit(request.getGroup(), offsets);
            return CommitOffsetsResponse.getDefaultInstance();
        });
    }

    @Override
    public void consumerGroupHeartbeat(ConsumerGroupHeartbeatRequest request,
                                       StreamObserver<ConsumerGroupHeartbeatResponse> observer) {
        timed(GroupCall.HEARTBEAT, observer, () -> {
            checkGroup(request.getGroup());
            Set<String> subscribed = null;
            Pattern pattern = null;
            if (request.hasSubscription()) {
                if (request.getSubscription().getTopicsCount() > config.maxTopicsPerRequest()) {
                    throw Responses.invalid("a subscription names at most " + config.maxTopicsPerRequest()
                            + " topics (max.topics.per.request), not " + request.getSubscription().getTopicsCount());
                }
                subscribed = Set.copyOf(request.getSubscription().getTopicsList());
                pattern = pattern(request.getSubscription().getPattern());
            }
            Set<TopicPartition> owned = null;
            if (request.hasOwned()) {
                if (request.getOwned().getPartitionsCount() > config.maxOffsetsPerCommit()) {
                    throw Responses.invalid("a heartbeat lists at most " + config.maxOffsetsPerCommit()
                            + " owned partitions (max.offsets.per.commit), not "
                            + request.getOwned().getPartitionsCount());
                }
                owned = new HashSet<>(PartitionRefs.partitions(request.getOwned().getPartitionsList()));
            }
            GroupCoordinator.Heartbeated heartbeated = coordinator.heartbeat(request.getGroup(),
                    new ConsumerGroup.Heartbeat(
                    request.getMemberId(), request.getMemberEpoch(), request.getInstanceId().isEmpty() ? null
                    : request.getInstanceId(), request.getClientId(), ClientAddress.current(), subscribed, pattern,
                    owned), request.getAssignor());
            heartbeated.stored().get();
            ConsumerGroup.Answer answer = heartbeated.answer();
            ConsumerGroupHeartbeatResponse.Builder response = ConsumerGroupHeartbeatResponse.newBuilder()
                    .setMemberId(answer.memberId()).setMemberEpoch(answer.memberEpoch())
                    .setHeartbeatIntervalMs(heartbeated.heartbeatIntervalMs());
            response.addAllAssignment(PartitionRefs.refs(answer.assignment()));
            return response.build();
        });
    }

    /**
     * The subscription's pattern, or null when it has none: RE2/J syntax (Java's, less lookaround and
     * backreferences), which matches in time linear in the topic name whatever the pattern.
     */
    private static Pattern pattern(String regex) {
        if (regex.isEmpty()) {
            return null;
        }
        try {
            return Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw Responses.invalid("subscription pattern '" + regex + "' is not an RE2/J regular expression ("
                    + e.getDescription() + "); the syntax is Java's without lookaround and backreferences");
        }
    }

    @Override
    public void fetchOffsets(FetchOffsetsRequest request, StreamObserver<FetchOffsetsResponse> observer) {
        timed(GroupCall.FETCH_OFFSETS, observer, () -> {
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
        timed(GroupCall.LIST_GROUPS, observer,
                () -> ListGroupsResponse.newBuilder().addAllGroups(store.groups()).build());
    }

    @Override
    public void describeGroup(DescribeGroupRequest request, StreamObserver<DescribeGroupResponse> observer) {
        timed(GroupCall.DESCRIBE_GROUP, observer, () -> {
            checkGroup(request.getGroup());
            GroupCoordinator.Membership membership = coordinator.membership(request.getGroup());
            Map<TopicPartition, Committed> committed = store.committed(request.getGroup());
            if (committed.isEmpty() && membership.members().isEmpty()) {
                throw new TidemarkException(ErrorCode.UNKNOWN_GROUP, "group '" + request.getGroup()
                        + "' has no members and has committed no offsets");
            }
            DescribeGroupResponse.Builder response = DescribeGroupResponse.newBuilder().setGroup(request.getGroup())
                    .setState(membership.state().name().toLowerCase(Locale.ROOT))
                    .setGroupEpoch(membership.groupEpoch()).setAssignor(membership.assignor())
                    .setCoordinatorNodeId(config.nodeId());
            long nowMs = coordinator.nowMs();
            for (ConsumerGroup.MemberView member : membership.members()) {
                response.addMembers(GroupMemberDescription.newBuilder().setMemberId(member.memberId())
                        .setInstanceId(member.instanceId().orElse("")).setClientId(member.clientId())
                        .setHost(member.host()).setMemberEpoch(member.memberEpoch())
                        .setSubscription(Subscription.newBuilder().addAllTopics(member.topics())
                                .setPattern(member.pattern().orElse("")))
                        .addAllAssignment(PartitionRefs.refs(member.assignment()))
                        .addAllRevoking(PartitionRefs.refs(member.revoking()))
                        .setLastHeartbeatMsAgo(nowMs - member.lastHeartbeatMs()));
            }
            committed.forEach((tp, c) -> {
                long end = logEndOffset(tp);
                response.addPartitions(GroupPartitionLag.newBuilder().setTopic(tp.topic()).setPartition(tp.partition())
                        .setCommittedOffset(c.offset()).setLogEndOffset(end).setLag(Math.max(0, end - c.offset()))
                        .setMetadata(c.metadata()).setCommitTimeMs(c.commitTimeMs()));
            });
            return response.build();
        });
    }

    @Override
    public void deleteGroup(DeleteGroupRequest request, StreamObserver<DeleteGroupResponse> observer) {
        timed(GroupCall.DELETE_GROUP, observer, () -> {
            checkGroup(request.getGroup());
            List<TopicPartition> deleted = coordinator.whileEmpty(request.getGroup(), "deleting a group takes",
                    () -> store.deleteGroup(request.getGroup()));
            if (deleted.isEmpty()) {
                throw new TidemarkException(ErrorCode.UNKNOWN_GROUP, "group '" + request.getGroup()
                        + "' has committed no offsets");
            }
            return DeleteGroupResponse.newBuilder().addAllDeleted(PartitionRefs.refs(deleted)).build();
        });
    }

    @Override
    public void deleteOffsets(DeleteOffsetsRequest request, StreamObserver<DeleteOffsetsResponse> observer) {
        timed(GroupCall.DELETE_OFFSETS, observer, () -> {
            checkGroup(request.getGroup());
            if (request.getTopicsCount() < 1 || request.getTopicsCount() > config.maxTopicsPerRequest()) {
                throw Responses.invalid("DeleteOffsets names 1 to " + config.maxTopicsPerRequest()
                        + " topics (max.topics.per.request), not " + request.getTopicsCount());
            }
            Set<String> named = Set.copyOf(request.getTopicsList());
            List<TopicPartition> deleted = coordinator.whileUnsubscribed(request.getGroup(), named, () -> store.delete(
                    request.getGroup(), store.committed(request.getGroup()).keySet().stream()
                            .filter(tp -> named.contains(tp.topic())).toList()));
            return DeleteOffsetsResponse.newBuilder().addAllDeleted(PartitionRefs.refs(deleted)).build();
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

    /**
     * The offsets of a commit, checked: 1 to max.offsets.per.commit of them, of partitions that exist, not negative,
     * metadata of at most {@value #MAX_METADATA_BYTES} bytes.
     */
    static Map<TopicPartition, Committed> offsets(Topics topics, BrokerConfig config, List<PartitionOffset> request) {
        if (request.size() < 1 || request.size() > config.maxOffsetsPerCommit()) {
            throw Responses.invalid("a commit carries 1 to " + config.maxOffsetsPerCommit()
                    + " offsets (max.offsets.per.commit), not " + request.size());
        }
        Map<TopicPartition, Committed> offsets = new LinkedHashMap<>();
        for (PartitionOffset offset : request) {
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
        return offsets;
    }

    static void checkGroup(String group) {
        int bytes = group.getBytes(StandardCharsets.UTF_8).length;
        if (bytes < 1 || bytes > MAX_GROUP_NAME_BYTES) {
            throw Responses.invalid("group name '" + group + "' is not allowed: 1 to " + MAX_GROUP_NAME_BYTES
                    + " bytes of UTF-8");
        }
    }
}
