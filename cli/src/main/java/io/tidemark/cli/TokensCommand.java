package io.tidemark.cli;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.tidemark.core.auth.Principal;
import io.tidemark.core.auth.TokenKeyFormat;
import io.tidemark.core.auth.TokenVerifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.Date;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;

/**
 * {@code tidemark tokens}: the key pair tokens are signed with, and the tokens clients without a certificate show the
 * brokers (Apache Pulsar's token authentication): compact JWTs signed with ES256 ({@link TokenVerifier} says what a
 * broker takes).
 */
@Command(name = "tokens", mixinStandardHelpOptions = true, description = {
        "Make the key pair tokens are signed with, and tokens for clients without a certificate.",
        "The private key stays with the admin who mints tokens; brokers get only the public key, as "
                + TokenVerifier.PUBLIC_KEY_FILE + ", so a broker can check tokens but not mint them."},
        subcommands = {TokensCommand.CreateKeyPair.class, TokensCommand.Create.class})
final class TokensCommand {
    static final String PRIVATE_KEY_FILE = "token-private.pem";
    static final String PUBLIC_KEY_FILE = "token-public.pem";

    private TokensCommand() {
    }

    /**
     * Writes a new EC P-256 key pair into a directory ({@link TokenKeyFormat}): the private key readable by its owner
     * only. Both files there already are left alone, so a second run changes nothing; one without the other is
     * refused, as a new pair would not match the file kept.
     */
    @Command(name = "create-key-pair", mixinStandardHelpOptions = true, description = {
            "Make the EC P-256 key pair tokens are signed with: --dir/" + PRIVATE_KEY_FILE + " (readable by its owner "
                    + "only) and --dir/" + PUBLIC_KEY_FILE + ".",
            "The private key stays with the admin who mints tokens (tidemark tokens create --private-key). Brokers "
                    + "get only the public key, as " + TokenVerifier.PUBLIC_KEY_FILE + ": a broker can check tokens "
                    + "but not mint them.",
            "Files that exist are left alone; a new key pair makes every token signed with the old one worthless."})
    static final class CreateKeyPair implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Option(names = "--dir", required = true, paramLabel = "DIR",
                description = "Where the two files go; created if missing.")
        Path dir;

        private final SecureRandom random;

        CreateKeyPair() {
            this(new SecureRandom());
        }

        CreateKeyPair(SecureRandom random) {
            this.random = random;
        }

        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            Path directory = Files.createDirectories(dir.toAbsolutePath().normalize());
            Path privateFile = directory.resolve(PRIVATE_KEY_FILE);
            Path publicFile = directory.resolve(PUBLIC_KEY_FILE);
            boolean privateExists = Files.exists(privateFile);
            if (privateExists != Files.exists(publicFile)) {
                Path present = privateExists ? privateFile : publicFile;
                Path missing = privateExists ? publicFile : privateFile;
                throw new IllegalArgumentException(present + " exists without " + missing + ": restore "
                        + missing.getFileName() + ", or delete " + present.getFileName() + " to make a new pair");
            }
            if (privateExists) {
                out.println("exists " + privateFile + " (left alone)");
                out.println("exists " + publicFile + " (left alone)");
                return 0;
            }
            KeyPair pair = TokenKeyFormat.generate(random);
            NewFiles.create(privateFile, TokenKeyFormat.privatePem((ECPrivateKey) pair.getPrivate()), true);
            NewFiles.create(publicFile, TokenKeyFormat.publicPem((ECPublicKey) pair.getPublic()), false);
            out.println("wrote  " + privateFile + " (keep it with the admin: tidemark tokens create --private-key)");
            out.println("wrote  " + publicFile + " (give it to every broker as " + TokenVerifier.PUBLIC_KEY_FILE
                    + ")");
            return 0;
        }
    }

    /**
     * Mints a token: a JWT with {@code sub}, {@code iat}, {@code exp} and, when asked, {@code aud}, signed with ES256
     * by the private key. It goes to stdout alone on a line, or with {@code --out} into a file readable by its owner
     * only, replaced at once so a client reading it takes the new token whole.
     */
    @Command(name = "create", mixinStandardHelpOptions = true, description = {
            "Mint a token for a client without a certificate: a JWT signed with ES256 by the private key of "
                    + "tidemark tokens create-key-pair, naming the principal User:<subject>. It prints the token, or "
                    + "writes it to --out (readable by its owner only), the file a client names as token.file or "
                    + "--token-file.",
            "The private key stays with the admin; brokers check tokens with the public key alone ("
                    + TokenVerifier.PUBLIC_KEY_FILE + ")."})
    static final class Create implements Callable<Integer> {
        /** Longest --expires-in: ten years, as a certificate's longest --days. */
        private static final Duration EXPIRES_IN_MAX = Duration.ofDays(3650);
        /** One second: a token's times are whole seconds (JWT NumericDate). */
        private static final Duration EXPIRES_IN_MIN = Duration.ofSeconds(1);
        private static final int SUBJECT_CHARS_MAX = 255;
        /** A subject is printable: it becomes an ACL principal name and shows in logs. */
        private static final Pattern SUBJECT = Pattern.compile("[^\\p{Cntrl}\\s](?:[^\\p{Cntrl}]*[^\\p{Cntrl}\\s])?");

        @Spec
        CommandSpec spec;
        @Option(names = "--private-key", required = true, paramLabel = "FILE",
                description = "The private key tokens are signed with (" + PRIVATE_KEY_FILE + ").")
        Path privateKey;
        @Option(names = "--subject", required = true, paramLabel = "NAME",
                description = "Whom the token stands for: the principal is User:NAME, as ACLs name it (1 to "
                        + SUBJECT_CHARS_MAX + " printable characters, no space at either end).")
        String subject;
        @Option(names = "--expires-in", defaultValue = "30d", paramLabel = "DURATION",
                description = "How long the token is good for: a number with s, m, h or d (12h, 30d), from 1s to "
                        + "3650d (default: ${DEFAULT-VALUE}). Brokers refuse a token from its expiry on.")
        String expiresIn;
        @Option(names = "--audience", paramLabel = "NAME",
                description = "Put NAME in the token's aud: brokers whose " + TokenVerifier.AUDIENCE + " is NAME take "
                        + "it, and brokers with another audience refuse it (default: none).")
        String audience;
        @Option(names = "--out", paramLabel = "FILE",
                description = "Write the token to FILE (readable by its owner only, replacing it at once) instead of "
                        + "printing it.")
        Path outFile;

        private final InstantSource clock;

        Create() {
            this(Clock.systemUTC());
        }

        Create(InstantSource clock) {
            this.clock = clock;
        }

        @Override
        public Integer call() throws IOException, JOSEException {
            if (subject.length() > SUBJECT_CHARS_MAX || !SUBJECT.matcher(subject).matches()) {
                throw new IllegalArgumentException("--subject '" + subject + "' is not allowed: 1 to "
                        + SUBJECT_CHARS_MAX + " printable characters, no space at either end");
            }
            if (audience != null && audience.isBlank()) {
                throw new IllegalArgumentException("--audience is blank: give the name brokers' "
                        + TokenVerifier.AUDIENCE + " is set to, or leave --audience out");
            }
            Duration lifetime = TimeArguments.parseDuration("--expires-in", expiresIn);
            if (lifetime.compareTo(EXPIRES_IN_MIN) < 0 || lifetime.compareTo(EXPIRES_IN_MAX) > 0) {
                throw new IllegalArgumentException("--expires-in " + expiresIn + " is not allowed: 1s to 3650d");
            }
            ECPrivateKey key = TokenKeyFormat.readPrivate(privateKey, "--private-key");
            Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
            Instant expiry = now.plus(lifetime).truncatedTo(ChronoUnit.SECONDS);
            JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder().subject(subject).issueTime(Date.from(now))
                    .expirationTime(Date.from(expiry));
            if (audience != null) {
                claims.audience(audience);
            }
            SignedJWT token = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.ES256).type(JOSEObjectType.JWT)
                    .build(), claims.build());
            token.sign(new ECDSASigner(key));
            PrintWriter out = spec.commandLine().getOut();
            if (outFile == null) {
                out.println(token.serialize());
            } else {
                NewFiles.replaceSecret(outFile, token.serialize() + "\n");
                out.println("wrote  " + outFile.toAbsolutePath() + " (a token for " + Principal.user(subject)
                        + ", expires " + expiry + (audience == null ? "" : ", audience " + audience) + ")");
            }
            return 0;
        }
    }
}
