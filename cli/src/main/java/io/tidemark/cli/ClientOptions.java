package io.tidemark.cli;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.tls.TlsMaterial;
import io.tidemark.proto.tls.TlsSettings;
import io.tidemark.proto.v1.ErrorCode;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.IntStream;
import picocli.CommandLine.Option;

/**
 * The options every client command shares: where the cluster is, and how to reach it (TLS, from a
 * {@code --command-config} file as Kafka's tools take, or from flags, which win over the file).
 */
final class ClientOptions implements AutoCloseable {
    @Option(names = "--bootstrap", defaultValue = "127.0.0.1:9400",
            description = "Brokers to reach the cluster through, HOST:PORT[,HOST:PORT...] (default: ${DEFAULT-VALUE}).")
    String bootstrap;
    @Option(names = "--command-config", paramLabel = "FILE", description = "A properties file of client settings: "
            + "tls.ca.file (the CA bundle, PEM: turns TLS on), tls.cert.file and tls.key.file (this client's "
            + "certificate chain and PKCS#8 key, PEM, when the brokers ask for one), tls.protocols. tidemark certs "
            + "create writes one per client.")
    Path commandConfig;
    @Option(names = "--tls-ca", paramLabel = "FILE", description = "The CA bundle (PEM) the brokers' certificates "
            + "chain to: speak TLS (tls.ca.file).")
    Path tlsCa;
    @Option(names = "--tls-cert", paramLabel = "FILE", description = "This client's certificate chain, PEM "
            + "(tls.cert.file).")
    Path tlsCert;
    @Option(names = "--tls-key", paramLabel = "FILE", description = "This client's private key, PEM, PKCS#8 "
            + "(tls.key.file).")
    Path tlsKey;

    private Optional<TlsMaterial> tls;

    /** The options of a command that takes another cluster's bootstrap and client properties file than its own. */
    static ClientOptions of(String bootstrap, Path commandConfig) {
        ClientOptions options = new ClientOptions();
        options.bootstrap = bootstrap;
        options.commandConfig = commandConfig;
        return options;
    }

    /**
     * The TLS material the options name, loaded once (the command's process ends with it); empty for plain text.
     *
     * @throws TidemarkException INVALID_CONFIG naming the file or key that is wrong
     */
    synchronized Optional<TlsMaterial> tls() {
        if (tls == null) {
            Map<String, String> values = new HashMap<>(commandConfig(commandConfig, "--command-config"));
            put(values, TlsSettings.CA_FILE, tlsCa);
            put(values, TlsSettings.CERT_FILE, tlsCert);
            put(values, TlsSettings.KEY_FILE, tlsKey);
            tls = TlsMaterial.load(TlsSettings.fromProperties(values, commandConfig == null ? "the --tls-* flags"
                    : commandConfig + " and the --tls-* flags"));
        }
        return tls;
    }

    /**
     * The TLS settings of a client properties file given as {@code option} (the mirror's {@code
     * --source-command-config}, say); empty without a file or without tls.* keys in it.
     *
     * @throws TidemarkException INVALID_CONFIG naming the file and what is wrong in it
     */
    static Optional<TlsSettings> tlsSettings(Path file, String option) {
        return TlsSettings.fromProperties(commandConfig(file, option), option + " " + file);
    }

    /** The keys of a client properties file, all of them tls.* keys; none without a file. */
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
        unknown.removeAll(TlsSettings.KEYS);
        if (!unknown.isEmpty()) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIG, "unknown key(s) " + unknown + " in " + option + " "
                    + file + "; known keys: " + new TreeSet<>(TlsSettings.KEYS));
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

    /** An admin client's settings for {@code brokers} (other than {@code --bootstrap}), TLS as the options say. */
    AdminConfig.Builder adminConfig(String brokers) {
        AdminConfig.Builder config = AdminConfig.builder(brokers);
        tls().ifPresent(config::tls);
        return config;
    }

    ProducerConfig.Builder producerConfig() {
        ProducerConfig.Builder config = ProducerConfig.builder(bootstrap);
        tls().ifPresent(config::tls);
        return config;
    }

    ConsumerConfig.Builder consumerConfig() {
        ConsumerConfig.Builder config = ConsumerConfig.builder(bootstrap);
        tls().ifPresent(config::tls);
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
