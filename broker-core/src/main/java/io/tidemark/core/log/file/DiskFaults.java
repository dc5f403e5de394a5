package io.tidemark.core.log.file;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Disk faults for tests and chaos runs: an operation on a file under a directory fails the way a broken disk fails
 * it (an {@link IOException} with the kernel's words, such as {@code No space left on device} or
 * {@code Input/output error}) or takes longer, for every broker of the process whose data lives under that
 * directory. Faults act on files {@link Disk} opens after {@link #install()}; so install before brokers start, then
 * arm and clear faults while they run.
 *
 * <p>What a fault does to a file is what the kernel would leave: a failed write wrote nothing, a failed fsync
 * flushed nothing, a failed rename left both names as they were.
 */
public final class DiskFaults {
    /** The operations a fault can hit. */
    public enum Operation {
        /** Writes and truncations through a channel. */
        WRITE,
        /** {@link java.nio.channels.FileChannel#force}, of files and directories. */
        FSYNC,
        /** Reads through a channel. */
        READ,
        /** {@link Disk#move}. */
        RENAME
    }

    /** What to do to an operation under a directory: fail it with {@code error} (when not null), after {@code delay}. */
    private record Fault(String error, Duration delay) {
    }

    /** Where a fault acts: on {@code path} and everything under it, or on {@code path} alone. */
    private record Key(Path path, boolean under, Operation operation) {
        boolean covers(Path file, Operation op) {
            return op == operation && (under ? file.startsWith(path) : file.equals(path));
        }
    }

    private final Map<Key, Fault> faults = new ConcurrentHashMap<>();
    private final AtomicLong failed = new AtomicLong();

    private DiskFaults() {
    }

    /** The process's faults, installed in {@link Disk} on the first call; none is armed. */
    public static synchronized DiskFaults install() {
        DiskFaults installed = Disk.installed();
        if (installed == null) {
            installed = new DiskFaults();
            Disk.install(installed);
        }
        return installed;
    }

    /** From now on, {@code operation} on any file under {@code dir} fails with {@code error}. */
    public void fail(Path dir, Operation operation, String error) {
        faults.put(new Key(dir.toAbsolutePath().normalize(), true, operation), new Fault(error, Duration.ZERO));
    }

    /**
     * From now on, {@code operation} on {@code path} itself (a directory renamed whole, say) fails with {@code error};
     * what is under it is left alone.
     */
    public void failExactly(Path path, Operation operation, String error) {
        faults.put(new Key(path.toAbsolutePath().normalize(), false, operation), new Fault(error, Duration.ZERO));
    }

    /** From now on, {@code operation} on any file under {@code dir} takes {@code delay} longer. */
    public void slow(Path dir, Operation operation, Duration delay) {
        faults.put(new Key(dir.toAbsolutePath().normalize(), true, operation), new Fault(null, delay));
    }

    /** Disarms every fault under {@code dir}: the disk was repaired. */
    public void clear(Path dir) {
        Path normalized = dir.toAbsolutePath().normalize();
        faults.keySet().removeIf(key -> key.path().startsWith(normalized));
    }

    /** How many operations failed by a fault since {@link #install()}. */
    public long failedOperations() {
        return failed.get();
    }

    /** Applies the fault armed for {@code operation} on {@code file}, if any. */
    void check(Path file, Operation operation) throws IOException {
        if (faults.isEmpty()) {
            return;
        }
        Path absolute = file.toAbsolutePath().normalize();
        for (Map.Entry<Key, Fault> armed : faults.entrySet()) {
            if (armed.getKey().covers(absolute, operation)) {
                Fault fault = armed.getValue();
                if (!fault.delay().isZero()) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(fault.delay().toMillis()));
                }
                if (fault.error() != null) {
                    failed.incrementAndGet();
                    throw new IOException(fault.error() + " (" + operation + " of " + absolute
                            + ", injected by DiskFaults)");
                }
            }
        }
    }
}
