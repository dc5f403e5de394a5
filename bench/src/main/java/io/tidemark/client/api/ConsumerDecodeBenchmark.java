package io.tidemark.client.api;

import com.google.protobuf.ByteString;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.FetchResponse;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * What the consumer's thread does with a fetch answer ({@link Fetcher#records}): validate every batch (layout and
 * CRC), decode every record, make the {@link ConsumerRecord}s. The answer holds {@value #BATCHES} stored batches of
 * {@value #RECORDS_PER_BATCH} records of 1 KiB without key or headers, as `tidemark perf produce` sends them (about
 * 1 MiB, the default fetch.max.bytes). In the bench module but in the client's package, to call the package-private
 * Fetcher. Score: ns per record; {@code -prof gc} shows the bytes allocated per record.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ConsumerDecodeBenchmark {
    static final int BATCHES = 4;
    static final int RECORDS_PER_BATCH = 253;

    private final Fetcher fetcher = new Fetcher(null, 1 << 20, 16 << 20,
            ConsumerConfig.IsolationLevel.READ_UNCOMMITTED);
    private final TopicPartition partition = new TopicPartition("bench", 0);
    private FetchResponse answer;

    @Setup
    public void setUp() {
        ByteString.Output batches = ByteString.newOutput();
        byte[] value = new byte[1024];
        for (int b = 0; b < BATCHES; b++) {
            RecordBatchBuilder builder = new RecordBatchBuilder();
            for (int r = 0; r < RECORDS_PER_BATCH; r++) {
                builder.append(1_700_000_000_000L + r, null, value);
            }
            ByteBuffer batch = builder.build();
            RecordBatchFormat.stamp(new CRC32C(), batch, 0, (long) b * RECORDS_PER_BATCH, 1_700_000_001_000L);
            batches.write(batch.array(), batch.arrayOffset(), batch.remaining());
        }
        // one flat ByteString, as gRPC parses an answer (a rope's asReadOnlyByteBuffer would copy it each time)
        answer = FetchResponse.newBuilder().setBatches(ByteString.copyFrom(batches.toByteString().toByteArray()))
                .setHighWatermark(BATCHES * RECORDS_PER_BATCH).build();
    }

    @Benchmark
    @OperationsPerInvocation(BATCHES * RECORDS_PER_BATCH)
    public Fetcher.Fetched records() {
        return fetcher.records(partition, 0, answer);
    }
}
