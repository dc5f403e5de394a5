package io.tidemark.core.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.file.Path;
import java.text.ParseException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Checks a client's token and names the principal it stands for, as Apache Pulsar's token authentication does. A
 * client without a certificate sends its token with every call in the header {@code authorization: Bearer <token>}
 * ({@link BearerToken#AUTHORIZATION}, {@link BearerToken#SCHEME}); the broker's server interceptor takes the token
 * after {@code Bearer } and calls {@link #verify}.
 *
 * <p>A token is a compact JWT signed with ES256 (ECDSA on P-256 with SHA-256). The brokers hold only the public key
 * ({@code auth.token.public.key.file}, {@link TokenKeyFormat}), so a broker can check tokens but not mint them; the
 * admin mints them with the private key ({@code tidemark tokens create}). A token is taken when, in this order:
 * <ol>
 *   <li>it is a signed JWT (JWS) of at most {@link BearerToken#TOKEN_CHARS_MAX} characters, with {@code alg} ES256:
 *       an unsigned one ({@code alg: none}), an encrypted one and any other algorithm (HS256 forged with the public
 *       key as its secret, RS256, ...) are refused before any key is used;</li>
 *   <li>its signature verifies against the public key;</li>
 *   <li>it has an {@code exp} (expiry) and the clock reads before it; a token without one is refused, as one that
 *       leaks would be good forever;</li>
 *   <li>the clock reads at or after its {@code nbf} (not before), when it has one;</li>
 *   <li>when {@code auth.token.audience} is set, its {@code aud} holds that audience (tokens minted for another
 *       cluster are refused here);</li>
 *   <li>it has a {@code sub} (subject): the principal is {@code User:<sub>}.</li>
 * </ol>
 * Times are compared exactly, with no allowance for clock skew: {@code tokens create} sets no {@code nbf}, and an
 * {@code exp} is days away, so a skew of seconds between the admin's machine and a broker matters only in the last
 * seconds of a token's life.
 *
 * <p>Every refusal is an AUTHENTICATION_FAILED whose message says why; it never holds the token, which is a secret.
 * The public key is read once, when the verifier is made: a new key pair takes a broker restart (and new tokens).
 *
 * <p>Immutable and thread-safe: many calls verify at once.
 */
public final class TokenVerifier {
    /** The broker setting naming the public key file. */
    public static final String PUBLIC_KEY_FILE = "auth.token.public.key.file";
    /** The broker setting naming the audience every token must hold; unset, tokens are taken whatever their aud. */
    public static final String AUDIENCE = "auth.token.audience";
    /** An algorithm name printed as it is; another header value could be anything and is not printed. */
    private static final Pattern ALGORITHM_NAME = Pattern.compile("[A-Za-z0-9+_-]{1,32}");

    private final Path publicKeyFile;
    private final ECDSAVerifier verifier;
    private final Optional<String> audience;
    private final InstantSource clock;

    /**
     * Reads the public key in {@code publicKeyFile}.
     *
     * @param audience what every token's {@code aud} must hold; empty for any
     * @throws TidemarkException INVALID_CONFIG when the file does not hold an EC P-256 public key in PEM, or the
     *                           audience is blank
     */
    public TokenVerifier(Path publicKeyFile, Optional<String> audience, InstantSource clock) {
        if (audience.isPresent() && audience.get().isBlank()) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, AUDIENCE + " is blank; allowed: a name every "
                    + "token's aud claim must hold (tidemark tokens create --audience), or no " + AUDIENCE + " at all");
        }
        this.publicKeyFile = publicKeyFile;
        this.audience = audience;
        this.clock = Objects.requireNonNull(clock, "clock");
        try {
            this.verifier = new ECDSAVerifier(TokenKeyFormat.readPublic(publicKeyFile, PUBLIC_KEY_FILE));
        } catch (JOSEException e) {
            throw new IllegalStateException("a P-256 key read by TokenKeyFormat makes an ES256 verifier", e);
        }
    }

    /**
     * The principal {@code compactJwt} stands for: {@code User:<sub>}.
     *
     * @throws TidemarkException AUTHENTICATION_FAILED saying why the token is refused
     */
    public Principal verify(String compactJwt) {
        SignedJWT token = es256(Objects.requireNonNull(compactJwt, "compactJwt"));
        try {
            if (!token.verify(verifier)) {
                throw refused(signatureRefused(""));
            }
        } catch (JOSEException e) {
            throw refused(signatureRefused(" (" + e.getMessage() + ")"));
        }
        JWTClaimsSet claims;
        try {
            claims = token.getJWTClaimsSet();
        } catch (ParseException e) {
            throw refused("the token's claims are not a JSON object of JWT claims (exp and nbf numbers of seconds, "
                    + "sub a string, aud a string or strings)");
        }
        checkTimes(claims, clock.instant());
        audience.ifPresent(wanted -> checkAudience(claims.getAudience(), wanted));
        String subject = claims.getSubject();
        if (subject == null || subject.isBlank()) {
            throw refused("the token has no sub (subject) claim: the name of the principal it stands for");
        }
        return Principal.user(subject);
    }

    /** The token as a JWS signed with ES256; any other kind of JWT, or another algorithm, is refused. */
    private static SignedJWT es256(String compactJwt) {
        if (compactJwt.length() > BearerToken.TOKEN_CHARS_MAX) {
            throw refused("the token is " + compactJwt.length() + " characters long; at most "
                    + BearerToken.TOKEN_CHARS_MAX + " are taken");
        }
        JWT jwt;
        try {
            jwt = JWTParser.parse(compactJwt);
        } catch (ParseException e) {
            throw refused("the token is not a JWT: expected a compact JWS, three base64url parts (header, claims, "
                    + "signature) joined by '.'");
        }
        if (jwt instanceof PlainJWT) {
            throw refused("the token is unsigned (alg none); only tokens signed with ES256 are taken");
        }
        if (!(jwt instanceof SignedJWT signed)) {
            throw refused("the token is encrypted (a JWE); only tokens signed with ES256 are taken");
        }
        JWSAlgorithm algorithm = signed.getHeader().getAlgorithm();
        if (!JWSAlgorithm.ES256.equals(algorithm)) {
            String name = algorithm.getName();
            throw refused("the token is signed with " + (ALGORITHM_NAME.matcher(name).matches() ? name
                    : "an unknown algorithm") + "; only ES256 is taken");
        }
        return signed;
    }

    private String signatureRefused(String detail) {
        return "the token's signature does not verify against the key in " + publicKeyFile + " (" + PUBLIC_KEY_FILE
                + ")" + detail + ": it was not signed with the matching private key, or was changed after";
    }

    private static void checkTimes(JWTClaimsSet claims, Instant now) {
        Date expiry = claims.getExpirationTime();
        if (expiry == null) {
            throw refused("the token has no exp (expiry) claim; a token that never expires is refused");
        }
        if (!now.isBefore(expiry.toInstant())) {
            throw refused("the token expired at " + expiry.toInstant() + " (now " + now + ")");
        }
        Date notBefore = claims.getNotBeforeTime();
        if (notBefore != null && now.isBefore(notBefore.toInstant())) {
            throw refused("the token is not valid before " + notBefore.toInstant() + " (now " + now + ")");
        }
    }

    private static void checkAudience(List<String> audiences, String wanted) {
        if (!audiences.contains(wanted)) {
            throw refused("the token is not for audience '" + wanted + "' (" + AUDIENCE + "): " + (audiences.isEmpty()
                    ? "it has no aud claim" : "its aud is " + audiences));
        }
    }

    private static TidemarkException refused(String message) {
        return new TidemarkException(ErrorCode.AUTHENTICATION_FAILED, message);
    }

    @Override
    public String toString() {
        return "ES256 tokens checked against " + publicKeyFile + audience.map(a -> ", audience " + a).orElse("");
    }
}
