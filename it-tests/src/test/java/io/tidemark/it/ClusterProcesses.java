package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.TidemarkException;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * Three {@code tidemark broker --cluster} processes on 127.0.0.1, each with its own config file (for example a
 * skewed clock), for chaos tests: SIGKILL, SIGSTOP and SIGCONT of one node. Logs go to {@code node-N.log}; each
 * serves its metrics on its client port + 1.
 */
final class ClusterProcesses implements Closeable {
    private final Path dir;
    private final int basePort;
    private final Map<Integer, Process> processes = new HashMap<>();

    ClusterProcesses(Path dir, Map<Integer, String> configs) throws IOException {
        this.dir = dir;
        this.basePort = FreePorts.freeBasePort();
        for (int node = 1; node <= 3; node++) {
            Files.writeString(config(node), configs.getOrDefault(node, ""));
            start(node);
        }
        awaitReady();
    }

    private Path config(int node) {
        return dir.resolve("node-" + node + ".properties");
    }

    /** The broker's data directory. */
    Path dataDir(int node) {
        return dir.resolve("node-" + node);
    }

    int clientPort(int node) {
        return basePort + 10 * (node - 1);
    }

    String bootstrap() {
        return "127.0.0.1:" + clientPort(1) + ",127.0.0.1:" + clientPort(2) + ",127.0.0.1:" + clientPort(3);
    }

    private String members() {
        List<String> members = new ArrayList<>();
        for (int node = 1; node <= 3; node++) {
            members.add(node + "=127.0.0.1:" + clientPort(node) + ":" + (clientPort(node) + 5));
        }
        return String.join(",", members);
    }

    void start(int node) throws IOException {
        List<String> command = Tidemark.command("broker", "--node-id", Integer.toString(node), "--data-dir",
                dataDir(node).toString(), "--listen", "127.0.0.1:" + clientPort(node), "--cluster",
                members(), "--config", config(node).toString(), "--metrics-listen",
                "127.0.0.1:" + (clientPort(node) + 1));
        processes.put(node, new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("node-" + node + ".log").toFile()))
                .start());
    }

    /** The Prometheus text a broker serves at /metrics (on its client port + 1). */
    String metrics(int node) throws IOException, InterruptedException {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + (clientPort(node) + 1) + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("/metrics of node " + node + " answered " + response.statusCode());
        }
        return response.body();
    }

    /** Waits until the cluster answers and its internal topic has a leader. */
    void awaitReady() {
        try (TidemarkAdmin admin = admin()) {
            await().atMost(Duration.ofSeconds(90)).ignoreException(TidemarkException.class).until(() ->
                    admin.describeTopics(List.of("__group_offsets")).get(0).getPartitions(0).getLeaderNodeId() > 0);
        }
    }

    /** An admin client with a short deadline, so a paused broker does not hold calls up. */
    TidemarkAdmin admin() {
        return new TidemarkAdmin(AdminConfig.builder(bootstrap()).requestTimeoutMs(3000).build());
    }

    void kill(int node) throws InterruptedException {
        Process process = processes.get(node);
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    void signal(int node, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(processes.get(node).pid())).start();
        kill.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        for (Process process : processes.values()) {
            process.destroy();
        }
        for (Process process : processes.values()) {
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
