package io.tidemark.bench;

import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.TimeLookup;
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
 * Lookup by ReceiveTime and by SendTime on a log of 1,000,000 records of 100 bytes in 10 segments (batches
 * of 16, one ReceiveTime per batch 1 ms apart, default index.interval.bytes 4096), at random times across the
 * log. Sample mode, so the output has the percentiles (p99 is the figure to watch).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class TimeLookupBenchmark {
    private static final int RECORDS = 1_000_000;
    private static final int PER_BATCH = 16;
    private static final int BATCHES = RECORDS / PER_BATCH;

    private Path dir;
    private PartitionLog log;
    private final Random random = new Random(7);

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = BenchLogs.tempDir("lookup");
        ByteBuffer sample = BenchLogs.batch(PER_BATCH, 100, 0, new Random(1));
        int segmentBytes = sample.remaining() * (BATCHES / 10) + 1;
        log = BenchLogs.open(dir, Map.of("segment.bytes", Integer.toString(segmentBytes)));
        Random random = new Random(1);
        for (int i = 0; i < BATCHES; i++) {
            long time = BenchLogs.BASE_MS + i;
            log.append(BenchLogs.batch(PER_BATCH, 100, time, random), time);
        }
        if (log.segments().size() != 10) {
            throw new IllegalStateException("expected 10 segments, got " + log.segments().size());
        }
    }

    @Benchmark
    public TimeLookup byReceiveTime() {
        return log.lookupByReceiveTime(BenchLogs.BASE_MS + random.nextInt(BATCHES));
    }

    @Benchmark
    public TimeLookup bySendTime() {
        return log.lookupBySendTime(BenchLogs.BASE_MS + random.nextInt(BATCHES));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        log.close();
        BenchLogs.delete(dir);
    }
}
