package io.tidemark.cli;

import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.HostPort;
import io.tidemark.core.log.file.OpenFileBudget;
import io.tidemark.core.server.BrokerServer;
import io.tidemark.replication.cluster.ClusterMembers;
import io.tidemark.replication.cluster.ClusterNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

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
 */
@Command(name = "broker", mixinStandardHelpOptions = true,
        description = "Run a broker in the foreground, alone or as a member of a cluster (--cluster).")
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
                    + "the broker runs alone.")
    String cluster;

    @Override
    public Integer call() throws Exception {
        Path dir = dataDir != null ? dataDir
                : Path.of(System.getProperty("user.home"), ".tidemark", "data", "node-" + nodeId);
        Map<String, String> file = configFile == null ? Map.of() : BrokerConfig.readFile(configFile);
        BrokerConfig config = BrokerConfig.of(nodeId, dir, HostPort.parse("--listen", listen),
                Optional.ofNullable(metricsListen).map(m -> HostPort.parse("--metrics-listen", m)), file,
                configFile == null ? "the defaults" : configFile.toString());
        Clock clock = Clock.offset(Clock.systemUTC(), Duration.ofMillis(config.clockOffsetMs()));
        OpenFileBudget.apply(config.logOpenFilesMax());
        Node node = cluster == null ? new Single(BrokerServer.start(config, clock))
                : new Member(ClusterNode.start(config, ClusterMembers.parse(cluster), clock));
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

    /** A running broker, alone or in a cluster. */
    private interface Node extends AutoCloseable {
        int port();

        void awaitTermination() throws InterruptedException;
    }

    private record Single(BrokerServer server) implements Node {
        public int port() {
            return server.port();
        }

        public void awaitTermination() throws InterruptedException {
            server.awaitTermination();
        }

        public void close() throws Exception {
            server.close();
        }
    }

    private record Member(ClusterNode node) implements Node {
        public int port() {
            return node.port();
        }

        public void awaitTermination() throws InterruptedException {
            node.awaitTermination();
        }

        public void close() throws Exception {
            node.close();
        }
    }
}
