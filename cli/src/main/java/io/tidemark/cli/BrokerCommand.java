package io.tidemark.cli;

import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.HostPort;
import io.tidemark.core.log.file.OpenFileBudget;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.replication.cluster.ClusterMembers;
import io.tidemark.replication.cluster.ClusterNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code tidemark broker}: runs a broker in the foreground. Logs go to stderr; one line on stdout says where it
 * listens (scripts read the port from it when the listen port is 0). SIGTERM or Ctrl-C stops it cleanly:
 * requests under way finish, every log is fsynced and marked clean.
 *
 * <p>A broker without {@code --cluster} is a cluster of one: the same code, Raft groups of one member (its Raft port
 * only carries its own clients' calls to its groups).
 */
@Command(name = "broker", mixinStandardHelpOptions = true,
        description = "Run a broker in the foreground, alone (a cluster of one) or as a member of a cluster "
                + "(--cluster).")
final class BrokerCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--node-id", defaultValue = "1", description = "This broker's node id (default: ${DEFAULT-VALUE}).")
    int nodeId;

    @Option(names = "--data-dir", description = "Where the logs go (default: ~/.tidemark/data/node-ID).")
    Path dataDir;

    @Option(names = "--listen", defaultValue = "127.0.0.1:9400",
            description = "HOST:PORT clients connect to; port 0 picks a free one (default: ${DEFAULT-VALUE}).")
    String listen;

    @Option(names = "--metrics-listen", description = "HOST:PORT to serve Prometheus metrics at /metrics.")
    String metricsListen;

    @Option(names = "--config", description = "Config file (key=value lines): broker keys and topic defaults; "
            + "see docs/configuration.md.")
    Path configFile;

    @Option(names = "--cluster", paramLabel = "ID=HOST:CLIENT_PORT:RAFT_PORT,...",
            description = "Run as a member of this cluster (every member listed, this node included); without it "
                    + "the broker runs alone, a cluster of one.")
    String cluster;

    @Option(names = "--raft-port", description = "Alone: the port of this broker's Raft server, on the --listen "
            + "host (default: the listen port + 100, or a free port when the listen port is 0). With --cluster the "
            + "cluster's list says it.")
    Integer raftPort;

    @Override
    public Integer call() throws Exception {
        Path dir = dataDir != null ? dataDir
                : Path.of(System.getProperty("user.home"), ".tidemark", "data", "node-" + nodeId);
        Map<String, String> file = configFile == null ? Map.of() : BrokerConfig.readFile(configFile);
        HostPort listenAt = HostPort.parse("--listen", listen);
        ClusterMembers members;
        if (cluster == null) {
            int raft = raftPort(listenAt);
            listenAt = new HostPort(listenAt.host(), listenAt.port() == 0 ? FreePort.pick(listenAt.host())
                    : listenAt.port());
            members = ClusterMembers.of(nodeId, listenAt.host(), listenAt.port(), raft);
        } else {
            if (raftPort != null) {
                throw new TidemarkException(ErrorCode.INVALID_REQUEST, "--raft-port is for a broker that runs alone; "
                        + "with --cluster the cluster's list names each member's Raft port");
            }
            members = ClusterMembers.parse(cluster);
        }
        BrokerConfig config = BrokerConfig.of(nodeId, dir, listenAt,
                Optional.ofNullable(metricsListen).map(m -> HostPort.parse("--metrics-listen", m)), file,
                configFile == null ? "the defaults" : configFile.toString());
        Clock clock = Clock.offset(Clock.systemUTC(), Duration.ofMillis(config.clockOffsetMs()));
        OpenFileBudget.apply(config.logOpenFilesMax());
        ClusterNode node = ClusterNode.start(config, members, clock);
        Thread stopper = new Thread(() -> {
            try {
                node.close();
            } catch (Exception e) {
                System.err.println("error: stopping the broker failed: " + e);
            }
        }, "tidemark-shutdown");
        Runtime.getRuntime().addShutdownHook(stopper);
        spec.commandLine().getOut().printf("Tidemark broker node %d listening on %s:%d, data in %s%n", nodeId,
                config.listen().host(), node.port(), dir);
        spec.commandLine().getOut().flush();
        node.awaitTermination();
        return 0;
    }

    /** The Raft port of a broker that runs alone: --raft-port, else the listen port + 100 (0 for 0: a free one). */
    private int raftPort(HostPort listenAt) throws IOException {
        int port = raftPort != null ? raftPort : listenAt.port() == 0 ? 0 : listenAt.port() + 100;
        if (port < 0 || port > 65_535) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, (raftPort != null ? "--raft-port " + raftPort
                    : "the default Raft port, the listen port " + listenAt.port() + " + 100,") + " is not a port; "
                    + "allowed: 0 (a free port) to 65535");
        }
        return port == 0 ? FreePort.pick(listenAt.host()) : port;
    }
}
