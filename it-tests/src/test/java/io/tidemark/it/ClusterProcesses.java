package io.tidemark.it;

import io.grpc.ManagedChannel;
import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.TidemarkException;
import org.awaitility.core.ConditionTimeoutException;

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
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.awaitility.Awaitility.await;

/**
 * Three {@code tidemark broker --cluster} processes on 127.0.0.1, each with its own config file (for example a
 * skewed clock), for chaos tests: SIGKILL, SIGSTOP and SIGCONT of one node. Logs go to {@code node-N.log}; each
 * serves its metrics on its client port + 1.
 *
 * <p>{@link #throughLinks} starts the brokers so that they reach each other only through {@link NetworkLinks}
 * (partitions: {@link #links()}), while the clients it makes ({@link #admin()}, {@link #channels()}) connect
 * straight to the brokers.
 */
final class ClusterProcesses implements Closeable {
    /** Lines of each broker's log a failure to start shows. */
    private static final int LOG_TAIL_LINES = 60;
    private final Path dir;
    private final int basePort;
    private final Map<Integer, Process> processes = new HashMap<>();
    private final Optional<NetworkLinks> links;

    ClusterProcesses(Path dir, Map<Integer, String> configs) throws IOException {
        this(dir, configs, false);
    }

    private ClusterProcesses(Path dir, Map<Integer, String> configs, boolean throughLinks) throws IOException {
        this.dir = dir;
        this.basePort = FreePorts.freeBasePort();
        this.links = throughLinks ? Optional.of(NetworkLinks.open(ports())) : Optional.empty();
        try {
            for (int node = 1; node <= 3; node++) {
                Files.writeString(config(node), configs.getOrDefault(node, ""));
                start(node);
            }
            awaitReady();
        } catch (IOException | RuntimeException | AssertionError e) {
            close();
            throw e;
        }
    }

    /**
     * Three brokers whose traffic to each other goes through {@link NetworkLinks}, one proxy per directed link and
     * port, all healed at the start. The brokers are not meant to be restarted ({@link NetworkLinks} says why).
     */
    static ClusterProcesses throughLinks(Path dir, Map<Integer, String> configs) throws IOException {
        return new ClusterProcesses(dir, configs, true);
    }

    /** The links between the brokers, to cut and heal; only for a cluster started {@link #throughLinks}. */
    NetworkLinks links() {
        return links.orElseThrow(() -> new IllegalStateException("the brokers were not started through links"));
    }

    /**
     * The channel factory clients of this cluster need: straight to the brokers when they advertise their link
     * proxies' addresses, else gRPC's plaintext netty channel.
     */
    Function<String, ManagedChannel> channels() {
        return links.map(NetworkLinks::directChannels).orElse(address -> io.grpc.netty.shaded.io.grpc.netty
                .NettyChannelBuilder.forTarget(address).usePlaintext().maxInboundMessageSize(64 << 20).build());
    }

    private Map<Integer, NetworkLinks.Ports> ports() {
        Map<Integer, NetworkLinks.Ports> ports = new HashMap<>();
        for (int node = 1; node <= 3; node++) {
            ports.put(node, new NetworkLinks.Ports(clientPort(node), raftPort(node)));
        }
        return ports;
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

    private int raftPort(int node) {
        return clientPort(node) + 5;
    }

    /** The {@code --cluster} list {@code node} starts with. */
    private String members(int node) {
        if (links.isPresent()) {
            return links.get().membersSeenBy(node);
        }
        List<String> members = new ArrayList<>();
        for (int member = 1; member <= 3; member++) {
            members.add(member + "=127.0.0.1:" + clientPort(member) + ":" + raftPort(member));
        }
        return String.join(",", members);
    }

    void start(int node) throws IOException {
        List<String> command = Tidemark.command("broker", "--node-id", Integer.toString(node), "--data-dir",
                dataDir(node).toString(), "--listen", "127.0.0.1:" + clientPort(node), "--cluster",
                members(node), "--config", config(node).toString(), "--metrics-listen",
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

    /**
     * The elections a broker's Raft groups started, all groups summed: Ratis' {@code electionCount} of each group,
     * from the broker's /metrics ({@code ratis_leader_election_<server>_group_<id>_electionCount_total}).
     */
    long elections(int node) throws IOException, InterruptedException {
        return metrics(node).lines().filter(line -> line.startsWith("ratis_leader_election_")
                && line.contains("_electionCount_total ")).mapToLong(line ->
                (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
    }

    /** Waits until the cluster answers and its internal topic has a leader. */
    void awaitReady() {
        try (TidemarkAdmin admin = admin()) {
            await().atMost(Duration.ofSeconds(90)).ignoreException(TidemarkException.class).until(() ->
                    admin.describeTopics(List.of("__group_offsets")).get(0).getPartitions(0).getLeaderNodeId() > 0);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("the cluster did not lead __group_offsets within 90 s; the brokers' logs, whole, "
                    + "are in " + keepLogs() + "; they end:\n" + logTails(), e);
        }
    }

    /**
     * Copies the brokers' logs under {@code target/failed-clusters/} (the test's directory is deleted with it), so a
     * failure that needs their history can be read after the run; says where they went.
     */
    private String keepLogs() {
        Path kept = Path.of("target", "failed-clusters", dir.getFileName().toString()).toAbsolutePath();
        try {
            Files.createDirectories(kept);
            for (int node : processes.keySet()) {
                Path log = dir.resolve("node-" + node + ".log");
                if (Files.exists(log)) {
                    Files.copy(log, kept.resolve(log.getFileName()));
                }
            }
        } catch (IOException e) {
            return "nowhere (copying them failed: " + e + ")";
        }
        return kept.toString();
    }

    /** The last lines of each broker's log (the directory goes with the test), for a failure's message. */
    private String logTails() {
        StringBuilder tails = new StringBuilder();
        for (int node : processes.keySet()) {
            Path log = dir.resolve("node-" + node + ".log");
            try {
                List<String> lines = Files.readAllLines(log);
                tails.append("--- node ").append(node).append(" (").append(lines.size()).append(" lines) ---\n");
                lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size())
                        .forEach(line -> tails.append(line).append('\n'));
            } catch (IOException e) {
                tails.append("--- node ").append(node).append(": ").append(e).append('\n');
            }
        }
        return tails.toString();
    }

    /** An admin client with a short deadline, so a paused broker does not hold calls up. */
    TidemarkAdmin admin() {
        return admin(bootstrap());
    }

    /** An admin client that asks only broker {@code node}: its own view of the cluster. */
    TidemarkAdmin admin(int node) {
        return admin("127.0.0.1:" + clientPort(node));
    }

    private TidemarkAdmin admin(String bootstrap) {
        AdminConfig.Builder config = AdminConfig.builder(bootstrap).requestTimeoutMs(3000);
        links.ifPresent(network -> config.channelFactory(network.directChannels()));
        return new TidemarkAdmin(config.build());
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

    /** Heals every link first (brokers stop cleanly when they reach each other), then stops the brokers. */
    @Override
    public void close() {
        try {
            links.ifPresent(NetworkLinks::healAll);
        } catch (IllegalStateException e) {
            System.err.println("links not healed before stopping the brokers: " + e.getMessage());
        }
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
        links.ifPresent(NetworkLinks::close);
    }
}
