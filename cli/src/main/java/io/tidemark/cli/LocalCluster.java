package io.tidemark.cli;

import io.tidemark.core.auth.AuthSettings;
import io.tidemark.core.auth.Principal;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.tls.TlsSettings;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A cluster of broker processes on this machine, kept in a directory: {@code node-N/} holds each broker's data,
 * its {@code broker.pid} and {@code broker.log}, and {@code cluster.properties} the layout. Node N (from 1)
 * serves clients on {@code basePort + 10 (N - 1)}, metrics on that + 1 and Raft on that + 5, so several named
 * clusters run side by side with different base ports. Every broker reads the same config file ({@link
 * #writeBrokerConfig}): the one given ({@code configFile}, empty for none), with {@code cluster.name} set to the local
 * cluster's name unless it is the default local cluster. A TLS cluster ({@code certsDir} names the certificates,
 * empty for plain text) gives each broker a file of its own with its certificate ({@link #brokerConfig}).
 */
record LocalCluster(Path dir, int nodes, int basePort, String configFile, String certsDir) {
    static final String LAYOUT_FILE = "cluster.properties";
    /** The local cluster of {@code local up} without {@code --name}; its brokers get no cluster.name from it. */
    static final String DEFAULT_NAME = "default";
    static final String BROKER_CONFIG_FILE = "broker.properties";
    /** The client whose certificate {@code local up --tls} makes, and whose --command-config file it prints. */
    static final String TLS_CLIENT = "admin";
    /** A certificate whose subject is only a common name maps to the principal of that name; any other to its DN. */
    static final String CN_MAPPING_RULES = "RULE:^CN=([^,]+)$/$1/,DEFAULT";

    /** The local cluster's name: its directory's. */
    String name() {
        return dir.getFileName().toString();
    }

    int clientPort(int node) {
        return basePort + 10 * (node - 1);
    }

    int metricsPort(int node) {
        return clientPort(node) + 1;
    }

    int raftPort(int node) {
        return clientPort(node) + 5;
    }

    Path nodeDir(int node) {
        return dir.resolve("node-" + node);
    }

    Path pidFile(int node) {
        return nodeDir(node).resolve("broker.pid");
    }

    Path logFile(int node) {
        return nodeDir(node).resolve("broker.log");
    }

    /** The --cluster value: every member, ID=HOST:CLIENT_PORT:RAFT_PORT. */
    String members() {
        List<String> members = new ArrayList<>();
        for (int n = 1; n <= nodes; n++) {
            members.add(n + "=127.0.0.1:" + clientPort(n) + ":" + raftPort(n));
        }
        return String.join(",", members);
    }

    String clientAddress(int node) {
        return "127.0.0.1:" + clientPort(node);
    }

    String bootstrap() {
        List<String> addresses = new ArrayList<>();
        for (int n = 1; n <= nodes; n++) {
            addresses.add(clientAddress(n));
        }
        return String.join(",", addresses);
    }

    /** The broker process of a node, when its pid file names a live process. */
    Optional<ProcessHandle> process(int node) throws IOException {
        Path pid = pidFile(node);
        if (!Files.exists(pid)) {
            return Optional.empty();
        }
        return ProcessHandle.of(Long.parseLong(Files.readString(pid).trim())).filter(ProcessHandle::isAlive);
    }

    /**
     * The config file every broker reads, when there is one. The default local cluster's brokers read the given file
     * as it is. Any other's read {@value #BROKER_CONFIG_FILE} in the cluster's directory, written here at each
     * {@code local up} (so edits of the given file count at the next start): the given file's keys and
     * {@code cluster.name} set to the local cluster's name, which the given file may set too, to the same name.
     *
     * @throws IllegalArgumentException when the name is not a cluster name, or the given file sets another
     */
    Optional<Path> writeBrokerConfig() throws IOException {
        Optional<Path> given = configFile.isEmpty() ? Optional.empty() : Optional.of(Path.of(configFile));
        if (name().equals(DEFAULT_NAME)) {
            return given;
        }
        if (!OriginPartition.isClusterName(name())) {
            throw new IllegalArgumentException("--name '" + name() + "' cannot name the cluster's brokers (their "
                    + BrokerConfig.CLUSTER_NAME.name() + "): use " + OriginPartition.CLUSTER_NAME_RULE);
        }
        Map<String, String> keys = given.isPresent() ? BrokerConfig.readFile(given.get()) : new TreeMap<>();
        String set = keys.get(BrokerConfig.CLUSTER_NAME.name());
        if (set != null && !set.equals(name())) {
            throw new IllegalArgumentException("--config " + configFile + " sets " + BrokerConfig.CLUSTER_NAME.name()
                    + "=" + set + ", but this local cluster is named '" + name() + "': remove it from the file, or "
                    + "name the cluster the same (--name " + set + ")");
        }
        Properties properties = new Properties();
        properties.putAll(keys);
        properties.setProperty(BrokerConfig.CLUSTER_NAME.name(), name());
        Path file = dir.resolve(BROKER_CONFIG_FILE);
        Files.createDirectories(dir);
        try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            properties.store(writer, "Written by tidemark local up" + given.map(g -> " from " + g + ", edit that "
                    + "file").orElse(""));
        }
        return Optional.of(file);
    }

    /**
     * The config file node {@code node} reads: {@link #writeBrokerConfig}'s, and for a TLS cluster a file of the
     * node's own in its directory, those keys and its certificate's ({@code broker-N.pem}, {@code broker-N.key} and
     * {@code ca.pem} in {@code certsDir}); unless the keys set them, principals are certificates' common names
     * ({@link #CN_MAPPING_RULES}) and {@code User:admin}, the client whose certificate it makes, is the super user.
     */
    Optional<Path> brokerConfig(int node, Optional<Path> shared) throws IOException {
        if (certsDir.isEmpty()) {
            return shared;
        }
        Properties properties = new Properties();
        if (shared.isPresent()) {
            properties.putAll(BrokerConfig.readFile(shared.get()));
        }
        Path certs = Path.of(certsDir);
        properties.setProperty(TlsSettings.CA_FILE, certs.resolve("ca.pem").toString());
        properties.setProperty(TlsSettings.CERT_FILE, certs.resolve("broker-" + node + ".pem").toString());
        properties.setProperty(TlsSettings.KEY_FILE, certs.resolve("broker-" + node + ".key").toString());
        properties.putIfAbsent(AuthSettings.MAPPING_RULES, CN_MAPPING_RULES);
        properties.putIfAbsent(AuthSettings.SUPER_USERS, Principal.user(TLS_CLIENT).toString());
        Path file = nodeDir(node).resolve(BROKER_CONFIG_FILE);
        Files.createDirectories(nodeDir(node));
        try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            properties.store(writer, "Written by tidemark local up: the cluster's keys and this node's certificate");
        }
        return Optional.of(file);
    }

    /** The --command-config file of the TLS cluster's client; empty for a plain-text cluster. */
    Optional<Path> clientConfig() {
        return certsDir.isEmpty() ? Optional.empty() : Optional.of(Path.of(certsDir, TLS_CLIENT + ".properties"));
    }

    void saveLayout() throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(LAYOUT_FILE), "nodes=" + nodes + "\nbase.port=" + basePort + "\nconfig="
                + configFile + "\ncerts=" + certsDir + "\n");
    }

    /** The layout saved by {@code local up}, or empty when this directory holds no local cluster. */
    static Optional<LocalCluster> load(Path dir) throws IOException {
        Path file = dir.resolve(LAYOUT_FILE);
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        var values = Files.readAllLines(file).stream().filter(l -> l.contains("="))
                .collect(Collectors.toMap(l -> l.substring(0, l.indexOf('=')), l -> l.substring(l.indexOf('=') + 1)));
        return Optional.of(new LocalCluster(dir, Integer.parseInt(values.get("nodes")),
                Integer.parseInt(values.get("base.port")), values.getOrDefault("config", ""),
                values.getOrDefault("certs", "")));
    }
}
