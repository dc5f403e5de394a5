package io.tidemark.proto.tls;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Where one party's TLS material lies and how it is used: PEM files (reloaded when they change, {@link TlsMaterial}),
 * read from a broker's config file or a client's {@code --command-config} file. Setting {@code tls.ca.file} turns TLS
 * on; without any {@code tls.*} key the party talks plain text.
 * <ul>
 *   <li>{@code tls.ca.file}: the CA bundle (PEM) every peer's certificate must chain to;</li>
 *   <li>{@code tls.cert.file}: this party's certificate chain (PEM, its own first), and {@code tls.key.file}: its
 *       private key (PEM, PKCS#8, unencrypted, readable by its owner only). A broker needs both; a client needs them
 *       only when the brokers require client certificates;</li>
 *   <li>{@code tls.client.auth} (a broker's): {@code required} (the default: every client shows a certificate from
 *       the CA), {@code requested} (one that shows a certificate must show a valid one) or {@code none};</li>
 *   <li>{@code tls.protocols}: {@code TLSv1.3} (the default), or {@code TLSv1.3,TLSv1.2} to let older peers in;</li>
 *   <li>{@code tls.reload.interval.ms}: how often the files are read again, so a rotated certificate is taken
 *       without a restart (default 60000, at least 1000);</li>
 *   <li>{@code tls.broker.subjects} (a broker's): a regular expression the whole subject of a broker's certificate
 *       matches, in RFC 2253 form ({@code CN=broker-1}): the Raft port takes no other party, so a client holding a
 *       certificate from the same CA cannot reach it. Default {@code CN=broker-[0-9]+}, the names
 *       {@code tidemark certs create} gives.</li>
 * </ul>
 *
 * @param certFile and {@code keyFile}: both or neither
 */
public record TlsSettings(Path caFile, Optional<Path> certFile, Optional<Path> keyFile, ClientAuth clientAuth,
                          List<String> protocols, long reloadIntervalMs, Pattern brokerSubjects) {
    public static final String CA_FILE = "tls.ca.file";
    public static final String CERT_FILE = "tls.cert.file";
    public static final String KEY_FILE = "tls.key.file";
    public static final String CLIENT_AUTH = "tls.client.auth";
    public static final String PROTOCOLS = "tls.protocols";
    public static final String RELOAD_INTERVAL_MS = "tls.reload.interval.ms";
    public static final String BROKER_SUBJECTS = "tls.broker.subjects";
    /** Every key this class reads. */
    public static final Set<String> KEYS = Set.of(CA_FILE, CERT_FILE, KEY_FILE, CLIENT_AUTH, PROTOCOLS,
            RELOAD_INTERVAL_MS, BROKER_SUBJECTS);
    public static final String DEFAULT_BROKER_SUBJECTS = "CN=broker-[0-9]+";
    public static final List<String> ALLOWED_PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");
    public static final long DEFAULT_RELOAD_INTERVAL_MS = 60_000;
    private static final long MIN_RELOAD_INTERVAL_MS = 1_000;

    /** Whether a broker asks its clients for certificates. */
    public enum ClientAuth {
        REQUIRED, REQUESTED, NONE
    }

    public TlsSettings {
        if (certFile.isPresent() != keyFile.isPresent()) {
            throw invalid(CERT_FILE + " and " + KEY_FILE + " go together: set both (a certificate and its key) or "
                    + "neither");
        }
        protocols = List.copyOf(protocols);
    }

    /**
     * The TLS keys among {@code values} (other keys are left to the caller); empty when none is set.
     *
     * @param source where the values came from, for errors
     * @throws TidemarkException INVALID_CONFIG naming the key, the value and what is allowed
     */
    public static Optional<TlsSettings> fromProperties(Map<String, String> values, String source) {
        Map<String, String> tls = new TreeMap<>();
        values.forEach((key, value) -> {
            if (KEYS.contains(key)) {
                tls.put(key, value.trim());
            }
        });
        if (tls.isEmpty()) {
            return Optional.empty();
        }
        if (!tls.containsKey(CA_FILE)) {
            throw invalid(source + " sets " + String.join(", ", tls.keySet()) + " but not " + CA_FILE
                    + ", the CA bundle that turns TLS on");
        }
        return Optional.of(new TlsSettings(Path.of(tls.get(CA_FILE)),
                Optional.ofNullable(tls.get(CERT_FILE)).map(Path::of), Optional.ofNullable(tls.get(KEY_FILE))
                .map(Path::of), clientAuth(tls.getOrDefault(CLIENT_AUTH, "required"), source),
                protocols(tls.getOrDefault(PROTOCOLS, "TLSv1.3"), source), reloadInterval(tls.get(RELOAD_INTERVAL_MS),
                source), brokerSubjects(tls.getOrDefault(BROKER_SUBJECTS, DEFAULT_BROKER_SUBJECTS), source)));
    }

    /** A client's settings: the CA, and a certificate with its key when it has one. */
    public static TlsSettings client(Path caFile, Optional<Path> certFile, Optional<Path> keyFile) {
        return new TlsSettings(caFile, certFile, keyFile, ClientAuth.NONE, List.of("TLSv1.3"),
                DEFAULT_RELOAD_INTERVAL_MS, Pattern.compile(DEFAULT_BROKER_SUBJECTS));
    }

    private static ClientAuth clientAuth(String value, String source) {
        try {
            return ClientAuth.valueOf(value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw invalid("invalid value for " + CLIENT_AUTH + " in " + source + ": '" + value + "' is not allowed; "
                    + "allowed: required, requested, none");
        }
    }

    private static List<String> protocols(String value, String source) {
        List<String> protocols = new ArrayList<>();
        for (String protocol : value.split(",")) {
            String name = protocol.trim();
            if (!ALLOWED_PROTOCOLS.contains(name) || protocols.contains(name)) {
                throw invalid("invalid value for " + PROTOCOLS + " in " + source + ": '" + value + "' is not "
                        + "allowed; allowed: TLSv1.3, or TLSv1.3,TLSv1.2");
            }
            protocols.add(name);
        }
        if (!protocols.contains("TLSv1.3")) {
            throw invalid("invalid value for " + PROTOCOLS + " in " + source + ": '" + value + "' leaves TLSv1.3 "
                    + "out; allowed: TLSv1.3, or TLSv1.3,TLSv1.2");
        }
        return protocols;
    }

    private static long reloadInterval(String value, String source) {
        if (value == null) {
            return DEFAULT_RELOAD_INTERVAL_MS;
        }
        try {
            long ms = Long.parseLong(value);
            if (ms >= MIN_RELOAD_INTERVAL_MS) {
                return ms;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw invalid("invalid value for " + RELOAD_INTERVAL_MS + " in " + source + ": '" + value + "' is not "
                + "allowed; allowed: milliseconds, at least " + MIN_RELOAD_INTERVAL_MS);
    }

    private static Pattern brokerSubjects(String value, String source) {
        try {
            return Pattern.compile(value);
        } catch (PatternSyntaxException e) {
            throw invalid("invalid value for " + BROKER_SUBJECTS + " in " + source + ": '" + value + "' is not "
                    + "allowed; allowed: a Java regular expression matching whole certificate subjects, e.g. "
                    + DEFAULT_BROKER_SUBJECTS + " (" + e.getDescription() + ")");
        }
    }

    private static TidemarkException invalid(String message) {
        return new TidemarkException(ErrorCode.INVALID_CONFIG, message);
    }
}
