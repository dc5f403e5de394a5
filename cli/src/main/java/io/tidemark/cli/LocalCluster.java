package io.tidemark.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A cluster of broker processes on this machine, kept in a directory: {@code node-N/} holds each broker's data,
 * its {@code broker.pid} and {@code broker.log}, and {@code cluster.properties} the layout. Node N (from 1)
 * serves clients on {@code basePort + 10 (N - 1)}, metrics on that + 1 and Raft on that + 5, so several named
 * clusters run side by side with different base ports. Every broker reads the same config file when one was given
 * ({@code configFile}, empty for none).
 */
record LocalCluster(Path dir, int nodes, int basePort, String configFile) {
    static final String LAYOUT_FILE = "cluster.properties";

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

    void saveLayout() throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(LAYOUT_FILE), "nodes=" + nodes + "\nbase.port=" + basePort + "\nconfig="
                + configFile + "\n");
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
                Integer.parseInt(values.get("base.port")), values.getOrDefault("config", "")));
    }
}
