package io.tidemark.core.log;

import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Temporary directories in memory ({@code /dev/shm}, where fsync costs nothing) when the machine has it, else in the
 * default temporary directory: for tests of many logs whose clean closes would otherwise measure the disk's fsync
 * latency (seven fsyncs a log, about 8 ms on the test machines) rather than what they test.
 */
final class MemoryTempDirFactory implements TempDirFactory {
    private static final Path MEMORY = Path.of("/dev/shm");

    @Override
    public Path createTempDirectory(AnnotatedElementContext elementContext, ExtensionContext extensionContext)
            throws Exception {
        return Files.isDirectory(MEMORY) && Files.isWritable(MEMORY)
                ? Files.createTempDirectory(MEMORY, "tidemark-test-") : Files.createTempDirectory("tidemark-test-");
    }
}
