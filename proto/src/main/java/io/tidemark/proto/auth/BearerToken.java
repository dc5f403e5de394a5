package io.tidemark.proto.auth;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.regex.Pattern;

/**
 * A client's token, read from a file ({@code token.file} in a client's {@code --command-config}), sent with every
 * call as the header {@code authorization: Bearer <token>}: gRPC call credentials, as Apache Pulsar's token
 * authentication sends its tokens. The token is a compact JWT signed with ES256 ({@code tidemark tokens create}
 * mints one); the broker checks it against its public key and takes its subject as the call's principal.
 *
 * <p>A token goes only over TLS: on a channel whose security level is below privacy and integrity (plain text) the
 * call fails with UNAUTHENTICATED before anything is sent, rather than hand the token to whoever listens on the wire.
 *
 * <p>Rotation: a call checks whether the file changed (its modification time, size and file key, the inode on
 * POSIX) at most once per second by the injected clock; a call within that second takes the token held, without any
 * I/O. When the file changed it is read again, on the call's executor, not the caller's thread. Replace the file
 * atomically (write a new one and rename it over the old, as {@code tidemark tokens create --out} does): a file
 * that is missing or does not hold a token at a check leaves the last good token in use, and the next check looks
 * again.
 *
 * <p>Thread-safe: the token held is one immutable snapshot behind a volatile field, replaced under this object's
 * lock.
 */
public final class BearerToken extends CallCredentials {
    /** The client setting naming the token file. */
    public static final String FILE = "token.file";
    /** The header a token travels in: {@code authorization: Bearer <token>} (RFC 6750, section 2.1). */
    public static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization",
            Metadata.ASCII_STRING_MARSHALLER);
    /** What precedes the token in {@link #AUTHORIZATION}. */
    public static final String SCHEME = "Bearer ";
    /**
     * Longest token taken: 8 KiB, grpc-java's default limit on all the headers of one call, so a longer one could not
     * be sent anyway; a broker refuses longer ones before parsing them.
     */
    public static final int TOKEN_CHARS_MAX = 8192;
    /** What a call over plain text fails with. */
    public static final String PLAIN_TEXT_REFUSED = "a token is sent only over TLS; set tls.ca.file";
    /**
     * Largest token file read: a token with room for whitespace around it. A larger file is something else given by
     * mistake (a key, a log) and is refused without being read whole.
     */
    private static final long FILE_BYTES_MAX = 2L * TOKEN_CHARS_MAX;
    /** How often a call looks at the file: a rotated token is taken within a second, at one stat a second. */
    static final long CHECK_INTERVAL_MS = 1_000;
    /** A compact JWS: header, claims and signature, each base64url without padding, joined by '.'. */
    private static final Pattern COMPACT_JWS = Pattern.compile("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+");

    private final Path file;
    private final InstantSource clock;
    private volatile Held held;

    /** The token held, the file's stamp it was read under, and when the file was last looked at. */
    private record Held(String header, Stamp stamp, long checkedAtMs) {
    }

    /** What tells a file changed: its modification time, size and file key (null where the file system has none). */
    private record Stamp(FileTime modified, long sizeBytes, Object fileKey) {
    }

    private BearerToken(Path file, InstantSource clock, Held held) {
        this.file = file;
        this.clock = clock;
        this.held = held;
    }

    /**
     * Reads the token in {@code file}, then reads it again when it changes.
     *
     * @throws TidemarkException INVALID_CONFIG when the file is missing, unreadable or does not hold a token
     */
    public static BearerToken fromFile(Path file, InstantSource clock) {
        Objects.requireNonNull(clock, "clock");
        Stamp stamp;
        Optional<String> header;
        try {
            stamp = stamp(file);
            header = read(file, stamp);
        } catch (NoSuchFileException e) {
            throw invalid(FILE + " " + file + " is missing; tidemark tokens create --out " + file + " writes one");
        } catch (IOException e) {
            throw invalid("cannot read " + FILE + " " + file + ": " + e);
        }
        return new BearerToken(file, clock, new Held(header.orElseThrow(() -> invalid(FILE + " " + file
                + " does not hold a token: expected one compact JWT (three base64url parts joined by '.', at most "
                + TOKEN_CHARS_MAX + " characters), as tidemark tokens create writes")), stamp, clock.millis()));
    }

    @Override
    public void applyRequestMetadata(RequestInfo info, Executor appExecutor, MetadataApplier applier) {
        if (info.getSecurityLevel() != SecurityLevel.PRIVACY_AND_INTEGRITY) {
            applier.fail(Status.UNAUTHENTICATED.withDescription(PLAIN_TEXT_REFUSED + " (the channel to "
                    + info.getAuthority() + " is plain text)"));
            return;
        }
        Held current = held;
        if (clock.millis() - current.checkedAtMs() < CHECK_INTERVAL_MS) {
            applier.apply(metadata(current));
        } else {
            appExecutor.execute(() -> applier.apply(metadata(checked())));
        }
    }

    /** The token held after looking at the file, unless another call looked within the last second. */
    private synchronized Held checked() {
        Held current = held;
        long nowMs = clock.millis();
        if (nowMs - current.checkedAtMs() < CHECK_INTERVAL_MS) {
            return current;
        }
        Held next = new Held(current.header(), current.stamp(), nowMs);
        try {
            // The stamp is taken before the text: a change between the two is seen again at the next check.
            Stamp stamp = stamp(file);
            if (!stamp.equals(current.stamp())) {
                Optional<String> header = read(file, stamp);
                if (header.isPresent()) {
                    next = new Held(header.get(), stamp, nowMs);
                }
            }
        } catch (IOException e) {
            // Missing or unreadable mid-rotation: the last good token stays, and the next check looks again.
        }
        held = next;
        return next;
    }

    private static Stamp stamp(Path file) throws IOException {
        BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
        return new Stamp(attributes.lastModifiedTime(), attributes.size(), attributes.fileKey());
    }

    /**
     * The header value for the token in {@code file}, without the whitespace around it; empty when the file does not
     * hold a compact JWT's shape. A file larger than {@link #FILE_BYTES_MAX} is not read.
     */
    private static Optional<String> read(Path file, Stamp stamp) throws IOException {
        if (stamp.sizeBytes() > FILE_BYTES_MAX) {
            return Optional.empty();
        }
        // ISO-8859-1 maps every byte to a character, so a file that is not ASCII is refused by the pattern below.
        String token = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1).strip();
        if (token.length() > TOKEN_CHARS_MAX || !COMPACT_JWS.matcher(token).matches()) {
            return Optional.empty();
        }
        return Optional.of(SCHEME + token);
    }

    private static Metadata metadata(Held held) {
        Metadata metadata = new Metadata();
        metadata.put(AUTHORIZATION, held.header());
        return metadata;
    }

    private static TidemarkException invalid(String message) {
        return new TidemarkException(ErrorCode.INVALID_CONFIG, message);
    }

    /** The file only: the token itself is a secret and never printed. */
    @Override
    public String toString() {
        return "BearerToken(" + file + ")";
    }
}
