package io.tidemark.bench;

import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.record.RecordBatchFormat;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
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
 * Sequential read, as a consumer fetches: 1 MiB at a time from where the last read ended, over a 256 MiB log
 * of 1 KiB records in batches of 16 (in the page cache after the first pass). Score: fetches per second; the
 * bytes per second is the score times 1 MiB.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class LogReadBenchmark {
    static final int FETCH_BYTES = 1 << 20;

    private Path dir;
    private PartitionLog log;
    private long offset;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = BenchLogs.tempDir("read");
        log = BenchLogs.open(dir, Map.of("segment.bytes", Integer.toString(64 << 20)));
        ByteBuffer batch = BenchLogs.batch(16, 1024, BenchLogs.BASE_MS, new Random(1));
        for (int i = 0; i < (256 << 20) / batch.remaining(); i++) {
            log.append(batch, BenchLogs.BASE_MS);
        }
    }

    @Benchmark
    public ByteBuffer fetchOneMebibyte() {
        if (offset >= log.logEndOffset()) {
            offset = log.logStartOffset();
        }
        LogReadResult result = log.read(offset, FETCH_BYTES);
        ByteBuffer batches = result.batches();
        int last = 0;
        for (int position = 0; position < batches.limit(); position += RecordBatchFormat.totalSize(batches, position)) {
            last = position;
        }
        offset = RecordBatchFormat.lastOffset(batches, last) + 1;
        return batches;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        log.close();
        BenchLogs.delete(dir);
    }
}
