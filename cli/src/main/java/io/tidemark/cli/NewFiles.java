package io.tidemark.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Writes the files the commands that make keys and tokens make: each written whole or not at all, and a secret one
 * (a private key, a token) readable by its owner only (POSIX 0600) from its first moment, where the file system has
 * POSIX permissions, so it is never readable by others, not even between its creation and a chmod.
 *
 * <p>Stateless; safe from any thread.
 */
final class NewFiles {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private NewFiles() {
    }

    /**
     * Writes {@code text} (ASCII) to {@code file}, which must not exist. A failed write leaves no file: a partial one
     * would be kept as it is by a command that leaves existing files alone.
     *
     * @param secret whether only the owner may read the file
     */
    static void create(Path file, String text, boolean secret) throws IOException {
        SeekableByteChannel channel = Files.newByteChannel(file, Set.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE), attributes(file, secret));
        try (channel) {
            ByteBuffer bytes = StandardCharsets.US_ASCII.encode(text);
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
        } catch (IOException e) {
            Files.deleteIfExists(file);
            throw e;
        }
    }

    /**
     * Writes {@code text} (ASCII) to {@code file}, readable by its owner only, replacing the file if it exists: a new
     * file beside it, renamed over it at once, so a reader (a client taking a rotated token) sees the old file or the
     * new one, never a part.
     */
    static void replaceSecret(Path file, String text) throws IOException {
        Path absolute = file.toAbsolutePath();
        Path next = absolute.resolveSibling("." + absolute.getFileName() + ".new");
        Files.deleteIfExists(next);
        create(next, text, true);
        try {
            Files.move(next, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            Files.deleteIfExists(next);
            throw e;
        }
    }

    private static FileAttribute<?>[] attributes(Path file, boolean secret) {
        boolean posix = file.getFileSystem().supportedFileAttributeViews().contains("posix");
        return secret && posix ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)}
                : new FileAttribute<?>[0];
    }
}
