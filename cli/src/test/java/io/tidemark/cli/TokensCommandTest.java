package io.tidemark.cli;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.tidemark.core.auth.Principal;
import io.tidemark.core.auth.TokenVerifier;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tokens create-key-pair} and {@code tokens create}: a token they make is taken by a broker's
 * {@link TokenVerifier} holding only the public key, until it expires.
 */
class TokensCommandTest {
    private static final Instant NOW = Instant.parse("2026-12-01T09:00:00.250Z");
    private static final InstantSource CLOCK = InstantSource.fixed(NOW);

    @TempDir
    Path tmp;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** {@code tidemark ARGS}, as a user runs it. */
    private int tidemark(String... args) {
        return TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
    }

    /** {@code tokens create ARGS} at {@link #NOW}. */
    private int create(String... args) {
        CommandLine commandLine = TidemarkCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true));
        CommandLine create = new CommandLine(new TokensCommand.Create(CLOCK));
        create.setOut(commandLine.getOut());
        create.setErr(commandLine.getErr());
        create.setExecutionExceptionHandler(commandLine.getExecutionExceptionHandler());
        return create.execute(args);
    }

    /** A key pair in {@code tmp/keys}; its directory. */
    private Path keyPair() {
        Path dir = tmp.resolve("keys");
        assertEquals(0, tidemark("tokens", "create-key-pair", "--dir", dir.toString()), err.toString());
        out.getBuffer().setLength(0);
        return dir;
    }

    /** The token {@code tokens create ARGS} printed, with the key pair in {@code keys}. */
    private String token(Path keys, String... args) {
        List<String> command = new ArrayList<>(List.of("--private-key", keys.resolve("token-private.pem").toString()));
        command.addAll(List.of(args));
        out.getBuffer().setLength(0);
        assertEquals(0, create(command.toArray(String[]::new)), err.toString());
        String printed = out.toString();
        assertTrue(printed.endsWith("\n"), printed);
        assertEquals(1, printed.lines().count(), printed);
        return printed.strip();
    }

    private static TokenVerifier verifier(Path keys, Optional<String> audience, Instant now) {
        return new TokenVerifier(keys.resolve("token-public.pem"), audience, InstantSource.fixed(now));
    }

    @Test
    void aTokenItMintsIsTakenByTheBrokersVerifierUntilItExpires() throws Exception {
        Path keys = keyPair();
        String token = token(keys, "--subject", "alice");
        assertEquals(Principal.user("alice"), verifier(keys, Optional.empty(), NOW).verify(token));

        SignedJWT jwt = SignedJWT.parse(token);
        assertEquals(JWSAlgorithm.ES256, jwt.getHeader().getAlgorithm());
        assertEquals(JOSEObjectType.JWT, jwt.getHeader().getType());
        JWTClaimsSet claims = jwt.getJWTClaimsSet();
        Instant expiry = Instant.parse("2026-12-31T09:00:00Z");
        assertEquals(Map.of("sub", "alice", "iat", Date.from(Instant.parse("2026-12-01T09:00:00Z")), "exp",
                Date.from(expiry)), claims.getClaims(), "30 days by default, in whole seconds");

        assertEquals(Principal.user("alice"), verifier(keys, Optional.empty(), expiry.minusMillis(1)).verify(token));
        TidemarkException expired = assertThrows(TidemarkException.class,
                () -> verifier(keys, Optional.empty(), expiry).verify(token));
        assertEquals(ErrorCode.AUTHENTICATION_FAILED, expired.code());
        assertEquals("the token expired at 2026-12-31T09:00:00Z (now 2026-12-31T09:00:00Z)", expired.getMessage());
    }

    @Test
    void expiryAndAudienceAreTheOnesAskedFor() throws Exception {
        Path keys = keyPair();
        String token = token(keys, "--subject", "svc:orders", "--expires-in", "2h", "--audience", "prod");
        JWTClaimsSet claims = SignedJWT.parse(token).getJWTClaimsSet();
        assertEquals(Date.from(Instant.parse("2026-12-01T11:00:00Z")), claims.getExpirationTime());
        assertEquals(List.of("prod"), claims.getAudience());
        assertEquals(Principal.user("svc:orders"), verifier(keys, Optional.of("prod"), NOW).verify(token));
        TidemarkException staging = assertThrows(TidemarkException.class,
                () -> verifier(keys, Optional.of("staging"), NOW).verify(token));
        assertEquals("the token is not for audience 'staging' (auth.token.audience): its aud is [prod]",
                staging.getMessage());
    }

    @Test
    void theKeyPairIsWrittenOnceWithThePrivateKeyForItsOwnerOnly() throws Exception {
        Path dir = tmp.resolve("keys");
        assertEquals(0, tidemark("tokens", "create-key-pair", "--dir", dir.toString()), err.toString());
        assertEquals("wrote  " + dir + "/token-private.pem (keep it with the admin: tidemark tokens create "
                + "--private-key)\n"
                + "wrote  " + dir + "/token-public.pem (give it to every broker as auth.token.public.key.file)\n",
                out.toString());
        assertTrue(Files.readString(dir.resolve("token-private.pem")).startsWith("-----BEGIN PRIVATE KEY-----\n"));
        assertTrue(Files.readString(dir.resolve("token-public.pem")).startsWith("-----BEGIN PUBLIC KEY-----\n"));
        if (tmp.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
                    dir.resolve("token-private.pem"))));
        }

        String privateKey = Files.readString(dir.resolve("token-private.pem"));
        out.getBuffer().setLength(0);
        assertEquals(0, tidemark("tokens", "create-key-pair", "--dir", dir.toString()), err.toString());
        assertEquals("exists " + dir + "/token-private.pem (left alone)\nexists " + dir + "/token-public.pem (left "
                + "alone)\n", out.toString());
        assertEquals(privateKey, Files.readString(dir.resolve("token-private.pem")));

        Files.delete(dir.resolve("token-public.pem"));
        assertEquals(1, tidemark("tokens", "create-key-pair", "--dir", dir.toString()));
        assertEquals("error: " + dir + "/token-private.pem exists without " + dir + "/token-public.pem: restore "
                + "token-public.pem, or delete token-private.pem to make a new pair\n", err.toString());
    }

    @Test
    void outWritesTheTokenForItsOwnerOnlyAndReplacesTheLastOne() throws Exception {
        Path keys = keyPair();
        Path file = tmp.resolve("alice.token");
        Files.writeString(file, "an old token\n");
        String keyFile = keys.resolve("token-private.pem").toString();
        assertEquals(0, create("--private-key", keyFile, "--subject", "alice", "--out", file.toString()),
                err.toString());
        assertEquals("wrote  " + file + " (a token for User:alice, expires 2026-12-31T09:00:00Z)\n", out.toString());
        String token = Files.readString(file);
        assertTrue(token.endsWith("\n"));
        assertEquals(Principal.user("alice"), verifier(keys, Optional.empty(), NOW).verify(token.strip()));
        assertEquals("BearerToken(" + file + ")", BearerToken.fromFile(file, CLOCK).toString(), "a client reads it");
        assertEquals(List.of("alice.token", "keys"), fileNames(tmp), "no file left beside it");
        if (tmp.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        }
    }

    @Test
    void refusesBadArgumentsNamingWhatIsAllowed() throws Exception {
        Path keys = keyPair();
        String keyFile = keys.resolve("token-private.pem").toString();
        String publicFile = keys.resolve("token-public.pem").toString();
        String subjects = "is not allowed: 1 to 255 printable characters, no space at either end";
        Map<List<String>, String> refusals = new LinkedHashMap<>();
        refusals.put(List.of("--private-key", keyFile, "--subject", " alice"), "--subject ' alice' " + subjects);
        refusals.put(List.of("--private-key", keyFile, "--subject", "a\nb"), "--subject 'a\nb' " + subjects);
        refusals.put(List.of("--private-key", keyFile, "--subject", "a".repeat(256)), "--subject '" + "a".repeat(256)
                + "' " + subjects);
        refusals.put(List.of("--private-key", keyFile, "--subject", "alice", "--expires-in", "0s"),
                "--expires-in 0s is not allowed: 1s to 3650d");
        refusals.put(List.of("--private-key", keyFile, "--subject", "alice", "--expires-in", "3651d"),
                "--expires-in 3651d is not allowed: 1s to 3650d");
        refusals.put(List.of("--private-key", keyFile, "--subject", "alice", "--expires-in", "forever"),
                "--expires-in 'forever' is not a duration: give a number with ms, s, m, h or d (500ms, 10s, 5m, 30d) "
                        + "or ISO-8601 (PT10S)");
        refusals.put(List.of("--private-key", keyFile, "--subject", "alice", "--audience", " "),
                "--audience is blank: give the name brokers' auth.token.audience is set to, or leave --audience out");
        refusals.put(List.of("--private-key", publicFile, "--subject", "alice"), "INVALID_CONFIG: --private-key "
                + publicFile + " holds -----BEGIN PUBLIC KEY-----, not -----BEGIN PRIVATE KEY-----: tokens are signed "
                + "with the private key (token-private.pem); allowed: an EC P-256 key in PEM, as tidemark tokens create-key-pair writes");
        refusals.forEach((args, message) -> {
            err.getBuffer().setLength(0);
            List<String> command = new ArrayList<>(List.of("tokens", "create"));
            command.addAll(args);
            assertEquals(1, tidemark(command.toArray(String[]::new)), args.toString());
            assertEquals("error: " + message + "\n", err.toString(), args.toString());
        });
        assertEquals("", out.toString());
    }

    @Test
    void helpSaysThePrivateKeyStaysWithTheAdminAndBrokersGetThePublicKey() {
        for (List<String> command : List.of(List.of("tokens", "--help"), List.of("tokens", "create-key-pair",
                "--help"), List.of("tokens", "create", "--help"))) {
            out.getBuffer().setLength(0);
            assertEquals(0, tidemark(command.toArray(String[]::new)));
            String help = out.toString().replace("\n", " ").replaceAll(" +", " ");
            assertTrue(help.contains("The private key stays with the admin"), help);
            assertTrue(help.contains("auth.token.public.key.file"), help);
        }
    }

    @Test
    void aKeyPairFromAnotherRunDoesNotVerify() throws Exception {
        Path keys = keyPair();
        String token = token(keys, "--subject", "alice");
        Path other = tmp.resolve("other");
        assertEquals(0, new CommandLine(new TokensCommand.CreateKeyPair(new SecureRandom())).setOut(
                new PrintWriter(new StringWriter())).execute("--dir", other.toString()));
        TidemarkException e = assertThrows(TidemarkException.class,
                () -> verifier(other, Optional.empty(), NOW).verify(token));
        assertFalse(e.getMessage().contains(token));
        assertEquals("the token's signature does not verify against the key in " + other.resolve("token-public.pem")
                + " (auth.token.public.key.file): it was not signed with the matching private key, or was changed "
                + "after", e.getMessage());
    }

    private static List<String> fileNames(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }
}
