package io.tidemark.mirror.sink;

import io.tidemark.client.api.PartitionWriter;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.OriginOffsetResponse;
import io.tidemark.proto.v1.ProduceResponse;

import java.util.concurrent.CompletableFuture;

/**
 * What a {@link PartitionCopier} asks of the target cluster: write a batch to a partition (one outstanding a
 * partition), and tell which origin offset a partition holds. {@link #over} adapts a {@link PartitionWriter}.
 */
public interface TargetPartitions {
    /** Fails with the broker's TidemarkException, after the writer's retries. */
    CompletableFuture<ProduceResponse> write(TopicPartition tp, RecordBatchBuilder batch);

    CompletableFuture<OriginOffsetResponse> originOffset(TopicPartition tp, OriginPartition origin);

    static TargetPartitions over(PartitionWriter writer) {
        return new TargetPartitions() {
            @Override
            public CompletableFuture<ProduceResponse> write(TopicPartition tp, RecordBatchBuilder batch) {
                return writer.write(tp, batch);
            }

            @Override
            public CompletableFuture<OriginOffsetResponse> originOffset(TopicPartition tp, OriginPartition origin) {
                return writer.originOffset(tp, origin);
            }
        };
    }
}
