package io.tidemark.cli;

import io.tidemark.client.api.Retry;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TopicDescription;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code tidemark local up|down|status}: a cluster of broker processes on this machine ({@link LocalCluster}),
 * started in the background. {@code up} waits until the cluster answers and every partition has a leader, then
 * prints the bootstrap address. The brokers of a cluster started with {@code --name NAME} have {@code cluster.name}
 * NAME ({@link LocalCluster#writeBrokerConfig}), so a mirror between two local clusters needs no {@code --target-name}.
 */
@Command(name = "local", mixinStandardHelpOptions = true, description = "Run a cluster on this machine.",
        subcommands = {LocalCommand.Up.class, LocalCommand.Down.class, LocalCommand.Status.class})
final class LocalCommand {
    /** Longest {@code up} waits for the cluster to serve: brokers starting on two busy cores, then the elections. */
    private static final long START_TIMEOUT_MS = 120_000;
    /** Between checks of a starting cluster. */
    private static final long POLL_MS = 500;

    private LocalCommand() {
    }

    /** Which local cluster: its name and where its directory is. */
    static final class Which {
        @Option(names = "--name", defaultValue = LocalCluster.DEFAULT_NAME, description = "Cluster name, also its "
                + "brokers' cluster.name except for the default cluster (default: ${DEFAULT-VALUE}).")
        String name;
        @Option(names = "--data-dir", description = "Parent directory of local clusters (default: ~/.tidemark/local).")
        Path dataDir;

        Path dir() {
            Path parent = dataDir != null ? dataDir : Path.of(System.getProperty("user.home"), ".tidemark", "local");
            return parent.resolve(name);
        }

        LocalCluster existing() throws IOException {
            return LocalCluster.load(dir()).orElseThrow(() -> new IllegalArgumentException("no local cluster '"
                    + name + "' in " + dir() + "; start one with: tidemark local up --name " + name));
        }
    }

    @Command(name = "up", mixinStandardHelpOptions = true, description = {"Start the cluster's brokers in the background.",
            "JVM options for the brokers (heap, collector, agents) come from TIDEMARK_BROKER_JAVA_OPTS; unset, the "
                    + "brokers run with " + Up.DEFAULT_BROKER_JVM_OPTIONS + "."})
    static final class Up implements Callable<Integer> {
        static final String BROKER_JAVA_OPTS = "TIDEMARK_BROKER_JAVA_OPTS";
        /**
         * The brokers' JVM options when {@code TIDEMARK_BROKER_JAVA_OPTS} is unset: ZGC, whose pauses stay under a
         * millisecond, where G1's young pauses (Ratis holds recent entries' payloads in the heap, so most of what a
         * young collection finds is live and copied) reached 0.4 s and made leaders step down: over 10 minutes at
         * 4,000 records/s, 2 leaderships lost against 19, with the same CPU (docs/benchmarks.md, "The brokers'
         * garbage collector").
         */
        static final String DEFAULT_BROKER_JVM_OPTIONS = "-XX:+UseZGC -Xmx2g";
        @Spec
        CommandSpec spec;
        @picocli.CommandLine.Mixin
        Which which = new Which();
        @Option(names = "--nodes", defaultValue = "3", description = "Brokers (default: ${DEFAULT-VALUE}).")
        int nodes;
        @Option(names = "--base-port", defaultValue = "9400",
                description = "Client port of node 1; node N uses base + 10 (N - 1) (default: ${DEFAULT-VALUE}).")
        int basePort;
        @Option(names = "--config", description = "Broker config file every broker reads (docs/configuration.md); "
                + "a cluster.name in it must be --name, unless the cluster is the default one.")
        Path config;
        @Option(names = "--tls", description = "Run the brokers with TLS (mutual: clients show certificates too), "
                + "with certificates from a throwaway CA that tidemark certs create makes in the cluster's "
                + "certs/ directory when missing, for trying TLS out; prints the --command-config file for clients.")
        boolean tls;
        @Option(names = "--certs-dir", paramLabel = "DIR", description = "With --tls: take the certificates from DIR "
                + "(ca.pem, broker-N.pem and .key, admin.properties: the layout of tidemark certs create), making "
                + "those missing.")
        Path certsDir;
        /** Times the wait for the cluster to serve. */
        InstantSource clock = Clock.systemUTC();

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            Optional<LocalCluster> existing = LocalCluster.load(which.dir());
            if (certsDir != null && !tls) {
                throw new IllegalArgumentException("--certs-dir goes with --tls");
            }
            String certs = !tls ? "" : (certsDir != null ? certsDir : which.dir().resolve("certs")).toAbsolutePath()
                    .normalize().toString();
            LocalCluster cluster = existing.orElse(new LocalCluster(which.dir(), nodes, basePort,
                    config == null ? "" : config.toAbsolutePath().toString(), certs));
            if (existing.isEmpty() && (nodes < 1 || nodes > 9)) {
                throw new IllegalArgumentException("--nodes " + nodes + " is not allowed: 1 to 9");
            }
            if (tls && cluster.certsDir().isEmpty()) {
                throw new IllegalArgumentException("local cluster '" + which.name + "' in " + which.dir() + " runs in "
                        + "plain text, and a cluster keeps how it started: stop it (local down) and delete its "
                        + "directory to start it again with --tls");
            }
            if (!cluster.certsDir().isEmpty()) {
                makeCertificates(cluster, out);
            }
            Optional<Path> brokerConfig = cluster.writeBrokerConfig();
            if (existing.isEmpty()) {
                cluster.saveLayout();
            }
            for (int n = 1; n <= cluster.nodes(); n++) {
                if (cluster.process(n).isEmpty()) {
                    start(cluster, n, cluster.brokerConfig(n, brokerConfig));
                    out.printf("Started node %d (logs in %s)%n", n, cluster.logFile(n));
                }
            }
            out.flush();
            String clientOptions = "--bootstrap " + cluster.bootstrap() + cluster.clientConfig()
                    .map(file -> " --command-config " + file).orElse("");
            try (ClientOptions client = clientOptions(cluster)) {
                awaitReady(cluster, client);
            }
            out.println("Cluster '" + which.name + "' is up" + (cluster.certsDir().isEmpty() ? "" : ", TLS only")
                    + ". Bootstrap: " + cluster.bootstrap());
            cluster.clientConfig().ifPresent(file -> out.println("Clients: --command-config " + file + " (CA, "
                    + "certificate and key of client '" + LocalCluster.TLS_CLIENT + "')"));
            out.println("Try: ./tidemark topics create " + clientOptions + " --topic demo --partitions 3");
            return 0;
        }

        /** Makes the TLS cluster's certificates that are missing, as tidemark certs create does. */
        private static void makeCertificates(LocalCluster cluster, PrintWriter out) {
            StringWriter said = new StringWriter();
            int exit = new CommandLine(new CertsCommand.Create()).setOut(new PrintWriter(said))
                    .setErr(new PrintWriter(said)).execute("--dir", cluster.certsDir(), "--nodes",
                            Integer.toString(cluster.nodes()), "--clients", LocalCluster.TLS_CLIENT);
            if (exit != 0) {
                throw new IllegalStateException("making the certificates in " + cluster.certsDir() + " failed: "
                        + said);
            }
            said.toString().lines().filter(line -> line.startsWith("wrote")).forEach(out::println);
        }

        /** The tools' options for the cluster: its bootstrap, and its client's TLS settings when it has them. */
        private static ClientOptions clientOptions(LocalCluster cluster) {
            return ClientOptions.of(cluster.bootstrap(), cluster.clientConfig().orElse(null));
        }

        /**
         * JVM options for the brokers from {@code TIDEMARK_BROKER_JAVA_OPTS} (split on spaces), e.g. a heap size
         * or a profiler agent; {@link #DEFAULT_BROKER_JVM_OPTIONS} when it is unset, none when it is empty.
         */
        static List<String> brokerJvmOptions(Map<String, String> environment) {
            String options = environment.getOrDefault(BROKER_JAVA_OPTS, DEFAULT_BROKER_JVM_OPTIONS).strip();
            return options.isEmpty() ? List.of() : List.of(options.split("\\s+"));
        }

        private static void start(LocalCluster cluster, int node, Optional<Path> brokerConfig) throws IOException {
            Files.createDirectories(cluster.nodeDir(node));
            String java = ProcessHandle.current().info().command().orElse("java");
            String jar = new File(LocalCommand.class.getProtectionDomain().getCodeSource().getLocation().getPath())
                    .getPath();
            List<String> command = new ArrayList<>(List.of(java));
            command.addAll(brokerJvmOptions(System.getenv()));
            command.addAll(List.of("-jar", jar, "broker", "--node-id",
                    Integer.toString(node), "--data-dir", cluster.nodeDir(node).resolve("data").toString(), "--listen",
                    "127.0.0.1:" + cluster.clientPort(node), "--metrics-listen", "127.0.0.1:" + cluster.metricsPort(node),
                    "--cluster", cluster.members()));
            brokerConfig.ifPresent(file -> command.addAll(List.of("--config", file.toString())));
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(cluster.logFile(node).toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            Files.writeString(cluster.pidFile(node), Long.toString(process.pid()));
        }

        /**
         * Waits until the cluster answers and every partition, the internal topic's included, has a leader: retriable
         * failures (brokers starting, elections) are retried ({@link Retry}) for
         * {@value LocalCommand#START_TIMEOUT_MS} ms; a broker process that exits ends the wait at once.
         */
        private void awaitReady(LocalCluster cluster, ClientOptions client) {
            try (TidemarkAdmin admin = new TidemarkAdmin(client.adminConfig().requestTimeoutMs(5000).build())) {
                Retry.within(clock, START_TIMEOUT_MS, POLL_MS)
                        .onDeadline((last, attempts) -> new TidemarkException(last.code(), "the cluster did not become "
                                + "ready within " + START_TIMEOUT_MS / 1000 + " s (" + last.getMessage()
                                + "); see the logs in " + cluster.dir()))
                        .run(() -> requireReady(cluster, admin));
            }
        }

        /**
         * Throws NOT_AVAILABLE, naming what is missing, until every partition has a leader; IllegalStateException
         * when a broker process exited.
         */
        private static void requireReady(LocalCluster cluster, TidemarkAdmin admin) {
            for (int n = 1; n <= cluster.nodes(); n++) {
                if (running(cluster, n).isEmpty()) {
                    throw new IllegalStateException("node " + n + " exited; see " + cluster.logFile(n));
                }
            }
            List<String> names = admin.listTopics(true).stream().map(t -> t.getName()).toList();
            List<TopicDescription> topics;
            try {
                topics = admin.describeTopics(names);
            } catch (TidemarkException e) {
                if (e.code() != ErrorCode.UNKNOWN_TOPIC) {
                    throw e;
                }
                // the listing came from a broker that had applied a topic's creation, the description from one
                // that had not yet
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the brokers do not agree on the topics yet: "
                        + e.getMessage());
            }
            if (!names.contains("__group_offsets")) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "waiting for the internal topic __group_offsets");
            }
            if (!topics.stream().flatMap(t -> t.getPartitionsList().stream())
                    .allMatch(p -> p.getLeaderNodeId() > 0 && p.getLogEndOffset() >= 0)) {
                throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "waiting for every partition to have a leader");
            }
        }

        private static Optional<ProcessHandle> running(LocalCluster cluster, int node) {
            try {
                return cluster.process(node);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Command(name = "down", mixinStandardHelpOptions = true, description = "Stop the cluster's brokers (SIGTERM).")
    static final class Down implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @picocli.CommandLine.Mixin
        Which which = new Which();

        @Override
        public Integer call() throws Exception {
            LocalCluster cluster = which.existing();
            List<ProcessHandle> stopping = new ArrayList<>();
            for (int n = 1; n <= cluster.nodes(); n++) {
                cluster.process(n).ifPresent(p -> {
                    p.destroy();
                    stopping.add(p);
                });
            }
            for (ProcessHandle process : stopping) {
                try {
                    process.onExit().get(30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    process.destroyForcibly();
                }
            }
            for (int n = 1; n <= cluster.nodes(); n++) {
                Files.deleteIfExists(cluster.pidFile(n));
            }
            spec.commandLine().getOut().println("Stopped " + stopping.size() + " broker(s) of cluster '" + which.name
                    + "'; data kept in " + cluster.dir());
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Show which brokers run.")
    static final class Status implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @picocli.CommandLine.Mixin
        Which which = new Which();

        @Override
        public Integer call() throws Exception {
            LocalCluster cluster = which.existing();
            PrintWriter out = spec.commandLine().getOut();
            int up = 0;
            for (int n = 1; n <= cluster.nodes(); n++) {
                Optional<ProcessHandle> process = cluster.process(n);
                up += process.isPresent() ? 1 : 0;
                out.printf("node %d  %-4s  pid %-8s client 127.0.0.1:%d  metrics 127.0.0.1:%d  data %s%n", n,
                        process.isPresent() ? "up" : "down", process.map(p -> Long.toString(p.pid())).orElse("-"),
                        cluster.clientPort(n), cluster.metricsPort(n), cluster.nodeDir(n));
            }
            out.println("Bootstrap: " + cluster.bootstrap());
            return up == cluster.nodes() ? 0 : TidemarkCommand.USER_ERROR;
        }
    }
}
