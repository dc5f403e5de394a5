package io.tidemark.core.server;

import io.tidemark.core.auth.CallAccess;
import io.tidemark.core.partition.AppendWaiters;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.FetchManyRequest;
import io.tidemark.proto.v1.FetchManyResponse;
import io.tidemark.proto.v1.FetchOutcome;
import io.tidemark.proto.v1.FetchPartition;
import io.tidemark.proto.v1.FetchResponse;
import io.tidemark.proto.v1.IsolationLevel;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * The partitions of one FetchMany, each resolved on its own as a Fetch would be (the topic and its pinned id, READ on
 * it, this broker leading the partition) or refused alone; whether any has something to answer now; the waiters a long
 * poll sets on all of them; and the read of each, in request order, within the room the answer has.
 *
 * <p>Built on the gRPC thread (the caller's access is read there); read on the thread that answers. Not thread-safe.
 */
final class FetchManyCall {
    /** One partition of the request: where it is, or why it is refused (then partition is null). */
    private record Target(FetchPartition asked, UUID topicId, Partition partition, RuntimeException refused) {
    }

    private final boolean readCommitted;
    private final List<Target> targets;

    /**
     * Resolves every partition of {@code request}; a topic's lookup and its READ check are made once per topic name.
     */
    FetchManyCall(FetchManyRequest request, Topics topics, CallAccess access) {
        this.readCommitted = request.getIsolationLevel() == IsolationLevel.READ_COMMITTED;
        this.targets = new ArrayList<>(request.getPartitionsCount());
        Map<String, Object> topicOrRefusal = new HashMap<>();
        for (FetchPartition asked : request.getPartitionsList()) {
            targets.add(resolve(asked, topicOrRefusal.computeIfAbsent(asked.getTopic(), name -> {
                try {
                    access.requireTopic(AclOperation.READ, name);
                    return topics.topic(name);
                } catch (RuntimeException e) {
                    return e;
                }
            })));
        }
    }

    private static Target resolve(FetchPartition asked, Object topicOrRefusal) {
        if (topicOrRefusal instanceof RuntimeException refused) {
            return new Target(asked, null, null, refused);
        }
        Topic topic = (Topic) topicOrRefusal;
        try {
            TopicIds.optional(asked.getTopicId()).ifPresent(topic::checkId);
            Partition partition = topic.partition(asked.getPartition());
            partition.checkClientReadable();
            return new Target(asked, topic.id(), partition, null);
        } catch (IllegalArgumentException e) {
            return new Target(asked, null, null, Responses.invalid("FetchMany topic_id of " + asked.getTopic() + "-"
                    + asked.getPartition() + ": " + e.getMessage() + "; empty reads whichever topic has the name"));
        } catch (RuntimeException e) {
            return new Target(asked, null, null, e);
        }
    }

    /** Whether a partition has a record at or after its offset, or an error, to answer now. */
    boolean anyReady() {
        for (Target target : targets) {
            if (target.refused() != null || ready(target)) {
                return true;
            }
        }
        return false;
    }

    private boolean ready(Target target) {
        try {
            Partition partition = target.partition();
            return target.asked().getOffset()
                    != (readCommitted ? partition.lastStableOffset() : partition.highWatermark());
        } catch (RuntimeException e) {
            return true;
        }
    }

    /**
     * Runs {@code onAppend} at the first append to any of the partitions (maybe more than once: it must be
     * idempotent); the waiters returned are to be closed when the call answers.
     */
    List<AppendWaiters.Waiter> awaitAnyAppend(Runnable onAppend) {
        List<AppendWaiters.Waiter> waiters = new ArrayList<>(targets.size());
        try {
            for (Target target : targets) {
                if (target.partition() != null) {
                    waiters.add(target.partition().awaitAppend(onAppend));
                }
            }
        } catch (RuntimeException e) {
            onAppend.run();
        }
        return waiters;
    }

    /**
     * Reads every partition in request order, each up to its own max_bytes and what is left of {@code roomBytes}; a
     * partition's first batch is whole even when it is larger, and once the room is used up the partitions after it
     * are answered where they stand, with no batch.
     *
     * @param refusal counts a partition's error and gives what its outcome carries
     * @return the answer, its batches' bytes in {@link Read#bytes}
     */
    Read read(int roomBytes, Function<Throwable, TidemarkException> refusal) {
        FetchManyResponse.Builder answer = FetchManyResponse.newBuilder();
        int bytes = 0;
        for (Target target : targets) {
            FetchOutcome.Builder outcome = FetchOutcome.newBuilder();
            try {
                if (target.refused() != null) {
                    throw target.refused();
                }
                FetchResponse.Builder fetched = bytes >= roomBytes
                        ? PartitionReads.standing(target.partition(), target.topicId())
                        : PartitionReads.read(target.partition(), target.topicId(), target.asked().getOffset(),
                                Math.min(target.asked().getMaxBytes(), roomBytes - bytes), readCommitted);
                bytes += fetched.getBatches().size();
                outcome.setFetched(fetched);
            } catch (RuntimeException e) {
                outcome.setRefused(GrpcErrors.toDetail(refusal.apply(e)));
            }
            answer.addOutcomes(outcome);
        }
        return new Read(answer, bytes);
    }

    /** A FetchMany's answer, and how many bytes of batches it holds. */
    record Read(FetchManyResponse.Builder answer, int bytes) {
    }
}
