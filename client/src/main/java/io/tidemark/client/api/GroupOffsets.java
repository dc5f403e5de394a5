package io.tidemark.client.api;

import io.tidemark.proto.v1.CommitOffsetsRequest;
import io.tidemark.proto.v1.CommittedOffset;
import io.tidemark.proto.v1.FetchOffsetsRequest;
import io.tidemark.proto.v1.PartitionOffset;
import io.tidemark.proto.v1.TopicPartitionRef;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Commits and reads a consumer group's offsets through GroupService on the groups' coordinator, the leader of
 * {@code __group_offsets} ({@link LeaderCaller#coordinator}): it alone knows whether the group has members (a commit
 * without a member id is taken only while it has none), and it reads back a commit it just took. Used by the consumer
 * and the admin. The futures fail with the TidemarkException itself.
 *
 * <p>Thread-safe.
 */
final class GroupOffsets {
    private final LeaderCaller coordinator;

    GroupOffsets(LeaderCaller coordinator) {
        this.coordinator = coordinator;
    }

    CompletableFuture<Void> commit(String group, Map<TopicPartition, OffsetAndMetadata> offsets) {
        CommitOffsetsRequest built = request(group, offsets).build();
        return GrpcFutures.unwrapped(coordinator.coordinator(stub -> stub.commitOffsets(built))
                .thenApply(response -> null));
    }

    /** A commit of {@code offsets} without a member: add the member's id and epoch for a member's commit. */
    static CommitOffsetsRequest.Builder request(String group, Map<TopicPartition, OffsetAndMetadata> offsets) {
        CommitOffsetsRequest.Builder request = CommitOffsetsRequest.newBuilder().setGroup(group);
        offsets.forEach((tp, offset) -> request.addOffsets(PartitionOffset.newBuilder().setTopic(tp.topic())
                .setPartition(tp.partition()).setOffset(offset.offset()).setMetadata(offset.metadata())));
        return request;
    }

    /**
     * The committed offsets of {@code partitions} (every partition the group committed when empty); a partition
     * the group never committed is absent.
     */
    CompletableFuture<Map<TopicPartition, OffsetAndMetadata>> fetch(String group,
                                                                   Collection<TopicPartition> partitions) {
        FetchOffsetsRequest.Builder request = FetchOffsetsRequest.newBuilder().setGroup(group);
        partitions.forEach(tp -> request.addPartitions(TopicPartitionRef.newBuilder().setTopic(tp.topic())
                .setPartition(tp.partition())));
        FetchOffsetsRequest built = request.build();
        return GrpcFutures.unwrapped(coordinator.coordinator(stub -> stub.fetchOffsets(built))
                .thenApply(response -> {
                    Map<TopicPartition, OffsetAndMetadata> committed = new LinkedHashMap<>();
                    for (CommittedOffset offset : response.getOffsetsList()) {
                        if (offset.getCommitted()) {
                            committed.put(new TopicPartition(offset.getTopic(), offset.getPartition()),
                                    new OffsetAndMetadata(offset.getOffset(), offset.getMetadata()));
                        }
                    }
                    return committed;
                }));
    }
}
