package io.tidemark.cli;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code tidemark partitions reassign}: move a partition to other brokers, keeping its data. */
@Command(name = "partitions", mixinStandardHelpOptions = true, description = "Move partitions between brokers.",
        subcommands = PartitionsCommand.Reassign.class)
final class PartitionsCommand {
    private PartitionsCommand() {
    }

    @Command(name = "reassign", mixinStandardHelpOptions = true,
            description = "Give a partition another set of replicas, keeping its data: the new replicas join and "
                    + "catch up, then the replicas left out leave and delete their copy. Waits until done; if it "
                    + "stops half-way, run it again with the same replicas to finish.")
    static final class Reassign implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", required = true)
        String topic;
        @Option(names = "--partition", required = true)
        int partition;
        @Option(names = "--replicas", required = true, split = ",", paramLabel = "NODE",
                description = "Node ids of the brokers to hold the partition, the preferred leader first, e.g. 1,2,4.")
        List<Integer> replicas;
        @Option(names = "--timeout", defaultValue = "60s",
                description = "How long to wait for the move (default: ${DEFAULT-VALUE}).")
        String timeout;

        @Override
        public Integer call() {
            long timeoutMs = TimeArguments.parseDuration("--timeout", timeout).toMillis();
            try (TidemarkAdmin admin = client.admin()) {
                List<Integer> now = admin.reassignPartition(new TopicPartition(topic, partition), replicas, timeoutMs);
                spec.commandLine().getOut().printf("%s-%d is now on replicas %s%n", topic, partition, now);
            }
            return 0;
        }
    }
}
