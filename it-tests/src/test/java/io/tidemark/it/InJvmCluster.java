package io.tidemark.it;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.HostPort;
import io.tidemark.replication.cluster.ClusterMembers;
import io.tidemark.replication.cluster.ClusterNode;
import org.awaitility.core.ConditionTimeoutException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;

/**
 * Cluster nodes in this JVM on 127.0.0.1 (ports from {@link FreePorts}), every one with the same broker settings,
 * data under {@code dir/node-N}; tests stop and start them one by one.
 */
final class InJvmCluster implements AutoCloseable {
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);
    private final Path dir;
    private final Map<String, String> settings;
    private final ClusterMembers members;
    private final Map<Integer, ClusterNode> nodes = new HashMap<>();

    private InJvmCluster(Path dir, Map<String, String> settings, ClusterMembers members) {
        this.dir = dir;
        this.settings = Map.copyOf(settings);
        this.members = members;
    }

    /** Starts nodes 1 to {@code size}. */
    static InJvmCluster start(Path dir, int size, Map<String, String> settings) throws IOException {
        if (size > 3) {
            throw new IllegalArgumentException("FreePorts finds ports for 3 nodes, not " + size);
        }
        int basePort = FreePorts.freeBasePort();
        List<String> spec = new ArrayList<>();
        for (int id = 1; id <= size; id++) {
            int clientPort = basePort + 10 * (id - 1);
            spec.add(id + "=127.0.0.1:" + clientPort + ":" + (clientPort + 5));
        }
        InJvmCluster cluster = new InJvmCluster(dir, settings, ClusterMembers.parse(String.join(",", spec)));
        for (int id = 1; id <= size; id++) {
            cluster.start(id);
        }
        return cluster;
    }

    /** Starts node {@code id} (again), on its data directory. */
    void start(int id) throws IOException {
        BrokerConfig config = BrokerConfig.of(id, dataDir(id), new HostPort("127.0.0.1",
                members.member(id).clientPort()), Optional.empty(), settings, "test");
        nodes.put(id, ClusterNode.start(config, members, Clock.systemUTC()));
    }

    /**
     * Stops node {@code id} the way a broker shuts down, and waits (at most {@link #STOP_WAIT}) until no thread of its
     * Raft server is left: a replica that Ratis closed on its own (an apply that threw) may still be closing after the
     * server's close returned, cutting its open Raft log segment, and the node started again in this JVM would read
     * that file while it changes (a process that exits has no such tail).
     */
    void stop(int id) throws IOException {
        nodes.remove(id).close();
        String prefix = "n" + id + "@";
        try {
            await().atMost(STOP_WAIT).pollInterval(Duration.ofMillis(50)).until(() -> Thread.getAllStackTraces()
                    .keySet().stream().noneMatch(thread -> thread.isAlive() && thread.getName().startsWith(prefix)));
        } catch (ConditionTimeoutException e) {
            System.out.println("node " + id + " still has Raft threads " + STOP_WAIT + " after its close");
        }
    }

    /** Node {@code id}'s metrics. */
    MetricRegistry metrics(int id) {
        return nodes.get(id).metrics();
    }

    Path dataDir(int id) {
        return dir.resolve("node-" + id);
    }

    /** Whether the Raft log in a group's directory (under {@code dataDir(node)/raft/}) still holds index 0. */
    static boolean raftLogStartsAtZero(Path groupDir) throws IOException {
        try (Stream<Path> files = Files.list(groupDir.resolve("current"))) {
            return files.map(f -> f.getFileName().toString())
                    .anyMatch(name -> name.startsWith("log_0-") || name.equals("log_inprogress_0"));
        }
    }

    String clientAddress(int id) {
        return members.member(id).clientAddress();
    }

    String bootstrap() {
        return members.all().stream().map(ClusterMembers.Member::clientAddress).collect(Collectors.joining(","));
    }

    /** Stops every running node. */
    @Override
    public void close() throws IOException {
        for (int id : List.copyOf(nodes.keySet())) {
            stop(id);
        }
    }
}
