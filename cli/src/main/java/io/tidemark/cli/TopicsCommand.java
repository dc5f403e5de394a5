package io.tidemark.cli;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.PartitionDescription;
import io.tidemark.proto.v1.TopicDescription;
import io.tidemark.proto.v1.TopicSummary;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

/** {@code tidemark topics create|list|describe|delete|alter}. */
@Command(name = "topics", mixinStandardHelpOptions = true, description = "Create, list, describe, alter and delete topics.",
        subcommands = {TopicsCommand.Create.class, TopicsCommand.ListTopics.class, TopicsCommand.Describe.class,
                TopicsCommand.Delete.class, TopicsCommand.Alter.class})
final class TopicsCommand {
    private TopicsCommand() {
    }

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a topic.")
    static final class Create implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", required = true)
        String topic;
        @Option(names = "--partitions", required = true)
        int partitions;
        @Option(names = "--replication-factor", defaultValue = "0",
                description = "Replicas per partition (default: the cluster's default).")
        int replicationFactor;
        @Option(names = "--config", description = "A topic config key=value (docs/configuration.md); repeatable.")
        Map<String, String> configs = new LinkedHashMap<>();

        @Override
        public Integer call() {
            try (TidemarkAdmin admin = client.admin()) {
                TopicDescription created = admin.createTopic(topic, partitions, replicationFactor, configs);
                spec.commandLine().getOut().printf("Created topic %s with %d partitions, replication factor %d%n",
                        created.getName(), created.getPartitionsCount(), created.getReplicationFactor());
            }
            return 0;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "List topics: their names, one a line (json: with partitions, replication factor and id).")
    static final class ListTopics implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--include-internal", description = "Also list internal topics (names starting with __).")
        boolean includeInternal;
        @Option(names = "--output", defaultValue = "text", description = "text or json.")
        OutputFormat output;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (TidemarkAdmin admin = client.admin()) {
                for (TopicSummary topic : admin.listTopics(includeInternal)) {
                    if (output == OutputFormat.json) {
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("topic", topic.getName());
                        row.put("topicId", TopicIds.fromBytes(topic.getTopicId()).toString());
                        row.put("partitions", topic.getPartitions());
                        row.put("replicationFactor", topic.getReplicationFactor());
                        JsonLines.print(out, row);
                    } else {
                        out.println(topic.getName());
                    }
                }
            }
            return 0;
        }
    }

    @Command(name = "describe", mixinStandardHelpOptions = true,
            description = "Describe topics: the topic's id, and per partition its leader, replicas, offsets, size and last "
                    + "ReceiveTime.")
    static final class Describe implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", description = "Topics to describe (default: all); repeatable.")
        List<String> topics = new ArrayList<>();
        @Option(names = "--output", defaultValue = "text", description = "text or json (one object per partition).")
        OutputFormat output;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (TidemarkAdmin admin = client.admin()) {
                for (TopicDescription topic : admin.describeTopics(topics)) {
                    String id = TopicIds.fromBytes(topic.getTopicId()).toString();
                    if (output == OutputFormat.text) {
                        out.printf("Topic: %s  id: %s  partitions: %d  replication factor: %d  overrides: %s%n",
                                topic.getName(), id, topic.getPartitionsCount(), topic.getReplicationFactor(),
                                overrides(topic));
                    }
                    for (PartitionDescription p : topic.getPartitionsList()) {
                        print(out, topic.getName(), id, p);
                    }
                }
            }
            return 0;
        }

        private static String overrides(TopicDescription topic) {
            Map<String, String> overrides = new LinkedHashMap<>();
            topic.getOverriddenKeysList().forEach(k -> overrides.put(k, topic.getConfigsMap().get(k)));
            return overrides.toString();
        }

        private void print(PrintWriter out, String topic, String id, PartitionDescription p) {
            if (output == OutputFormat.json) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("topic", topic);
                row.put("topicId", id);
                row.put("partition", p.getPartition());
                row.put("leader", p.getLeaderNodeId());
                row.put("replicas", p.getReplicaNodeIdsList());
                row.put("group", p.getGroupId());
                row.put("logStartOffset", p.getLogStartOffset());
                row.put("logEndOffset", p.getLogEndOffset());
                row.put("sizeBytes", p.getSizeBytes());
                row.put("segments", p.getSegments());
                row.put("lastReceiveTime", p.getLastReceiveTimeMs());
                if (p.hasOverridesInUse()) {
                    row.put("overridesInUse", new TreeMap<>(p.getOverridesInUse().getOverridesMap()));
                }
                JsonLines.print(out, row);
            } else {
                out.printf("  partition %d  leader %d  replicas %s  group %s  log start %d  log end %d  %d bytes in %d"
                                + " segments  last ReceiveTime %s%n", p.getPartition(), p.getLeaderNodeId(),
                        p.getReplicaNodeIdsList(), p.getGroupId(),
                        p.getLogStartOffset(), p.getLogEndOffset(), p.getSizeBytes(), p.getSegments(),
                        p.getLastReceiveTimeMs() < 0 ? "none" : Instant.ofEpochMilli(p.getLastReceiveTimeMs()));
                if (p.hasOverridesInUse()) {
                    out.printf("    still uses overrides %s: the topic's change has not reached its group's log yet%n",
                            new TreeMap<>(p.getOverridesInUse().getOverridesMap()));
                }
            }
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Delete a topic and its data.")
    static final class Delete implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", required = true)
        String topic;

        @Override
        public Integer call() {
            try (TidemarkAdmin admin = client.admin()) {
                admin.deleteTopic(topic);
            }
            spec.commandLine().getOut().println("Deleted topic " + topic);
            return 0;
        }
    }

    @Command(name = "alter", mixinStandardHelpOptions = true, description = "Set or remove config overrides of a topic.")
    static final class Alter implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--topic", required = true)
        String topic;
        @Option(names = "--set", description = "key=value to set; repeatable.")
        Map<String, String> set = new LinkedHashMap<>();
        @Option(names = "--remove", description = "Key whose override to remove (back to the default); repeatable.")
        List<String> remove = new ArrayList<>();

        @Override
        public Integer call() {
            if (set.isEmpty() && remove.isEmpty()) {
                throw new IllegalArgumentException("give at least one --set key=value or --remove key");
            }
            try (TidemarkAdmin admin = client.admin()) {
                TopicDescription altered = admin.alterTopicConfig(topic, set, remove);
                spec.commandLine().getOut().println("Altered topic " + topic + "; overrides now "
                        + Describe.overrides(altered));
            }
            return 0;
        }
    }
}
