package io.tidemark.core.log;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What this process holds open under a directory, as Linux's {@code /proc/self} shows it: file descriptors and memory
 * maps. Tests use it to check the real bound, not only the cache's own count.
 */
final class ProcessFiles {
    private static final Path FDS = Path.of("/proc/self/fd");
    private static final Path MAPS = Path.of("/proc/self/maps");

    private ProcessFiles() {
    }

    /** Skips the calling test where {@code /proc} is not there. */
    static void assumeProc() {
        assumeTrue(Files.isDirectory(FDS) && Files.isReadable(MAPS), "needs Linux /proc/self");
    }

    /** Open file descriptors on files under {@code dir} whose name holds {@code suffix} (deleted ones too). */
    static long openFiles(Path dir, String suffix) throws IOException {
        String prefix = dir.toRealPath().toString();
        long count = 0;
        try (Stream<Path> fds = Files.list(FDS)) {
            for (Path fd : fds.toList()) {
                String target = target(fd);
                if (target.startsWith(prefix) && target.contains(suffix)) {
                    count++;
                }
            }
        }
        return count;
    }

    private static String target(Path fd) {
        try {
            return Files.readSymbolicLink(fd).toString();
        } catch (IOException e) {
            return "";
        }
    }

    /** Memory maps of files under {@code dir}. */
    static long maps(Path dir) throws IOException {
        String prefix = dir.toRealPath().toString();
        List<String> lines = Files.readAllLines(MAPS);
        return lines.stream().filter(line -> line.contains(prefix)).count();
    }
}
