package io.tidemark.core.auth;

import com.nimbusds.jose.jwk.Curve;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.interfaces.ECKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The files of the key pair tokens are signed and checked with: an EC P-256 (secp256r1) key pair in PEM, as OpenSSL
 * writes and reads it (RFC 7468):
 * <ul>
 *   <li>the public key, which every broker holds ({@code auth.token.public.key.file}): {@code -----BEGIN PUBLIC
 *       KEY-----}, the DER of a SubjectPublicKeyInfo (X.509), base64 in lines of 64;</li>
 *   <li>the private key, which only the admin who mints tokens holds: {@code -----BEGIN PRIVATE KEY-----}, the DER of
 *       an unencrypted PKCS#8 PrivateKeyInfo, base64 in lines of 64, in a file readable by its owner only.</li>
 * </ul>
 * P-256 because tokens are signed with ES256 (RFC 7518, section 3.4), which names that curve; a key on another curve
 * or of another type is refused when read, naming what it is.
 *
 * <p>Stateless; safe from any thread.
 */
public final class TokenKeyFormat {
    public static final String PUBLIC_LABEL = "PUBLIC KEY";
    public static final String PRIVATE_LABEL = "PRIVATE KEY";
    private static final String CURVE = "secp256r1";
    private static final int LINE_CHARS = 64;
    /** What every refusal ends with: what the file must hold instead. */
    private static final String KEY_NEEDED = "; allowed: an EC P-256 key in PEM, as tidemark tokens create-key-pair "
            + "writes";
    /** One PEM block: its label, the base64 between, and the same label at the end. */
    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    /** Largest key file read: a P-256 key's PEM is under 300 bytes; anything far larger is another file. */
    private static final long FILE_BYTES_MAX = 64 * 1024;

    private TokenKeyFormat() {
    }

    /** A new EC P-256 key pair. */
    public static KeyPair generate(SecureRandom random) {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec(CURVE), random);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no EC " + CURVE + " key pair generator", e);
        }
    }

    /** {@code key} as a {@code PUBLIC KEY} PEM. */
    public static String publicPem(ECPublicKey key) {
        return pem(PUBLIC_LABEL, key.getEncoded());
    }

    /** {@code key} as a {@code PRIVATE KEY} PEM: the JDK's EC private keys encode as unencrypted PKCS#8. */
    public static String privatePem(ECPrivateKey key) {
        return pem(PRIVATE_LABEL, key.getEncoded());
    }

    private static String pem(String label, byte[] der) {
        String body = Base64.getMimeEncoder(LINE_CHARS, new byte[] {'\n'}).encodeToString(der);
        return "-----BEGIN " + label + "-----\n" + body + "\n-----END " + label + "-----\n";
    }

    /**
     * The EC P-256 public key in {@code file}.
     *
     * @param what the setting or flag that named the file, for errors
     * @throws TidemarkException INVALID_CONFIG naming the file and what it holds instead
     */
    public static ECPublicKey readPublic(Path file, String what) {
        byte[] der = read(file, what, PUBLIC_LABEL);
        try {
            return p256(KeyFactory.getInstance("EC").generatePublic(new X509EncodedKeySpec(der)), ECPublicKey.class,
                    file, what);
        } catch (GeneralSecurityException e) {
            throw invalid(what + " " + file + " does not hold an EC public key" + KEY_NEEDED + " (" + e.getMessage()
                    + ")");
        }
    }

    /**
     * The EC P-256 private key in {@code file}.
     *
     * @param what the setting or flag that named the file, for errors
     * @throws TidemarkException INVALID_CONFIG naming the file and what it holds instead
     */
    public static ECPrivateKey readPrivate(Path file, String what) {
        byte[] der = read(file, what, PRIVATE_LABEL);
        try {
            return p256(KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der)),
                    ECPrivateKey.class, file, what);
        } catch (GeneralSecurityException e) {
            throw invalid(what + " " + file + " does not hold an EC private key" + KEY_NEEDED + " (" + e.getMessage()
                    + ")");
        }
    }

    /** The DER of the one {@code label} block in {@code file}. */
    private static byte[] read(Path file, String what, String label) {
        String text;
        try {
            if (Files.size(file) > FILE_BYTES_MAX) {
                throw invalid(what + " " + file + " is larger than " + FILE_BYTES_MAX + " bytes: not a key file"
                        + KEY_NEEDED);
            }
            text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        } catch (NoSuchFileException e) {
            throw invalid(what + " " + file + " is missing");
        } catch (IOException e) {
            throw invalid("cannot read " + what + " " + file + ": " + e);
        }
        Matcher block = BLOCK.matcher(text);
        if (!block.find()) {
            throw invalid(what + " " + file + " holds no PEM block (-----BEGIN " + label + "-----)" + KEY_NEEDED);
        }
        String found = block.group(1);
        if (!found.equals(label)) {
            throw invalid(what + " " + file + " holds -----BEGIN " + found + "-----, not -----BEGIN " + label + "-----"
                    + advice(file, found, label) + KEY_NEEDED);
        }
        try {
            return Base64.getMimeDecoder().decode(block.group(2));
        } catch (IllegalArgumentException e) {
            throw invalid(what + " " + file + " holds a " + label + " that is not base64" + KEY_NEEDED);
        }
    }

    /** What to do instead, for the likeliest mix-ups: the other half of the pair, or OpenSSL's older key form. */
    private static String advice(Path file, String found, String wanted) {
        if (wanted.equals(PUBLIC_LABEL) && found.endsWith(PRIVATE_LABEL)) {
            return ": a broker gets only the public key (token-public.pem); the private key stays with the admin who "
                    + "mints tokens";
        }
        if (wanted.equals(PRIVATE_LABEL) && found.equals(PUBLIC_LABEL)) {
            return ": tokens are signed with the private key (token-private.pem)";
        }
        if (wanted.equals(PRIVATE_LABEL) && found.equals("EC " + PRIVATE_LABEL)) {
            return ": convert it to PKCS#8 with openssl pkcs8 -topk8 -nocrypt -in " + file;
        }
        return "";
    }

    private static <K extends ECKey> K p256(Object key, Class<K> type, Path file, String what) {
        if (!type.isInstance(key)) {
            throw invalid(what + " " + file + " does not hold an EC key" + KEY_NEEDED);
        }
        K ec = type.cast(key);
        Curve curve = Curve.forECParameterSpec(ec.getParams());
        if (!Curve.P_256.equals(curve)) {
            throw invalid(what + " " + file + " holds an EC key on " + (curve == null ? "an unnamed curve"
                    : curve.getName()) + ", not P-256" + KEY_NEEDED);
        }
        return ec;
    }

    private static TidemarkException invalid(String message) {
        return new TidemarkException(ErrorCode.INVALID_CONFIG, message);
    }
}
