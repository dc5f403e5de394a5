package io.tidemark.cli;

import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.v1.DescribeGroupResponse;
import io.tidemark.proto.v1.GroupPartitionLag;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code tidemark groups list|describe|commit}: consumer groups' committed offsets and lag. */
@Command(name = "groups", mixinStandardHelpOptions = true, description = "List and describe consumer groups, "
        + "commit offsets.", subcommands = {GroupsCommand.ListGroups.class, GroupsCommand.Describe.class,
        GroupsCommand.Commit.class})
final class GroupsCommand {
    private GroupsCommand() {
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List groups with committed offsets.")
    static final class ListGroups implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--output", defaultValue = "text", description = "text or json.")
        OutputFormat output;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (TidemarkAdmin admin = client.admin()) {
                for (String group : admin.listGroups()) {
                    if (output == OutputFormat.json) {
                        JsonLines.print(out, Map.of("group", group));
                    } else {
                        out.println(group);
                    }
                }
            }
            return 0;
        }
    }

    @Command(name = "describe", mixinStandardHelpOptions = true,
            description = "Committed offset, log end offset and lag per partition of a group.")
    static final class Describe implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--group", required = true)
        String group;
        @Option(names = "--output", defaultValue = "text", description = "text or json.")
        OutputFormat output;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (TidemarkAdmin admin = client.admin()) {
                DescribeGroupResponse described = admin.describeGroup(group);
                if (output == OutputFormat.text) {
                    out.printf("%-24s %9s %16s %16s %10s  %s%n", "TOPIC", "PARTITION", "COMMITTED", "LOG-END",
                            "LAG", "COMMITTED-AT");
                }
                for (GroupPartitionLag p : described.getPartitionsList()) {
                    if (output == OutputFormat.json) {
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("group", group);
                        row.put("topic", p.getTopic());
                        row.put("partition", p.getPartition());
                        row.put("committedOffset", p.getCommittedOffset());
                        row.put("logEndOffset", p.getLogEndOffset());
                        row.put("lag", p.getLag());
                        row.put("metadata", p.getMetadata());
                        row.put("commitTime", p.getCommitTimeMs());
                        JsonLines.print(out, row);
                    } else {
                        out.printf("%-24s %9d %16d %16d %10d  %s%n", p.getTopic(), p.getPartition(),
                                p.getCommittedOffset(), p.getLogEndOffset(), p.getLag(),
                                Instant.ofEpochMilli(p.getCommitTimeMs()));
                    }
                }
            }
            return 0;
        }
    }

    @Command(name = "commit", mixinStandardHelpOptions = true, description = "Commit an offset for a group.")
    static final class Commit implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--group", required = true)
        String group;
        @Option(names = "--topic", required = true)
        String topic;
        @Option(names = "--partition", required = true)
        int partition;
        @Option(names = "--offset", required = true, description = "The next offset the group will read.")
        long offset;
        @Option(names = "--metadata", defaultValue = "", description = "Text kept with the offset.")
        String metadata;

        @Override
        public Integer call() {
            try (TidemarkAdmin admin = client.admin()) {
                admin.commitOffsets(group, Map.of(new TopicPartition(topic, partition),
                        new OffsetAndMetadata(offset, metadata)));
            }
            spec.commandLine().getOut().printf("Committed offset %d of %s-%d for group %s%n", offset, topic, partition,
                    group);
            return 0;
        }
    }
}
