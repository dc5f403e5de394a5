package io.tidemark.cli;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.tls.TlsMaterial;
import io.tidemark.proto.tls.TlsSettings;
import io.tidemark.proto.v1.ErrorCode;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The options every client command shares: where the cluster is, and how to reach it (TLS, and a token for brokers
 * that take tokens instead of client certificates, from a {@code --command-config} file as Kafka's tools take, or from
 * flags, which win over the file).
 */
final class ClientOptions implements AutoCloseable {
    /** Every key a client properties file may hold. */
    private static final Set<String> KEYS = Stream.concat(TlsSettings.KEYS.stream(), Stream.of(BearerToken.FILE))
            .collect(Collectors.toUnmodifiableSet());

    @Option(names = "--bootstrap", defaultValue = "127.0.0.1:9400",
            description = "Brokers to reach the cluster through, HOST:PORT[,HOST:PORT...] (default: ${DEFAULT-VALUE}).")
    String bootstrap;
    @Option(names = "--command-config", paramLabel = "FILE", description = "A properties file of client settings: "
            + "tls.ca.file (the CA bundle, PEM: turns TLS on), tls.cert.file and tls.key.file (this client's "
            + "certificate chain and PKCS#8 key, PEM, when the brokers ask for one), tls.protocols, token.file (this "
            + "client's token, sent over TLS with every call). tidemark certs create writes one per client.")
    Path commandConfig;
    @Mixin
    TlsFlagOptions.Own tlsOptions;
    @Option(names = "--token-file", paramLabel = "FILE", description = "A file holding this client's token "
            + "(token.file), from tidemark tokens create --out: sent with every call, over TLS only, to brokers that "
            + "take tokens instead of client certificates; read again when it changes.")
    Path tokenFile;

    /** The TLS flags when the options were made by {@link #of}, not parsed. */
    private TlsFlags givenTlsFlags;
    private Map<String, String> settings;
    private Optional<TlsMaterial> tls;
    private Optional<BearerToken> token;

    /**
     * The TLS flags of a command for a cluster other than {@code --bootstrap}'s (the mirror's source and target, the
     * failover tool's target), named {@code PREFIX-ca}, {@code PREFIX-cert}, {@code PREFIX-key}; each over the key of
     * the cluster's properties file, as {@code --tls-ca} is over {@code --command-config}'s.
     */
    record TlsFlags(String prefix, Path ca, Path cert, Path key) {
        /** No flags: the properties file alone. */
        static final TlsFlags NONE = new TlsFlags("--tls", null, null, null);

        boolean any() {
            return ca != null || cert != null || key != null;
        }

        void putInto(Map<String, String> values) {
            put(values, TlsSettings.CA_FILE, ca);
            put(values, TlsSettings.CERT_FILE, cert);
            put(values, TlsSettings.KEY_FILE, key);
        }

        /** Where the settings come from, for errors: the file, the flags, or both. */
        String where(Path file, String option) {
            String flags = "the " + prefix + "-* flags";
            if (file == null) {
                return flags;
            }
            return option + " " + file + (any() ? " and " + flags : "");
        }
    }

    /** The options of a command that takes another cluster's bootstrap and client properties file than its own. */
    static ClientOptions of(String bootstrap, Path commandConfig) {
        return of(bootstrap, commandConfig, TlsFlags.NONE);
    }

    /** The options of a command that takes another cluster's bootstrap, properties file and TLS flags. */
    static ClientOptions of(String bootstrap, Path commandConfig, TlsFlags flags) {
        ClientOptions options = new ClientOptions();
        options.bootstrap = bootstrap;
        options.commandConfig = commandConfig;
        options.givenTlsFlags = flags;
        return options;
    }

    private TlsFlags tlsFlags() {
        return givenTlsFlags != null ? givenTlsFlags : tlsOptions != null ? tlsOptions.flags() : TlsFlags.NONE;
    }

    /**
     * The TLS material the options name, loaded once (the command's process ends with it); empty for plain text.
     *
     * @throws TidemarkException INVALID_CONFIG naming the file or key that is wrong
     */
    synchronized Optional<TlsMaterial> tls() {
        if (tls == null) {
            tls = TlsMaterial.load(TlsSettings.fromProperties(settings(),
                    tlsFlags().where(commandConfig, "--command-config")));
        }
        return tls;
    }

    /**
     * The token {@code --token-file} or the file's {@code token.file} names, read once and then again when the file
     * changes; empty without one.
     *
     * @throws TidemarkException INVALID_CONFIG naming the file when it is missing or holds no token, or when TLS is
     *                           not set: a token goes only over TLS
     */
    synchronized Optional<BearerToken> token() {
        if (token == null) {
            String file = settings().get(BearerToken.FILE);
            if (file != null && tls().isEmpty()) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIG, BearerToken.FILE + " " + file.trim() + " is "
                        + "set, but TLS is not: " + BearerToken.PLAIN_TEXT_REFUSED + " (or --tls-ca)");
            }
            token = Optional.ofNullable(file).map(f -> BearerToken.fromFile(Path.of(f.trim()), Clock.systemUTC()));
        }
        return token;
    }

    /** The client properties file's keys, with the flags' values over them; read once. */
    private synchronized Map<String, String> settings() {
        if (settings == null) {
            Map<String, String> values = new HashMap<>(commandConfig(commandConfig, "--command-config"));
            tlsFlags().putInto(values);
            put(values, BearerToken.FILE, tokenFile);
            settings = Map.copyOf(values);
        }
        return settings;
    }

    /**
     * The TLS settings of a client properties file given as {@code option} (the mirror's {@code
     * --source-command-config}, say), with {@code flags} over its keys; empty without a file, flags or tls.* keys.
     * The mirror sends no token, so a file with {@code token.file} is refused rather than its token left out unsaid.
     *
     * @throws TidemarkException INVALID_CONFIG naming the file or flags and what is wrong
     */
    static Optional<TlsSettings> tlsSettings(Path file, String option, TlsFlags flags) {
        Map<String, String> values = new HashMap<>(commandConfig(file, option));
        if (values.containsKey(BearerToken.FILE)) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, option + " " + file + " sets " + BearerToken.FILE
                    + ", but the mirror does not send tokens; reach that cluster with a client certificate ("
                    + TlsSettings.CERT_FILE + ", " + TlsSettings.KEY_FILE + ")");
        }
        flags.putInto(values);
        return TlsSettings.fromProperties(values, flags.where(file, option));
    }

    /** The keys of a client properties file: tls.* keys and token.file; none without a file. */
    private static Map<String, String> commandConfig(Path file, String option) {
        if (file == null) {
            return Map.of();
        }
        Map<String, String> values;
        try {
            values = BrokerConfig.readFile(file);
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "cannot read " + option + " " + file + ": " + e);
        }
        TreeSet<String> unknown = new TreeSet<>(values.keySet());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "unknown key(s) " + unknown + " in " + option + " "
                    + file + "; known keys: " + new TreeSet<>(KEYS));
        }
        return values;
    }

    private static void put(Map<String, String> values, String key, Path file) {
        if (file != null) {
            values.put(key, file.toAbsolutePath().toString());
        }
    }

    AdminConfig.Builder adminConfig() {
        return adminConfig(bootstrap);
    }

    /**
     * An admin client's settings for {@code brokers} (other than {@code --bootstrap}), TLS and token as the options
     * say.
     */
    AdminConfig.Builder adminConfig(String brokers) {
        AdminConfig.Builder config = AdminConfig.builder(brokers);
        tls().ifPresent(config::tls);
        token().ifPresent(config::token);
        return config;
    }

    ProducerConfig.Builder producerConfig() {
        ProducerConfig.Builder config = ProducerConfig.builder(bootstrap);
        tls().ifPresent(config::tls);
        token().ifPresent(config::token);
        return config;
    }

    ConsumerConfig.Builder consumerConfig() {
        ConsumerConfig.Builder config = ConsumerConfig.builder(bootstrap);
        tls().ifPresent(config::tls);
        token().ifPresent(config::token);
        return config;
    }

    /** Stops reloading the TLS files, when they were loaded. */
    @Override
    public synchronized void close() {
        if (tls != null) {
            tls.ifPresent(TlsMaterial::close);
        }
    }

    TidemarkAdmin admin() {
        return new TidemarkAdmin(adminConfig().build());
    }

    /** The one partition asked for, or every partition of the topic (UNKNOWN_TOPIC when there is no such topic). */
    List<TopicPartition> partitions(String topic, Integer partition) {
        if (partition != null) {
            return List.of(new TopicPartition(topic, partition));
        }
        try (TidemarkAdmin admin = admin()) {
            int count = admin.metadata(List.of(topic)).getTopics(0).getPartitionsCount();
            return IntStream.range(0, count).mapToObj(p -> new TopicPartition(topic, p)).toList();
        }
    }
}
