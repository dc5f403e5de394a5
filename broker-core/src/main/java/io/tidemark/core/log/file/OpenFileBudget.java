package io.tidemark.core.log.file;

import io.tidemark.core.config.BrokerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Sizes the process's {@link OpenFileCache} from {@code log.open.files.max} when a broker process starts, and warns
 * when that budget does not fit what the process may hold: file descriptors ({@code ulimit -n}; the JVM raises its
 * soft limit to the hard one) and memory maps ({@code vm.max_map_count}). Warns rather than refuses: a budget the
 * process cannot reach only fails when that many segments are open at once.
 */
public final class OpenFileBudget {
    private static final Logger LOG = LoggerFactory.getLogger(OpenFileBudget.class);
    /**
     * File descriptors a broker needs besides segment files: gRPC sockets and Netty's epoll descriptors (a few per
     * event loop), the Raft groups' open log segments and lock files, jars, and files opened for a moment (index files
     * while they are mapped, snapshots, recovery points). Two thousand is the least that leaves room for them.
     */
    static final long OTHER_FILES_MIN = 2_000;
    /** Index maps per open segment: offsets, ReceiveTimes, SendTimes. */
    static final long MAPS_PER_SEGMENT = 3;
    /** Maps a JVM holds besides index maps: two per thread stack, the heap, code and libraries; a few thousand. */
    static final long OTHER_MAPS_MIN = 5_000;

    private OpenFileBudget() {
    }

    /** Sizes {@link OpenFileCache#shared()} and logs a warning for each limit the budget does not fit. */
    public static void apply(int logOpenFilesMax) {
        OpenFileCache.shared().resize(logOpenFilesMax);
        List<String> warnings = warnings(logOpenFilesMax, processOpenFilesMax(), mapCountMax());
        warnings.forEach(LOG::warn);
        LOG.info("Segment files: at most {} open at once (log.open.files.max), each with up to {} index maps",
                logOpenFilesMax, MAPS_PER_SEGMENT);
    }

    /** What is wrong with a budget of {@code logOpenFilesMax} under these limits (empty ones are unknown). */
    static List<String> warnings(int logOpenFilesMax, OptionalLong processOpenFilesMax, OptionalLong mapCountMax) {
        List<String> warnings = new ArrayList<>();
        String key = BrokerConfig.LOG_OPEN_FILES_MAX.name();
        if (processOpenFilesMax.isPresent() && logOpenFilesMax > processOpenFilesMax.getAsLong() - OTHER_FILES_MIN) {
            warnings.add(key + " " + logOpenFilesMax + " leaves fewer than " + OTHER_FILES_MIN + " of the "
                    + processOpenFilesMax.getAsLong() + " files this process may open (ulimit -n) for sockets and "
                    + "Raft logs: lower it to " + Math.max(1, processOpenFilesMax.getAsLong() - OTHER_FILES_MIN)
                    + " or raise the limit");
        }
        if (mapCountMax.isPresent() && MAPS_PER_SEGMENT * logOpenFilesMax > mapCountMax.getAsLong() - OTHER_MAPS_MIN) {
            warnings.add(key + " " + logOpenFilesMax + " allows " + MAPS_PER_SEGMENT * logOpenFilesMax
                    + " index maps, which with the JVM's own " + OTHER_MAPS_MIN + " is more than vm.max_map_count "
                    + mapCountMax.getAsLong() + ": lower it to "
                    + Math.max(1, (mapCountMax.getAsLong() - OTHER_MAPS_MIN) / MAPS_PER_SEGMENT)
                    + " or raise vm.max_map_count");
        }
        return warnings;
    }

    private static OptionalLong processOpenFilesMax() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix
                ? OptionalLong.of(unix.getMaxFileDescriptorCount()) : OptionalLong.empty();
    }

    private static OptionalLong mapCountMax() {
        return procNumber(Path.of("/proc/sys/vm/max_map_count"));
    }

    /**
     * The number a /proc file holds on its first line; empty when it cannot be read. Read line by line: on JDK 17
     * {@code Files.readString} of a /proc/sys file (which says it holds 0 bytes) gave its first byte only, "6" for
     * 65530, and every broker warned that its budget passed vm.max_map_count 6.
     */
    static OptionalLong procNumber(Path file) {
        try (BufferedReader reader = Files.newBufferedReader(file)) {
            String line = reader.readLine();
            return line == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(line.trim()));
        } catch (IOException | NumberFormatException e) {
            return OptionalLong.empty();
        }
    }
}
