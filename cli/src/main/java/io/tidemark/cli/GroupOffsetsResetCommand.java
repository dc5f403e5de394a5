package io.tidemark.cli;

import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code tidemark groups reset-offsets}: moves a group's committed offsets, as Kafka's
 * {@code kafka-consumer-groups --reset-offsets} does, with a time that is a ReceiveTime or a SendTime. Prints the
 * plan (each partition's committed offset and the new one); {@code --execute} commits every new offset in one commit,
 * which the coordinator takes only while the group has no members (NON_EMPTY_GROUP otherwise), so a running consumer
 * never has its position moved under it.
 */
@Command(name = "reset-offsets", mixinStandardHelpOptions = true,
        description = "Move a group's committed offsets: to the earliest or latest offset, to an offset, by a shift, "
                + "or to the first record at or after a time. Prints the plan; --execute commits it, only while the "
                + "group has no members.")
final class GroupOffsetsResetCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--group", required = true)
    String group;
    @ArgGroup(exclusive = true, multiplicity = "1")
    Scope scope;
    @ArgGroup(exclusive = true, multiplicity = "1")
    To to;
    @Option(names = "--by", defaultValue = "receive-time", paramLabel = "receive-time|send-time",
            description = "Which time --to-datetime means (default: ${DEFAULT-VALUE}).")
    String by;
    @ArgGroup(exclusive = true)
    Mode mode;
    @Option(names = "--output", defaultValue = "text", description = "text or json.")
    OutputFormat output;

    static final class Scope {
        @Option(names = "--topic", required = true, paramLabel = "TOPIC[:P,P...]",
                description = "A topic, every partition of it or those listed (repeatable).")
        List<String> topics;
        @Option(names = "--all-topics", required = true,
                description = "Every partition the group has a committed offset of.")
        boolean allTopics;
    }

    static final class To {
        @Option(names = "--to-earliest", required = true)
        boolean earliest;
        @Option(names = "--to-latest", required = true)
        boolean latest;
        @Option(names = "--to-offset", required = true, paramLabel = "N")
        Long offset;
        @Option(names = "--shift-by", required = true, paramLabel = "N",
                description = "Move each committed offset by N (negative: back).")
        Long shift;
        @Option(names = "--to-datetime", required = true, paramLabel = "TIME",
                description = "The first record at or after TIME (epoch ms or ISO-8601), by --by; the log end where "
                        + "none is.")
        String datetime;
    }

    static final class Mode {
        @Option(names = "--dry-run", required = true, description = "Print the plan only (the default).")
        boolean dryRun;
        @Option(names = "--execute", required = true, description = "Commit the plan.")
        boolean execute;
    }

    @Override
    public Integer call() {
        OffsetResetPlan.Target target = target();
        PrintWriter out = spec.commandLine().getOut();
        try (TidemarkAdmin admin = client.admin()) {
            List<OffsetResetPlan.Row> plan = OffsetResetPlan.plan(admin, group, partitions(admin), target);
            print(out, plan);
            if (mode != null && mode.execute) {
                Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
                plan.forEach(row -> offsets.put(row.partition(), new OffsetAndMetadata(row.target(), "")));
                admin.commitOffsets(group, offsets);
                if (output == OutputFormat.text) {
                    out.printf("Committed the new offsets of %d partition(s) for group %s%n", plan.size(), group);
                }
            } else if (output == OutputFormat.text) {
                out.println("Dry run: nothing committed; add --execute to commit these offsets (taken only while "
                        + "the group has no members)");
            }
        }
        return 0;
    }

    private OffsetResetPlan.Target target() {
        if (to.earliest) {
            return new OffsetResetPlan.Target.Earliest();
        }
        if (to.latest) {
            return new OffsetResetPlan.Target.Latest();
        }
        if (to.offset != null) {
            return new OffsetResetPlan.Target.Offset(to.offset);
        }
        if (to.shift != null) {
            return new OffsetResetPlan.Target.Shift(to.shift);
        }
        return new OffsetResetPlan.Target.Time(TimeArguments.parseTime("--to-datetime", to.datetime), by());
    }

    private OffsetResetPlan.By by() {
        return switch (by) {
            case "receive-time" -> OffsetResetPlan.By.receive_time;
            case "send-time" -> OffsetResetPlan.By.send_time;
            default -> throw new ParameterException(spec.commandLine(), "--by is '" + by
                    + "'; allowed: receive-time, send-time");
        };
    }

    /** The partitions to reset, in the order named (or the group's committed ones, by topic and partition). */
    private List<TopicPartition> partitions(TidemarkAdmin admin) {
        if (scope.allTopics) {
            List<TopicPartition> committed = new ArrayList<>(admin.fetchOffsets(group, List.of()).keySet());
            if (committed.isEmpty()) {
                throw new TidemarkException(ErrorCode.UNKNOWN_GROUP, "group " + group + " has no committed offsets "
                        + "for --all-topics to reset; name the topics with --topic");
            }
            return committed;
        }
        Set<TopicPartition> partitions = new LinkedHashSet<>();
        for (String topic : scope.topics) {
            int colon = topic.lastIndexOf(':');
            if (colon < 0) {
                partitions.addAll(client.partitions(topic, null));
                continue;
            }
            for (String p : topic.substring(colon + 1).split(",")) {
                try {
                    partitions.add(new TopicPartition(topic.substring(0, colon), Integer.parseInt(p.trim())));
                } catch (NumberFormatException e) {
                    throw new ParameterException(spec.commandLine(), "--topic " + topic + ": '" + p
                            + "' is not a partition number; write TOPIC or TOPIC:P,P...");
                }
            }
        }
        return List.copyOf(partitions);
    }

    private void print(PrintWriter out, List<OffsetResetPlan.Row> plan) {
        if (output == OutputFormat.text) {
            out.printf("%-24s %9s %16s %16s%n", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET");
        }
        for (OffsetResetPlan.Row row : plan) {
            String current = row.current().isPresent() ? Long.toString(row.current().getAsLong()) : "-";
            if (output == OutputFormat.json) {
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("group", group);
                json.put("topic", row.partition().topic());
                json.put("partition", row.partition().partition());
                json.put("currentOffset", row.current().isPresent() ? row.current().getAsLong() : null);
                json.put("newOffset", row.target());
                json.put("executed", mode != null && mode.execute);
                JsonLines.print(out, json);
            } else {
                out.printf("%-24s %9d %16s %16d%n", row.partition().topic(), row.partition().partition(), current,
                        row.target());
            }
        }
    }
}
