package io.tidemark.bench;

import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.MirroredBatchScanner;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.RecordBatchBuilder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The broker's check of a mirrored batch ({@link MirroredBatchScanner}, run on every mirrored batch appended): a batch
 * of {@value #RECORDS} copies of 1 KiB records from one origin partition, each with one user header and the
 * provenance header. Score: ns per record; {@code -prof gc} shows the bytes allocated per record (the scanner
 * allocates only the first record's origin).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class MirroredBatchScanBenchmark {
    static final int RECORDS = 256;

    private final MirroredBatchScanner scanner = new MirroredBatchScanner();
    private ByteBuffer batch;

    @Setup
    public void setUp() {
        OriginPartition origin = new OriginPartition("dc-a", "orders", UUID.fromString(
                "0e4f7c2a-5b1d-4e8f-9a3c-6d2b1f0a7e95"), 3);
        RecordBatchBuilder builder = new RecordBatchBuilder().mirrored();
        byte[] value = new byte[1024];
        for (int i = 0; i < RECORDS; i++) {
            builder.append(BenchLogs.BASE_MS + i, null, value, ProvenanceHeaders.forCopy(
                    List.of(new Header("trace", new byte[16])), origin, 1_000_000L + i, BenchLogs.BASE_MS + i));
        }
        batch = builder.build();
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public MirroredBatchScanner.OriginRange scan() {
        return scanner.scan(batch, 0);
    }
}
