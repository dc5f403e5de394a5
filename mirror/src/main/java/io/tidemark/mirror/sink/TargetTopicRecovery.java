package io.tidemark.mirror.sink;

import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicDescription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Makes a target topic again when a copier finds it gone (UNKNOWN_TOPIC or UNKNOWN_PARTITION from a write or from
 * OriginOffset): the topic was deleted while the mirror ran.
 * <ol>
 *   <li>When the topic is there after all (an answer from a broker that had not learnt of it yet), the copier
 *       resynchronises after {@link PartitionCopier#RETRY_DELAY_MS}; when it is there without the copier's partition,
 *       the copier stops, as at start ({@link StopReason}).</li>
 *   <li>Otherwise every copier of the topic is {@link PartitionCopier#hold held}, and once none has a write
 *       outstanding, the topic is created like its source topic ({@link TargetTopics#ensureLike}), which is logged
 *       and counted; then the copiers are {@link PartitionCopier#release released}: they ask the new topic where to
 *       continue (nothing held: the source's log start), so the new topic gets every record the source still has,
 *       once. Waiting for the outstanding writes matters: one still on its way could otherwise land at the start of
 *       the new topic, and the copier would continue after it.</li>
 * </ol>
 * One recovery of a topic runs at a time; copiers that find the topic gone meanwhile are part of it. A recovery that
 * fails (the source does not answer) releases the copiers after a pause, and the next one that finds the topic gone
 * starts another.
 *
 * <p>Thread-safe. Work runs on the executor, never on the caller's thread.
 */
public final class TargetTopicRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(TargetTopicRecovery.class);

    private final TargetTopics topics;
    private final Function<String, List<PartitionCopier>> copiersOf;
    private final MirrorMetrics metrics;
    private final ScheduledExecutorService executor;
    private final Set<String> recovering = ConcurrentHashMap.newKeySet();

    /** @param copiersOf the copiers that write to a target topic */
    public TargetTopicRecovery(TargetTopics topics, Function<String, List<PartitionCopier>> copiersOf,
                               MirrorMetrics metrics, ScheduledExecutorService executor) {
        this.topics = topics;
        this.copiersOf = copiersOf;
        this.metrics = metrics;
        this.executor = executor;
    }

    /** {@code copier} found its target topic gone. */
    public void topicGone(PartitionCopier copier) {
        if (recovering.add(copier.target().topic())) {
            executor.execute(() -> recover(copier));
        }
    }

    private void recover(PartitionCopier requester) {
        String topic = requester.target().topic();
        try {
            Optional<TopicDescription> existing = topics.describe(topic);
            if (existing.isPresent()) {
                recovering.remove(topic);
                answerWithTopic(requester, existing.get());
                return;
            }
        } catch (RuntimeException e) {
            failed(topic, List.of(requester), e);
            return;
        }
        List<PartitionCopier> held = copiersOf.apply(topic);
        CompletableFuture.allOf(held.stream().map(PartitionCopier::hold).toArray(CompletableFuture[]::new))
                .thenRunAsync(() -> recreate(requester, held), executor);
    }

    /** The topic is there: the requester resyncs after a pause, or stops when its partition is not. */
    private void answerWithTopic(PartitionCopier requester, TopicDescription topic) {
        int partitions = topic.getPartitionsCount();
        if (requester.target().partition() >= partitions) {
            requester.stop(StopReason.uncopyable(ErrorCode.UNKNOWN_PARTITION, "target topic " + topic.getName()
                    + " has " + partitions + " partitions, none numbered " + requester.target().partition()
                    + " to copy source partition " + requester.source() + " to"));
            return;
        }
        executor.schedule(requester::release, PartitionCopier.RETRY_DELAY_MS, TimeUnit.MILLISECONDS);
    }

    private void recreate(PartitionCopier requester, List<PartitionCopier> held) {
        String topic = requester.target().topic();
        try {
            TargetTopics.Ensured ensured = topics.ensureLike(requester.source().topic(), topic);
            if (ensured.created()) {
                metrics.targetTopicRecreated();
                LOG.warn("Target topic {} was deleted while the mirror ran; created it again like source topic {} "
                        + "({} partitions): its {} copiers copy the source's records into it from the source's log "
                        + "start", topic, requester.source().topic(), ensured.topic().getPartitionsCount(),
                        held.size());
            }
        } catch (RuntimeException e) {
            failed(topic, held, e);
            return;
        }
        recovering.remove(topic);
        held.forEach(PartitionCopier::release);
    }

    private void failed(String topic, List<PartitionCopier> held, RuntimeException e) {
        LOG.warn("Making target topic {} again failed; its copiers try again in {} ms: {}", topic,
                PartitionCopier.RETRY_DELAY_MS, e.toString());
        recovering.remove(topic);
        executor.schedule(() -> held.forEach(PartitionCopier::release), PartitionCopier.RETRY_DELAY_MS,
                TimeUnit.MILLISECONDS);
    }
}
