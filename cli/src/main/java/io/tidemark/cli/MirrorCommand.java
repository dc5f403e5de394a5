package io.tidemark.cli;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.core.config.HostPort;
import io.tidemark.core.metrics.MetricsEndpoint;
import io.tidemark.mirror.Mirror;
import io.tidemark.mirror.MirrorConfig;
import io.tidemark.mirror.status.MirrorStatus;
import io.tidemark.mirror.status.MirrorStatusFormat;
import io.tidemark.mirror.status.MirrorStatusReader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * {@code tidemark mirror}: copies topics from a source cluster to a target cluster in the foreground, until SIGTERM
 * or Ctrl-C ({@link Mirror}), or until a source that was silent at start answers with another name than
 * {@code --source-name} (exit 1, the error on stderr). One line on stdout says it runs (and where its metrics are);
 * logs go to stderr. Several mirrors may run into one target, from different sources.
 *
 * <p>{@code tidemark mirror status} ({@link Status}) shows what the mirrors writing into a target report. Picocli
 * checks a parent command's required options also when a subcommand runs, so the mirror's required options are
 * checked by {@link #call} instead, as a usage error (exit 2) like picocli's own.
 */
@Command(name = "mirror", mixinStandardHelpOptions = true, description = {
        "Copy topics from a source cluster to a target cluster, exactly once, keeping SendTime and adding provenance;"
                + " checkpoint consumer groups and record liveness on the target. Runs in the foreground.",
        "Example: tidemark mirror --source 127.0.0.1:9400 --source-name A --target 127.0.0.1:9500"},
        customSynopsis = {
                "tidemark mirror --source HOST:PORT[,...] --source-name NAME --target HOST:PORT[,...] [OPTIONS]",
                "tidemark mirror status --target HOST:PORT[,...] [--source-name NAME] [--output text|json]"},
        subcommands = MirrorCommand.Status.class)
final class MirrorCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--source", paramLabel = "HOST:PORT[,...]", description = "The source cluster (required).")
    String source;

    @Option(names = "--source-name",
            description = "The source cluster's name, written into every copy's provenance (a-z A-Z 0-9 . _ -); "
                    + "refused when the source has another cluster.name (required).")
    String sourceName;

    @Option(names = "--target", paramLabel = "HOST:PORT[,...]", description = "The target cluster (required).")
    String target;

    @Option(names = "--source-command-config", paramLabel = "FILE", description = "How to reach the source in TLS: "
            + "a client properties file as the tools' --command-config (tls.ca.file, tls.cert.file, tls.key.file).")
    Path sourceCommandConfig;

    @Option(names = "--target-command-config", paramLabel = "FILE",
            description = "How to reach the target in TLS, as --source-command-config.")
    Path targetCommandConfig;

    @Mixin
    TlsFlagOptions.Source sourceTls;
    @Mixin
    TlsFlagOptions.Target targetTls;
    @Option(names = "--target-name",
            description = "The target cluster's name: records that crossed it are never copied into it (loops). "
                    + "Default: the target's cluster.name; needed for a target without one, refused when it differs.")
    String targetName;

    @Option(names = "--topics", defaultValue = MirrorConfig.ALL,
            description = "Regular expression of the source topics to copy, matched on the whole name; new ones are "
                    + "picked up while running (default: ${DEFAULT-VALUE}).")
    String topics;

    @Option(names = "--groups", defaultValue = MirrorConfig.ALL,
            description = "Regular expression of the source consumer groups to checkpoint (default: ${DEFAULT-VALUE}).")
    String groups;

    @Option(names = "--topic-prefix", defaultValue = "",
            description = "Prefix of the target topics' names (default: the source topic's name).")
    String topicPrefix;

    @Option(names = "--metrics-listen", paramLabel = "HOST:PORT", description = "Serve Prometheus metrics at /metrics.")
    String metricsListen;

    @Option(names = "--checkpoint-interval-ms", defaultValue = "5000",
            description = "checkpoint.interval: how often group offsets are checkpointed (default: ${DEFAULT-VALUE}).")
    long checkpointIntervalMs;

    @Option(names = "--heartbeat-interval-ms", defaultValue = "1000",
            description = "How often the mirror records on the target that it heard from the source "
                    + "(default: ${DEFAULT-VALUE}).")
    long heartbeatIntervalMs;

    @Option(names = "--discovery-interval-ms", defaultValue = "5000",
            description = "How often the source's topics are listed to pick up new ones (default: ${DEFAULT-VALUE}).")
    long discoveryIntervalMs;

    @Option(names = "--max-bytes-per-second", defaultValue = "0", paramLabel = "BYTES",
            description = "Most bytes of records read from the source per second, on average (a link the mirror must "
                    + "not fill); 0 for no limit (default: ${DEFAULT-VALUE}).")
    long maxBytesPerSecond;

    @Option(names = "--dead-letter-topic", paramLabel = "NAME",
            description = "Target topic for records the target refuses (too large, SendTime outside its window, "
                    + "corrupt), with headers naming the error; created when absent. Default: none, and a partition "
                    + "with such a record stops (tidemark mirror status shows why) until the mirror restarts.")
    String deadLetterTopic;

    @Override
    public Integer call() throws Exception {
        List<String> missing = new ArrayList<>();
        for (OptionSpec option : List.of(spec.findOption("--source"), spec.findOption("--source-name"),
                spec.findOption("--target"))) {
            if (option.getValue() == null) {
                missing.add("'" + option.longestName() + "'");
            }
        }
        if (!missing.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "Missing required option" + (missing.size() > 1 ? "s" : "")
                    + ": " + String.join(", ", missing));
        }
        MirrorConfig config = MirrorConfig.of(source, sourceName, target, Optional.ofNullable(targetName), topics,
                groups, topicPrefix).withIntervals(checkpointIntervalMs, heartbeatIntervalMs, discoveryIntervalMs)
                .withMaxBytesPerSecond(maxBytesPerSecond).withDeadLetterTopic(Optional.ofNullable(deadLetterTopic))
                .withTls(ClientOptions.tlsSettings(sourceCommandConfig, "--source-command-config", sourceTls.flags()),
                        ClientOptions.tlsSettings(targetCommandConfig, "--target-command-config", targetTls.flags()));
        MetricRegistry registry = new MetricRegistry();
        Optional<HostPort> listen = Optional.ofNullable(metricsListen).map(m -> HostPort.parse("--metrics-listen", m));
        MetricsEndpoint endpoint = MetricsEndpoint.start(List.of(registry), listen, Optional.empty());
        Mirror mirror = Mirror.start(config, registry, Clock.systemUTC());
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            mirror.close();
            endpoint.close();
            stopped.complete(null);
        }, "tidemark-mirror-shutdown"));
        spec.commandLine().getOut().printf("Tidemark mirror %s -> %s running%s%n", mirror.names().source(),
                mirror.names().target(), endpoint.httpPort().map(p -> ", metrics on http://" + listen.get().host()
                        + ":" + p + "/metrics").orElse(""));
        spec.commandLine().getOut().flush();
        try {
            CompletableFuture.anyOf(stopped, mirror.failure()).join();
        } catch (CompletionException e) {
            throw (RuntimeException) e.getCause();
        }
        return 0;
    }

    /**
     * {@code tidemark mirror status}: per source cluster writing into the target, when its mirror's last heartbeat
     * was and when it last heard from its source, and per copied partition its state, records behind, last copy and
     * why it stopped ({@link MirrorStatusReader}, printed by {@link MirrorStatusFormat}).
     */
    @Command(name = "status", mixinStandardHelpOptions = true, description = {
            "Show what the mirrors writing into a target report: per source, the last heartbeat and when the mirror "
                    + "last heard from its source; per partition, copying, resynchronising or stopped (and why), "
                    + "records behind, the last copy.",
            "Example: tidemark mirror status --target 127.0.0.1:9500 --source-name A"})
    static final class Status implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Option(names = "--target", required = true, paramLabel = "HOST:PORT[,...]",
                description = "The target cluster the mirrors write into.")
        String target;
        @Option(names = "--source-name", description = "Only the mirror from this source cluster (default: every "
                + "mirror writing into the target).")
        String sourceName;
        @Option(names = "--target-command-config", paramLabel = "FILE",
                description = "How to reach the target in TLS: a client properties file as the tools' --command-config.")
        Path targetCommandConfig;
        @Mixin
        TlsFlagOptions.Target targetTls;
        @Option(names = "--output", defaultValue = "text", description = "text, or json: one object per source a "
                + "line.")
        OutputFormat output;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (ClientOptions client = ClientOptions.of(target, targetCommandConfig, targetTls.flags());
                 TidemarkAdmin admin = client.admin()) {
                MirrorStatus status = new MirrorStatusReader(admin).read(Optional.ofNullable(sourceName));
                out.print(output == OutputFormat.json ? MirrorStatusFormat.json(status)
                        : MirrorStatusFormat.text(status));
                out.flush();
            }
            return 0;
        }
    }
}
