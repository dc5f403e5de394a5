package io.tidemark.cli;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.v1.TransferLeadershipResponse;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code tidemark leader transfer}: planned leadership migration of one partition. */
@Command(name = "leader", mixinStandardHelpOptions = true, description = "Move partition leadership.",
        subcommands = LeaderCommand.Transfer.class)
final class LeaderCommand {
    private LeaderCommand() {
    }

    @Command(name = "transfer", mixinStandardHelpOptions = true,
            description = {"Move a partition's leadership to another of its replicas and wait until it moved.",
                    "With leader.balance.enabled (the default), a move away from the preferred replica (the first) "
                            + "lasts until the next balance pass while that replica is up: move leaders off a broker "
                            + "right before stopping it."})
    static final class Transfer implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", required = true)
        String topic;
        @Option(names = "--partition", required = true)
        int partition;
        @Option(names = "--to", required = true, description = "Node id of the replica that is to lead.")
        int toNodeId;
        @Option(names = "--timeout", defaultValue = "10s", description = "How long to wait (default: ${DEFAULT-VALUE}).")
        String timeout;

        @Override
        public Integer call() {
            long timeoutMs = TimeArguments.parseDuration("--timeout", timeout).toMillis();
            try (TidemarkAdmin admin = client.admin()) {
                TransferLeadershipResponse moved = admin.transferLeadership(new TopicPartition(topic, partition),
                        toNodeId, timeoutMs);
                spec.commandLine().getOut().printf("Node %d now leads %s-%d%n", moved.getLeaderNodeId(), topic,
                        partition);
                List<String> others = moved.getMovedList().stream()
                        .filter(p -> !(p.getTopic().equals(topic) && p.getPartition() == partition))
                        .map(p -> p.getTopic() + "-" + p.getPartition()).toList();
                if (!others.isEmpty()) {
                    spec.commandLine().getOut().printf("and, in the same partition group, %s%n",
                            String.join(", ", others));
                }
            }
            return 0;
        }
    }
}
