package io.tidemark.cli;

import io.tidemark.client.api.ConsumerRuntime;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.v1.DescribeGroupResponse;
import io.tidemark.proto.v1.GroupMemberDescription;
import io.tidemark.proto.v1.GroupPartitionLag;
import io.tidemark.proto.v1.TopicPartitionRef;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * {@code tidemark groups list|describe|commit|reset-offsets|delete|delete-offsets}: consumer groups, their members,
 * committed offsets and lag.
 */
@Command(name = "groups", mixinStandardHelpOptions = true, description = "List, describe and delete consumer "
        + "groups; commit, reset and delete their offsets.", subcommands = {GroupsCommand.ListGroups.class,
        GroupsCommand.Describe.class, GroupsCommand.Commit.class, GroupOffsetsResetCommand.class,
        GroupsCommand.Delete.class, GroupsCommand.DeleteOffsets.class})
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
            description = "A group's state and members, and per partition its committed offset, log end offset and "
                    + "lag, as the group's coordinator knows them (\"-\" for a partition it holds no replica of); "
                    + "DONE-ABOVE: offsets above a Tracked-mode commit that were completed, which a restart skips.")
    static final class Describe implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--group", required = true)
        String group;
        @Option(names = "--output", defaultValue = "text", description = "text or json: one row per line, its "
                + "\"type\" group, member or partition.")
        OutputFormat output;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (TidemarkAdmin admin = client.admin()) {
                DescribeGroupResponse described = admin.describeGroup(group);
                if (output == OutputFormat.json) {
                    printJson(out, described);
                } else {
                    printText(out, described);
                }
            }
            return 0;
        }

        private void printText(PrintWriter out, DescribeGroupResponse described) {
            out.printf("GROUP %s  STATE %s  EPOCH %d  ASSIGNOR %s  COORDINATOR %d  MEMBERS %d%n", group,
                    described.getState(), described.getGroupEpoch(), described.getAssignor().isEmpty() ? "-"
                            : described.getAssignor(), described.getCoordinatorNodeId(), described.getMembersCount());
            if (described.getMembersCount() > 0) {
                out.println();
                out.printf("%-36s %-16s %-20s %-21s %6s %10s  %s%n", "MEMBER-ID", "INSTANCE-ID", "CLIENT-ID", "HOST",
                        "EPOCH", "HEARTBEAT", "ASSIGNED");
                for (GroupMemberDescription m : described.getMembersList()) {
                    out.printf("%-36s %-16s %-20s %-21s %6d %8dms  %s%s%n", m.getMemberId(),
                            m.getInstanceId().isEmpty() ? "-" : m.getInstanceId(), m.getClientId(), m.getHost(),
                            m.getMemberEpoch(), m.getLastHeartbeatMsAgo(), partitions(m.getAssignmentList()),
                            m.getRevokingCount() == 0 ? "" : " (giving up " + partitions(m.getRevokingList()) + ")");
                }
            }
            if (described.getPartitionsCount() > 0) {
                out.println();
                out.printf("%-24s %9s %16s %16s %10s %10s  %s%n", "TOPIC", "PARTITION", "COMMITTED", "LOG-END",
                        "LAG", "DONE-ABOVE", "COMMITTED-AT");
                for (GroupPartitionLag p : described.getPartitionsList()) {
                    OptionalLong doneAbove = ConsumerRuntime.completedAbove(p.getMetadata());
                    boolean endKnown = p.getLogEndOffset() >= 0;
                    out.printf("%-24s %9d %16d %16s %10s %10s  %s%n", p.getTopic(), p.getPartition(),
                            p.getCommittedOffset(), endKnown ? Long.toString(p.getLogEndOffset()) : "-",
                            endKnown ? Long.toString(p.getLag()) : "-",
                            doneAbove.isPresent() ? Long.toString(doneAbove.getAsLong()) : "-",
                            Instant.ofEpochMilli(p.getCommitTimeMs()));
                }
            }
        }

        private void printJson(PrintWriter out, DescribeGroupResponse described) {
            Map<String, Object> summary = new LinkedHashMap<>();
            summary.put("type", "group");
            summary.put("group", group);
            summary.put("state", described.getState());
            summary.put("groupEpoch", described.getGroupEpoch());
            summary.put("assignor", described.getAssignor());
            summary.put("coordinator", described.getCoordinatorNodeId());
            summary.put("members", described.getMembersCount());
            JsonLines.print(out, summary);
            for (GroupMemberDescription m : described.getMembersList()) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("type", "member");
                row.put("group", group);
                row.put("memberId", m.getMemberId());
                row.put("instanceId", m.getInstanceId());
                row.put("clientId", m.getClientId());
                row.put("host", m.getHost());
                row.put("memberEpoch", m.getMemberEpoch());
                row.put("topics", List.copyOf(m.getSubscription().getTopicsList()));
                row.put("pattern", m.getSubscription().getPattern());
                row.put("assigned", partitions(m.getAssignmentList()));
                row.put("revoking", partitions(m.getRevokingList()));
                row.put("lastHeartbeatMsAgo", m.getLastHeartbeatMsAgo());
                JsonLines.print(out, row);
            }
            for (GroupPartitionLag p : described.getPartitionsList()) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("type", "partition");
                row.put("group", group);
                row.put("topic", p.getTopic());
                row.put("partition", p.getPartition());
                row.put("committedOffset", p.getCommittedOffset());
                row.put("logEndOffset", p.getLogEndOffset());
                row.put("lag", p.getLag());
                row.put("metadata", p.getMetadata());
                OptionalLong doneAbove = ConsumerRuntime.completedAbove(p.getMetadata());
                row.put("completedAbove", doneAbove.isPresent() ? doneAbove.getAsLong() : 0);
                row.put("commitTime", p.getCommitTimeMs());
                JsonLines.print(out, row);
            }
        }

        /** "orders-0,orders-3": topic-partition names, as the broker ordered them. */
        private static String partitions(List<TopicPartitionRef> refs) {
            return refs.stream().map(r -> r.getTopic() + "-" + r.getPartition()).collect(Collectors.joining(","));
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true,
            description = "Delete every committed offset of a group without members.")
    static final class Delete implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--group", required = true)
        String group;

        @Override
        public Integer call() {
            try (TidemarkAdmin admin = client.admin()) {
                List<TopicPartition> deleted = admin.deleteGroup(group);
                spec.commandLine().getOut().printf("Deleted group %s: the committed offsets of %d partition(s)%n",
                        group, deleted.size());
            }
            return 0;
        }
    }

    @Command(name = "delete-offsets", mixinStandardHelpOptions = true,
            description = "Delete a group's committed offsets of topics none of its members subscribes to.")
    static final class DeleteOffsets implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptions client;
        @Option(names = "--group", required = true)
        String group;
        @Option(names = "--topic", required = true, description = "A topic whose offsets to delete (repeatable).")
        List<String> topics;

        @Override
        public Integer call() {
            try (TidemarkAdmin admin = client.admin()) {
                List<TopicPartition> deleted = admin.deleteOffsets(group, topics);
                spec.commandLine().getOut().printf("Deleted the committed offsets of group %s of %d partition(s)%s%n",
                        group, deleted.size(), deleted.isEmpty() ? "" : ": " + deleted.stream()
                                .map(TopicPartition::toString).collect(Collectors.joining(",")));
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
