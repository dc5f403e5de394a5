package io.tidemark.core.log.file;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.CopyOption;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;

/**
 * Where the storage opens the files it writes (segments, indexes, small files replaced whole, directories it
 * fsyncs) and renames them: the one place a disk fault can be put between the broker and its files
 * ({@link DiskFaults}, installed by tests and chaos runs before brokers start). Without faults installed, which is
 * always so in a broker process, these are {@link FileChannel#open} and {@link Files#move}, nothing more.
 *
 * <p>Not covered: Ratis' own log and snapshot files, which Ratis opens itself.
 */
public final class Disk {
    private static volatile DiskFaults faults;

    private Disk() {
    }

    public static FileChannel open(Path file, OpenOption... options) throws IOException {
        DiskFaults installed = faults;
        FileChannel channel = FileChannel.open(file, options);
        return installed == null ? channel : new FaultyChannel(channel, file, installed);
    }

    public static void move(Path from, Path to, CopyOption... options) throws IOException {
        DiskFaults installed = faults;
        if (installed != null) {
            installed.check(from, DiskFaults.Operation.RENAME);
        }
        Files.move(from, to, options);
    }

    /** Puts {@code installed} between the storage and its files from the next file opened on. */
    static void install(DiskFaults installed) {
        faults = installed;
    }

    static DiskFaults installed() {
        return faults;
    }
}
