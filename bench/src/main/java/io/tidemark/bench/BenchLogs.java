package io.tidemark.bench;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.record.RecordBatchBuilder;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

/** Logs and batches the benchmarks share. Times are synthetic: the benchmarks read no clock in the measured code. */
final class BenchLogs {
    static final long BASE_MS = 1_700_000_000_000L;

    private BenchLogs() {
    }

    static PartitionLog open(Path dir, Map<String, String> config) throws IOException {
        return PartitionLog.open(dir, TopicConfig.parse(config), BASE_MS);
    }

    /** A batch of {@code records} records of {@code valueBytes} random bytes, SendTimes 1 ms apart. */
    static ByteBuffer batch(int records, int valueBytes, long sendTimeMs, Random random) {
        RecordBatchBuilder builder = new RecordBatchBuilder(records * (valueBytes + 32));
        for (int i = 0; i < records; i++) {
            byte[] value = new byte[valueBytes];
            random.nextBytes(value);
            builder.append(sendTimeMs + i, null, value);
        }
        return builder.build();
    }

    static Path tempDir(String name) throws IOException {
        return Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "tidemark-bench-" + name);
    }

    static void delete(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }
}
