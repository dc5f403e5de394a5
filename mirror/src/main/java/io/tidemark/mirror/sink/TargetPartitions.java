package io.tidemark.mirror.sink;

import io.tidemark.client.api.PartitionWriter;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.OriginOffsetResponse;
import io.tidemark.proto.v1.ProduceResponse;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * What a {@link PartitionCopier} asks of the target cluster: write a batch to a partition, tell which origin offset a
 * partition holds, and make its target topic again when it is gone. {@link #over} adapts a {@link PartitionWriter}.
 *
 * <p>Implementations are thread-safe: every copier calls them, from the source, writer and timer threads.
 */
public interface TargetPartitions {
    /**
     * Writes a copier's batch to its own target partition, after the ones it wrote before; at most
     * {@link #maxInFlight} of a partition may be unanswered. The partition stores them in write order, and none
     * written after one that failed: those fail too. Fails with the broker's TidemarkException, after the writer's
     * retries.
     */
    CompletableFuture<ProduceResponse> write(TopicPartition tp, RecordBatchBuilder batch);

    /**
     * The copier of {@code tp} has every answer to what it wrote and acts on them: after a failed write, {@link #write}
     * takes the partition's batches again (until then they fail at once, as written after the failed one).
     */
    void resume(TopicPartition tp);

    /**
     * Writes a record to the dead-letter partition, which every copier writes to: these writes go one after the other,
     * each once the one before is answered (so it resumes the partition), so one refused does not fail another
     * copier's.
     */
    CompletableFuture<ProduceResponse> writeDeadLetter(TopicPartition tp, RecordBatchBuilder batch);

    /** Batches of a partition {@link #write} takes unanswered. */
    int maxInFlight();

    CompletableFuture<OriginOffsetResponse> originOffset(TopicPartition tp, OriginPartition origin);

    /**
     * The copier's target topic is gone: have it made again like its source topic, then resynchronise the copiers of
     * that topic ({@link PartitionCopier#hold}, {@link PartitionCopier#release}). Returns at once.
     */
    void targetTopicGone(PartitionCopier copier);

    /** Writes through {@code writer}, and hands a gone target topic to {@code topicGone}. */
    static TargetPartitions over(PartitionWriter writer, Consumer<PartitionCopier> topicGone) {
        Map<TopicPartition, CompletableFuture<ProduceResponse>> lastDeadLetters = new ConcurrentHashMap<>();
        return new TargetPartitions() {
            @Override
            public CompletableFuture<ProduceResponse> write(TopicPartition tp, RecordBatchBuilder batch) {
                return writer.write(tp, batch);
            }

            @Override
            public CompletableFuture<ProduceResponse> writeDeadLetter(TopicPartition tp, RecordBatchBuilder batch) {
                CompletableFuture<ProduceResponse> written = new CompletableFuture<>();
                CompletableFuture<ProduceResponse> last = lastDeadLetters.put(tp, written);
                CompletableFuture<?> turn = last == null ? CompletableFuture.completedFuture(null) : last;
                turn.handle((ignored, error) -> null).thenCompose(ready -> {
                    writer.resume(tp);
                    return writer.write(tp, batch);
                }).whenComplete((response, error) -> {
                    if (error == null) {
                        written.complete(response);
                    } else {
                        written.completeExceptionally(error instanceof CompletionException
                                && error.getCause() != null ? error.getCause() : error);
                    }
                });
                return written;
            }

            @Override
            public void resume(TopicPartition tp) {
                writer.resume(tp);
            }

            @Override
            public int maxInFlight() {
                return writer.maxInFlight();
            }

            @Override
            public CompletableFuture<OriginOffsetResponse> originOffset(TopicPartition tp, OriginPartition origin) {
                return writer.originOffset(tp, origin);
            }

            @Override
            public void targetTopicGone(PartitionCopier copier) {
                topicGone.accept(copier);
            }
        };
    }
}
