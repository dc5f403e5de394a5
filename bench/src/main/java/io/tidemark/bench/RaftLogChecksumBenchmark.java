package io.tidemark.bench;

import org.apache.ratis.util.PureJavaCrc32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

/**
 * The checksum Ratis computes over every entry it writes to a Raft log, on every replica: its own
 * {@link PureJavaCrc32C} over the entry's bytes in the log worker's direct write buffer (Ratis 3.2's
 * {@code SegmentedRaftLogOutputStream}), against the JDK's {@link CRC32C} (an intrinsic) over the same buffer. An entry
 * of a partition group holds the produced batches whole, so the bytes checksummed are the bytes produced. Score: ns
 * per entry of {@code bytes}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(java.util.concurrent.TimeUnit.NANOSECONDS)
public class RaftLogChecksumBenchmark {
    @Param({"1024", "65536"})
    public int bytes;

    private final PureJavaCrc32C ratis = new PureJavaCrc32C();
    private final CRC32C jdk = new CRC32C();
    private ByteBuffer entry;

    @Setup
    public void setUp() {
        byte[] content = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(content);
        entry = ByteBuffer.allocateDirect(bytes).put(content).flip();
    }

    @Benchmark
    public long ratisPureJava() {
        ratis.reset();
        ratis.update(entry.duplicate());
        return ratis.getValue();
    }

    @Benchmark
    public long jdkIntrinsic() {
        jdk.reset();
        jdk.update(entry.duplicate());
        return jdk.getValue();
    }
}
