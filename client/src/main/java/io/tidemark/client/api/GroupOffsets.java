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
 * Commits and reads a consumer group's offsets through GroupService on whichever bootstrap broker answers (any
 * broker serves group offsets). Used by the consumer and the admin. The futures fail with the TidemarkException
 * itself.
 *
 * <p>Thread-safe.
 */
final class GroupOffsets {
    private final AnyBrokerCaller caller;

    GroupOffsets(AnyBrokerCaller caller) {
        this.caller = caller;
    }

    CompletableFuture<Void> commit(String group, Map<TopicPartition, OffsetAndMetadata> offsets) {
        CommitOffsetsRequest built = request(group, offsets).build();
        return GrpcFutures.unwrapped(caller.call("CommitOffsets of group " + group,
                channel -> caller.group(channel).commitOffsets(built)).thenApply(response -> null));
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
        return GrpcFutures.unwrapped(caller.call("FetchOffsets of group " + group,
                        channel -> caller.group(channel).fetchOffsets(built))
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
