package io.tidemark.core.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import io.tidemark.core.ManualClock;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a broker takes as a token and what it refuses, with the message the client sees. */
class TokenVerifierTest {
    private static final Instant NOW = Instant.parse("2026-12-01T09:00:00Z");
    private static final Instant EXPIRY = Instant.parse("2026-12-31T09:00:00Z");
    private static final SecureRandom RANDOM = new SecureRandom();

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(NOW.toEpochMilli());
    private final KeyPair pair = TokenKeyFormat.generate(RANDOM);

    private Path publicKeyFile() throws IOException {
        return writePublic("token-public.pem", (ECPublicKey) pair.getPublic());
    }

    private Path writePublic(String name, ECPublicKey key) throws IOException {
        return Files.writeString(dir.resolve(name), TokenKeyFormat.publicPem(key));
    }

    private TokenVerifier verifier(Optional<String> audience) throws IOException {
        return new TokenVerifier(publicKeyFile(), audience, clock);
    }

    /** Claims for alice, valid until EXPIRY, changed by {@code edit}. */
    private static JWTClaimsSet claims(Consumer<JWTClaimsSet.Builder> edit) {
        JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder().subject("alice").issueTime(Date.from(NOW))
                .expirationTime(Date.from(EXPIRY));
        edit.accept(claims);
        return claims.build();
    }

    private String signed(JWTClaimsSet claims) throws JOSEException {
        return signed(claims, (ECPrivateKey) pair.getPrivate());
    }

    private static String signed(JWTClaimsSet claims, ECPrivateKey key) throws JOSEException {
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.ES256), claims);
        jwt.sign(new ECDSASigner(key));
        return jwt.serialize();
    }

    private void assertRefused(TokenVerifier verifier, String token, String message) {
        TidemarkException e = assertThrows(TidemarkException.class, () -> verifier.verify(token));
        assertEquals(ErrorCode.AUTHENTICATION_FAILED, e.code());
        assertEquals(message, e.getMessage());
        assertFalse(!token.isEmpty() && e.getMessage().contains(token), "the message never holds the token");
    }

    @Test
    void aValidTokenNamesItsSubjectAsAUser() throws Exception {
        assertEquals(Principal.user("alice"), verifier(Optional.empty()).verify(signed(claims(c -> { }))));
        assertEquals(Principal.user("svc:orders"), verifier(Optional.empty()).verify(signed(claims(c -> c
                .subject("svc:orders")))));
    }

    @Test
    void aTokenIsRefusedFromItsExpiryOn() throws Exception {
        TokenVerifier verifier = verifier(Optional.empty());
        String token = signed(claims(c -> { }));
        clock.set(EXPIRY.toEpochMilli() - 1);
        assertEquals(Principal.user("alice"), verifier.verify(token));
        clock.advance(1);
        assertRefused(verifier, token, "the token expired at 2026-12-31T09:00:00Z (now 2026-12-31T09:00:00Z)");
        clock.advance(3_600_000);
        assertRefused(verifier, token, "the token expired at 2026-12-31T09:00:00Z (now 2026-12-31T10:00:00Z)");
    }

    @Test
    void aTokenIsRefusedBeforeItsNotBefore() throws Exception {
        TokenVerifier verifier = verifier(Optional.empty());
        Instant notBefore = NOW.plusSeconds(60);
        String token = signed(claims(c -> c.notBeforeTime(Date.from(notBefore))));
        assertRefused(verifier, token, "the token is not valid before 2026-12-01T09:01:00Z (now "
                + "2026-12-01T09:00:00Z)");
        clock.set(notBefore.toEpochMilli());
        assertEquals(Principal.user("alice"), verifier.verify(token));
    }

    @Test
    void aTokenSignedWithAnotherKeyOrChangedIsRefused() throws Exception {
        TokenVerifier verifier = verifier(Optional.empty());
        String signature = "the token's signature does not verify against the key in " + dir.resolve(
                "token-public.pem") + " (auth.token.public.key.file): it was not signed with the matching private key, "
                + "or was changed after";
        KeyPair other = TokenKeyFormat.generate(RANDOM);
        assertRefused(verifier, signed(claims(c -> { }), (ECPrivateKey) other.getPrivate()), signature);

        String[] parts = signed(claims(c -> { })).split("\\.");
        String bob = Base64URL.encode(claims(c -> c.subject("bob")).toString()).toString();
        assertRefused(verifier, parts[0] + "." + bob + "." + parts[2], signature);
        assertRefused(verifier, parts[0] + "." + parts[1] + "." + Base64URL.encode(new byte[64]), signature);
        assertRefused(verifier, parts[0] + "." + parts[1] + "." + Base64URL.encode(new byte[3]), signature);
    }

    @Test
    void anUnsignedTokenOrAnotherAlgorithmIsRefused() throws Exception {
        TokenVerifier verifier = verifier(Optional.empty());
        String unsigned = new PlainJWT(claims(c -> { })).serialize();
        assertRefused(verifier, unsigned, "the token is unsigned (alg none); only tokens signed with ES256 are taken");

        String[] real = signed(claims(c -> { })).split("\\.");
        String none = Base64URL.encode("{\"alg\":\"none\"}").toString();
        assertRefused(verifier, none + "." + real[1] + "." + real[2], "the token is not a JWT: expected a compact "
                + "JWS, three base64url parts (header, claims, signature) joined by '.'");

        // The classic forgery: HS256 with the public key as the shared secret.
        SignedJWT forged = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims(c -> { }));
        forged.sign(new MACSigner(Files.readString(publicKeyFile()).getBytes(StandardCharsets.US_ASCII)));
        assertRefused(verifier, forged.serialize(), "the token is signed with HS256; only ES256 is taken");

        KeyPairGenerator p384 = KeyPairGenerator.getInstance("EC");
        p384.initialize(new ECGenParameterSpec("secp384r1"));
        SignedJWT es384 = new SignedJWT(new JWSHeader(JWSAlgorithm.ES384), claims(c -> { }));
        es384.sign(new ECDSASigner((ECPrivateKey) p384.generateKeyPair().getPrivate()));
        assertRefused(verifier, es384.serialize(), "the token is signed with ES384; only ES256 is taken");

        String odd = Base64URL.encode("{\"alg\":\"ES256\\nforged: yes\"}").toString();
        assertRefused(verifier, odd + "." + real[1] + "." + real[2], "the token is signed with an unknown algorithm; "
                + "only ES256 is taken");
    }

    @Test
    void somethingElseIsNotAJwt() throws Exception {
        TokenVerifier verifier = verifier(Optional.empty());
        String notAJwt = "the token is not a JWT: expected a compact JWS, three base64url parts (header, claims, "
                + "signature) joined by '.'";
        for (String garbage : List.of("", "garbage", "a.b.c", "not.a.token.at.all", "Bearer x.y.z", "...")) {
            assertRefused(verifier, garbage, notAJwt);
        }
        String[] real = signed(claims(c -> { })).split("\\.");
        assertRefused(verifier, real[0] + "." + real[1] + "." + real[2] + "x".repeat(8192), "the token is "
                + (real[0].length() + real[1].length() + real[2].length() + 2 + 8192) + " characters long; at most "
                + "8192 are taken");
    }

    @Test
    void aTokenWithoutSubjectOrExpiryIsRefused() throws Exception {
        TokenVerifier verifier = verifier(Optional.empty());
        assertRefused(verifier, signed(claims(c -> c.subject(null))), "the token has no sub (subject) claim: the "
                + "name of the principal it stands for");
        assertRefused(verifier, signed(claims(c -> c.subject(" "))), "the token has no sub (subject) claim: the "
                + "name of the principal it stands for");
        assertRefused(verifier, signed(claims(c -> c.expirationTime(null))), "the token has no exp (expiry) claim; "
                + "a token that never expires is refused");
        assertRefused(verifier, signed(claims(c -> c.claim("exp", "tomorrow"))), "the token's claims are not a "
                + "JSON object of JWT claims (exp and nbf numbers of seconds, sub a string, aud a string or strings)");
    }

    @Test
    void anAudienceWhenSetMustBeInTheToken() throws Exception {
        TokenVerifier prod = verifier(Optional.of("prod"));
        assertEquals(Principal.user("alice"), prod.verify(signed(claims(c -> c.audience("prod")))));
        assertEquals(Principal.user("alice"), prod.verify(signed(claims(c -> c.audience(List.of("staging",
                "prod"))))));
        assertRefused(prod, signed(claims(c -> c.audience("staging"))), "the token is not for audience 'prod' "
                + "(auth.token.audience): its aud is [staging]");
        assertRefused(prod, signed(claims(c -> { })), "the token is not for audience 'prod' (auth.token.audience): "
                + "it has no aud claim");
        assertEquals(Principal.user("alice"), verifier(Optional.empty()).verify(signed(claims(c -> c
                .audience("staging")))), "without auth.token.audience any aud is taken");
        TidemarkException blank = assertThrows(TidemarkException.class, () -> verifier(Optional.of(" ")));
        assertEquals(ErrorCode.INVALID_CONFIG, blank.code());
        assertEquals("auth.token.audience is blank; allowed: a name every token's aud claim must hold (tidemark "
                + "tokens create --audience), or no auth.token.audience at all", blank.getMessage());
    }

    @Test
    void theKeyFileMustHoldAP256PublicKey() throws Exception {
        String allowed = "; allowed: an EC P-256 key in PEM, as tidemark tokens create-key-pair writes";
        Path missing = dir.resolve("missing.pem");
        Path privateKey = Files.writeString(dir.resolve("token-private.pem"),
                TokenKeyFormat.privatePem((ECPrivateKey) pair.getPrivate()));
        Path text = Files.writeString(dir.resolve("notes.txt"), "hello\n");
        KeyPairGenerator p384 = KeyPairGenerator.getInstance("EC");
        p384.initialize(new ECGenParameterSpec("secp384r1"));
        Path onP384 = writePublic("p384.pem", (ECPublicKey) p384.generateKeyPair().getPublic());
        KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
        rsa.initialize(2048);
        String rsaBase64 = Base64.getMimeEncoder().encodeToString(rsa.generateKeyPair().getPublic().getEncoded());
        Path rsaKey = Files.writeString(dir.resolve("rsa.pem"), "-----BEGIN PUBLIC KEY-----\n" + rsaBase64
                + "\n-----END PUBLIC KEY-----\n");
        Map<Path, String> refusals = Map.of(
                missing, "auth.token.public.key.file " + missing + " is missing",
                privateKey, "auth.token.public.key.file " + privateKey + " holds -----BEGIN PRIVATE KEY-----, not "
                        + "-----BEGIN PUBLIC KEY-----: a broker gets only the public key (token-public.pem); the "
                        + "private key stays with the admin who mints tokens" + allowed,
                text, "auth.token.public.key.file " + text + " holds no PEM block (-----BEGIN PUBLIC KEY-----)"
                        + allowed,
                onP384, "auth.token.public.key.file " + onP384 + " holds an EC key on P-384, not P-256" + allowed);
        refusals.forEach((file, message) -> {
            TidemarkException e = assertThrows(TidemarkException.class, () -> new TokenVerifier(file,
                    Optional.empty(), clock));
            assertEquals(ErrorCode.INVALID_CONFIG, e.code());
            assertEquals(message, e.getMessage());
        });
        TidemarkException notEc = assertThrows(TidemarkException.class, () -> new TokenVerifier(rsaKey,
                Optional.empty(), clock));
        assertEquals(ErrorCode.INVALID_CONFIG, notEc.code());
        assertTrue(notEc.getMessage().startsWith("auth.token.public.key.file " + rsaKey + " does not hold "
                + "an EC public key" + allowed + " ("), notEc.getMessage());
    }

    @Test
    void keysRoundTripThroughTheirPem() throws Exception {
        Path privateKey = Files.writeString(dir.resolve("token-private.pem"),
                TokenKeyFormat.privatePem((ECPrivateKey) pair.getPrivate()));
        assertEquals(pair.getPrivate(), TokenKeyFormat.readPrivate(privateKey, "--private-key"));
        assertEquals(pair.getPublic(), TokenKeyFormat.readPublic(publicKeyFile(), "--public-key"));
        String pem = Files.readString(privateKey);
        assertTrue(pem.startsWith("-----BEGIN PRIVATE KEY-----\n") && pem.endsWith("-----END PRIVATE "
                + "KEY-----\n"), pem);
        assertTrue(pem.lines().allMatch(line -> line.length() <= 64), pem);
        TidemarkException swapped = assertThrows(TidemarkException.class, () -> TokenKeyFormat.readPrivate(
                publicKeyFile(), "--private-key"));
        assertEquals("--private-key " + publicKeyFile() + " holds -----BEGIN PUBLIC KEY-----, not -----BEGIN "
                + "PRIVATE KEY-----: tokens are signed with the private key (token-private.pem); allowed: an EC P-256 key in PEM, as tidemark tokens "
                + "create-key-pair writes", swapped.getMessage());
        Path sec1 = Files.writeString(dir.resolve("sec1.pem"), "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIA==\n"
                + "-----END EC PRIVATE KEY-----\n");
        TidemarkException older = assertThrows(TidemarkException.class, () -> TokenKeyFormat.readPrivate(sec1,
                "--private-key"));
        assertEquals("--private-key " + sec1 + " holds -----BEGIN EC PRIVATE KEY-----, not -----BEGIN PRIVATE "
                + "KEY-----: convert it to PKCS#8 with openssl pkcs8 -topk8 -nocrypt -in " + sec1 + "; allowed: an EC "
                + "P-256 key in PEM, as tidemark tokens create-key-pair writes", older.getMessage());
    }
}
