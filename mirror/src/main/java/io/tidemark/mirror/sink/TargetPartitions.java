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
     * Fails with the broker's TidemarkException, after the writer's retries. Writes to one partition from several
     * copiers (the dead-letter topic's) go one after the other.
     */
    CompletableFuture<ProduceResponse> write(TopicPartition tp, RecordBatchBuilder batch);

    CompletableFuture<OriginOffsetResponse> originOffset(TopicPartition tp, OriginPartition origin);

    /**
     * The copier's target topic is gone: have it made again like its source topic, then resynchronise the copiers of
     * that topic ({@link PartitionCopier#hold}, {@link PartitionCopier#release}). Returns at once.
     */
    void targetTopicGone(PartitionCopier copier);

    /**
     * Writes through {@code writer}, one batch of a partition at a time (the writer's rule) also when several copiers
     * write to it, and hands a gone target topic to {@code topicGone}.
     */
    static TargetPartitions over(PartitionWriter writer, Consumer<PartitionCopier> topicGone) {
        Map<TopicPartition, CompletableFuture<ProduceResponse>> lastWrites = new ConcurrentHashMap<>();
        return new TargetPartitions() {
            @Override
            public CompletableFuture<ProduceResponse> write(TopicPartition tp, RecordBatchBuilder batch) {
                CompletableFuture<ProduceResponse> written = new CompletableFuture<>();
                CompletableFuture<ProduceResponse> last = lastWrites.put(tp, written);
                CompletableFuture<?> turn = last == null ? CompletableFuture.completedFuture(null) : last;
                turn.handle((ignored, error) -> null).thenCompose(ready -> writer.write(tp, batch))
                        .whenComplete((response, error) -> {
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
