package io.tidemark.bench;

import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.TimeLookup;
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
 * Lookup by ReceiveTime and by SendTime on a log of 1,000,000 records of 100 bytes in 10 segments (default
 * index.interval.bytes 4096), at random times across the log. SendTimes are 1 ms apart from record to record, and
 * each batch's ReceiveTime is its first record's SendTime. Batches of 16 records, or of 2,048 (about 230 KB, what the
 * producer's default batch.size of 256 KiB makes of 100-byte records, as {@code tidemark perf produce} sends them).
 * Sample mode, so the output has the percentiles (p99 is the figure to watch).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class TimeLookupBenchmark {
    private static final int RECORDS = 1_000_000;

    /** Records per batch. */
    @Param({"16", "2048"})
    public int perBatch;

    private Path dir;
    private PartitionLog log;
    private final Random random = new Random(7);

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = BenchLogs.tempDir("lookup");
        int batches = RECORDS / perBatch;
        ByteBuffer sample = BenchLogs.batch(perBatch, 100, 0, new Random(1));
        int segmentBytes = sample.remaining() * ((batches + 9) / 10) + 1;
        log = BenchLogs.open(dir, Map.of("segment.bytes", Integer.toString(segmentBytes)));
        Random random = new Random(1);
        for (int i = 0; i < batches; i++) {
            long time = BenchLogs.BASE_MS + (long) i * perBatch;
            log.append(BenchLogs.batch(perBatch, 100, time, random), time);
        }
        if (log.segments().size() != 10) {
            throw new IllegalStateException("expected 10 segments, got " + log.segments().size());
        }
    }

    @Benchmark
    public TimeLookup byReceiveTime() {
        return log.lookupByReceiveTime(BenchLogs.BASE_MS + random.nextInt(RECORDS));
    }

    @Benchmark
    public TimeLookup bySendTime() {
        return log.lookupBySendTime(BenchLogs.BASE_MS + random.nextInt(RECORDS));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        log.close();
        BenchLogs.delete(dir);
    }
}
