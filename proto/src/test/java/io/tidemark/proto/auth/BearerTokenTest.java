package io.tidemark.proto.auth;

import io.grpc.Attributes;
import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A token file becomes {@code authorization: Bearer <token>} on calls over TLS, and never goes out in plain text. */
class BearerTokenTest {
    private static final String FIRST = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLTE";
    private static final String SECOND = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJib2IifQ.c2lnbmF0dXJlLTI";

    @TempDir
    Path dir;

    private final AtomicLong nowMs = new AtomicLong(1_000_000);
    private final InstantSource clock = () -> Instant.ofEpochMilli(nowMs.get());
    /** Tasks the credentials handed to the call's executor, run by {@link #runQueued}. */
    private final List<Runnable> queued = new ArrayList<>();

    /** What one call's credentials did: the headers applied, or the status failed with. */
    private static final class Outcome extends CallCredentials.MetadataApplier {
        Metadata headers;
        Status failure;

        @Override
        public void apply(Metadata headers) {
            this.headers = headers;
        }

        @Override
        public void fail(Status status) {
            this.failure = status;
        }

        String authorization() {
            return headers.get(BearerToken.AUTHORIZATION);
        }
    }

    private Outcome call(BearerToken token, SecurityLevel level) {
        Outcome outcome = new Outcome();
        token.applyRequestMetadata(new CallCredentials.RequestInfo() {
            @Override
            public MethodDescriptor<?, ?> getMethodDescriptor() {
                throw new UnsupportedOperationException("not read");
            }

            @Override
            public SecurityLevel getSecurityLevel() {
                return level;
            }

            @Override
            public String getAuthority() {
                return "broker-1:9400";
            }

            @Override
            public Attributes getTransportAttrs() {
                return Attributes.EMPTY;
            }
        }, queued::add, outcome);
        return outcome;
    }

    private void runQueued() {
        List<Runnable> tasks = new ArrayList<>(queued);
        queued.clear();
        tasks.forEach(Runnable::run);
    }

    /** Replaces the token file as tokens create --out does: a new file renamed over the old. */
    private Path write(String text) throws IOException {
        Path file = dir.resolve("client.token");
        Path next = Files.writeString(dir.resolve("client.token.new"), text);
        return Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void aCallOverTlsCarriesTheTokenAsABearerHeader() throws IOException {
        BearerToken token = BearerToken.fromFile(write(FIRST + "\n"), clock);
        Outcome outcome = call(token, SecurityLevel.PRIVACY_AND_INTEGRITY);
        assertNull(outcome.failure);
        assertEquals("Bearer " + FIRST, outcome.authorization());
        assertEquals(List.of(), queued, "within the first second no I/O is due");
    }

    @Test
    void aCallInPlainTextFailsWithoutTheToken() throws IOException {
        BearerToken token = BearerToken.fromFile(write(FIRST), clock);
        for (SecurityLevel level : List.of(SecurityLevel.NONE, SecurityLevel.INTEGRITY)) {
            Outcome outcome = call(token, level);
            assertNull(outcome.headers, level.name());
            assertEquals(Status.Code.UNAUTHENTICATED, outcome.failure.getCode());
            assertEquals("a token is sent only over TLS; set tls.ca.file (the channel to broker-1:9400 is plain text)",
                    outcome.failure.getDescription());
            TidemarkException e = GrpcErrors.fromThrowable(outcome.failure.asRuntimeException());
            assertEquals(ErrorCode.AUTHENTICATION_FAILED, e.code());
            assertEquals("gRPC UNAUTHENTICATED: a token is sent only over TLS; set tls.ca.file (the channel to "
                    + "broker-1:9400 is plain text)", e.getMessage());
        }
    }

    @Test
    void aRotatedTokenIsTakenAtTheFirstCallAfterASecond() throws IOException {
        BearerToken token = BearerToken.fromFile(write(FIRST), clock);
        write(SECOND);
        nowMs.addAndGet(BearerToken.CHECK_INTERVAL_MS - 1);
        assertEquals("Bearer " + FIRST, call(token, SecurityLevel.PRIVACY_AND_INTEGRITY).authorization());
        assertEquals(List.of(), queued);

        nowMs.addAndGet(1);
        Outcome rotated = call(token, SecurityLevel.PRIVACY_AND_INTEGRITY);
        assertNull(rotated.headers, "the file is looked at on the call's executor");
        runQueued();
        assertEquals("Bearer " + SECOND, rotated.authorization());
        assertEquals("Bearer " + SECOND, call(token, SecurityLevel.PRIVACY_AND_INTEGRITY).authorization());
        assertEquals(List.of(), queued, "checked a moment ago");
    }

    @Test
    void aMissingOrBrokenFileAtACheckKeepsTheLastGoodToken() throws IOException {
        Path file = write(FIRST);
        BearerToken token = BearerToken.fromFile(file, clock);
        Files.delete(file);
        nowMs.addAndGet(BearerToken.CHECK_INTERVAL_MS);
        Outcome whileMissing = call(token, SecurityLevel.PRIVACY_AND_INTEGRITY);
        runQueued();
        assertEquals("Bearer " + FIRST, whileMissing.authorization());

        write("not a token\n");
        nowMs.addAndGet(BearerToken.CHECK_INTERVAL_MS);
        Outcome whileBroken = call(token, SecurityLevel.PRIVACY_AND_INTEGRITY);
        runQueued();
        assertEquals("Bearer " + FIRST, whileBroken.authorization());

        write(SECOND);
        nowMs.addAndGet(BearerToken.CHECK_INTERVAL_MS);
        Outcome repaired = call(token, SecurityLevel.PRIVACY_AND_INTEGRITY);
        runQueued();
        assertEquals("Bearer " + SECOND, repaired.authorization());
    }

    @Test
    void aFileThatIsMissingOrHoldsNoTokenIsRefusedNamingIt() throws IOException {
        Path missing = dir.resolve("missing.token");
        TidemarkException absent = assertThrows(TidemarkException.class, () -> BearerToken.fromFile(missing, clock));
        assertEquals(ErrorCode.INVALID_CONFIG, absent.code());
        assertEquals("token.file " + missing + " is missing; tidemark tokens create --out " + missing
                + " writes one", absent.getMessage());
        String notAToken = " does not hold a token: expected one compact JWT (three base64url parts joined by '.', "
                + "at most 8192 characters), as tidemark tokens create writes";
        for (String text : List.of("", "Bearer " + FIRST, FIRST + "\n" + SECOND, "a.b", "a.b.c.d.e", "a.b.c\u00e9",
                "a.b." + "c".repeat(8189), "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49\n")) {
            Path file = write(text);
            TidemarkException e = assertThrows(TidemarkException.class, () -> BearerToken.fromFile(file, clock));
            assertEquals("token.file " + file + notAToken, e.getMessage(), text);
        }
        assertEquals("Bearer a.b." + "c".repeat(8188), call(BearerToken.fromFile(write("a.b." + "c".repeat(8188)),
                clock), SecurityLevel.PRIVACY_AND_INTEGRITY).authorization(), "8192 characters are taken");
    }

    @Test
    void printingItShowsTheFileNotTheToken() throws IOException {
        Path file = write(FIRST);
        String printed = BearerToken.fromFile(file, clock).toString();
        assertEquals("BearerToken(" + file + ")", printed);
        assertFalse(printed.contains(FIRST));
    }
}
