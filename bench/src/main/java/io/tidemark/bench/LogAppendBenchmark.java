package io.tidemark.bench;

import io.tidemark.core.log.AppendResult;
import io.tidemark.core.log.PartitionLog;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Append of 1 KiB records in batches of 16 and of 256, without fsync (the default: the OS writes back). The
 * score is records per second (one operation = one record), so record bytes per second is the score times
 * 1024 and {@code -prof gc}'s gc.alloc.rate.norm is bytes allocated per record. Each append validates the
 * batch (CRC and every record), stamps offset and ReceiveTime, recomputes the CRC and writes the batch.
 * Retention keeps the disk use bounded (256 MiB segments, 1 GiB in all).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class LogAppendBenchmark {
    private static final int RECORD_BYTES = 1024;

    /** A log and one prebuilt batch, appended again and again (each append re-stamps it). */
    abstract static class AppendState {
        private Path dir;
        private PartitionLog log;
        private ByteBuffer batch;
        private long appends;

        abstract int recordsPerBatch();

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            dir = BenchLogs.tempDir("append");
            log = BenchLogs.open(dir, Map.of("segment.bytes", Integer.toString(256 << 20),
                    "retention.bytes", Long.toString(1L << 30)));
            batch = BenchLogs.batch(recordsPerBatch(), RECORD_BYTES, BenchLogs.BASE_MS, new Random(1));
        }

        AppendResult append() {
            if (++appends % 1024 == 0) {
                log.deleteExpiredSegments(BenchLogs.BASE_MS);
            }
            return log.append(batch, BenchLogs.BASE_MS);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            log.close();
            BenchLogs.delete(dir);
        }
    }

    @State(Scope.Thread)
    public static class Batch16 extends AppendState {
        @Override
        int recordsPerBatch() {
            return 16;
        }
    }

    @State(Scope.Thread)
    public static class Batch256 extends AppendState {
        @Override
        int recordsPerBatch() {
            return 256;
        }
    }

    @Benchmark
    @OperationsPerInvocation(16)
    public AppendResult appendBatchesOf16(Batch16 state) {
        return state.append();
    }

    @Benchmark
    @OperationsPerInvocation(256)
    public AppendResult appendBatchesOf256(Batch256 state) {
        return state.append();
    }
}
