package io.tidemark.bench;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.file.OpenFileCache;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
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
 * What a read pays when the open-file cache ({@code log.open.files.max}) closed its segment: two logs of 16 MiB
 * (one active segment each) share a cache, and reads of one 16 KiB batch at random offsets alternate between them.
 * With {@code openFilesMax=1} every read evicts the other log's segment (closing its file, unmapping its offset
 * index) and opens its own again (one open, one map of its 2 MiB preallocated offset index); with 2 both stay open
 * and a read is warm. The difference between the two scores is the cost of a miss. Both logs are flushed before
 * the measurement, so no eviction fsyncs. Average microseconds per read; the data is in the page cache.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class SegmentReopenBenchmark {
    private static final int LOG_BYTES = 16 << 20;
    /** Below one batch: a read returns exactly the batch holding the offset. */
    private static final int READ_BYTES = 1;

    @Param({"1", "2"})
    int openFilesMax;

    private Path dir;
    private OpenFileCache files;
    private PartitionLog[] logs;
    private final Random random = new Random(3);
    private int next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = BenchLogs.tempDir("reopen");
        files = new OpenFileCache(openFilesMax);
        TopicConfig config = TopicConfig.parse(Map.of());
        ByteBuffer batch = BenchLogs.batch(16, 1024, BenchLogs.BASE_MS, new Random(1));
        logs = new PartitionLog[2];
        for (int i = 0; i < logs.length; i++) {
            logs[i] = PartitionLog.open(dir.resolve("log-" + i), config, files, BenchLogs.BASE_MS);
            for (int b = 0; b < LOG_BYTES / batch.remaining(); b++) {
                logs[i].append(batch, BenchLogs.BASE_MS);
            }
            logs[i].flush(BenchLogs.BASE_MS);
        }
    }

    @Benchmark
    public ByteBuffer readAlternatingLogs() {
        PartitionLog log = logs[next];
        next = 1 - next;
        return log.read(random.nextLong(log.logEndOffset()), READ_BYTES).batches();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        for (PartitionLog log : logs) {
            log.close();
        }
        BenchLogs.delete(dir);
    }
}
