package io.tidemark.core.log;

import io.tidemark.core.log.file.Disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The file operations the storage needs to be crash-safe: replace a small file whole, rename, fsync a directory,
 * delete a tree. Every file a broker needs to start goes through {@link #writeAtomically}, and a directory whose half
 * would not open is renamed out of the way ({@link #move}) before it is deleted.
 */
public final class DurableFiles {
    private DurableFiles() {
    }

    /**
     * Replaces {@code file} with {@code bytes} so that a crash leaves the old content or the new, whole: writes
     * {@code file.tmp}, fsyncs it, renames it over {@code file} and fsyncs the directory.
     */
    public static void writeAtomically(Path file, byte[] bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel channel = Disk.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
        Disk.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        syncDirectory(file.getParent());
    }

    /**
     * Renames {@code from} to {@code to} in one step (a file or a directory, in the same file system) and fsyncs the
     * directories of both, so after a crash it is under one name or the other, whole.
     */
    public static void move(Path from, Path to) throws IOException {
        Disk.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        syncDirectory(to.getParent());
        if (!from.getParent().equals(to.getParent())) {
            syncDirectory(from.getParent());
        }
    }

    /** fsyncs a directory so that file creations, renames and deletions in it survive a crash. */
    public static void syncDirectory(Path dir) throws IOException {
        try (FileChannel channel = Disk.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /** Deletes {@code dir} and everything under it, deepest first; nothing when it does not exist. */
    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }
}
