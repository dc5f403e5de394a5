package io.tidemark.cli;

import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.mirror.failover.FailoverCommitter;
import io.tidemark.mirror.failover.FailoverPlan;
import io.tidemark.mirror.failover.FailoverPlanFormat;
import io.tidemark.mirror.failover.FailoverPlanner;
import io.tidemark.mirror.failover.FailoverRequest;
import io.tidemark.mirror.failover.FailoverRequest.TimeChoice;
import io.tidemark.mirror.failover.MirrorStateReader;
import io.tidemark.mirror.failover.TargetFacts;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

/**
 * {@code tidemark failover plan|apply}: moves a consumer group from a dead source cluster to the target its mirror
 * copied into ({@link FailoverPlanner}). {@code plan} prints where each partition resumes; {@code apply} prints the
 * same and commits it for the group on the target ({@link FailoverCommitter}). Output: docs of
 * {@link FailoverPlanFormat}.
 */
@Command(name = "failover", mixinStandardHelpOptions = true, description = {
        "Move a consumer group from a dead cluster to the cluster its mirror copied into: exactly at the mirror's "
                + "checkpoints, or by time at T - X.",
        "Example: tidemark failover plan --target 127.0.0.1:9500 --source-name A --group billing"},
        subcommands = {FailoverCommand.Plan.class, FailoverCommand.Apply.class})
final class FailoverCommand {
    private FailoverCommand() {
    }

    /** The options plan and apply share: which group, from where to where, and how to choose T and X. */
    static final class Options {
        static final String LAST_CONSUMED = "last-consumed";
        static final String SOURCE_SILENT = "source-silent";

        @Option(names = "--target", required = true, paramLabel = "HOST:PORT[,...]",
                description = "The target cluster, that the group moves to.")
        String target;
        @Option(names = "--command-config", paramLabel = "FILE", description = "How to reach the target in TLS: a "
                + "client properties file (tls.ca.file, tls.cert.file, tls.key.file), as the other tools take.")
        Path commandConfig;
        @Mixin
        TlsFlagOptions.Own tls;
        @Option(names = "--source-name", required = true,
                description = "The dead cluster's name, as its mirror was given it (tidemark mirror --source-name).")
        String sourceName;
        @Option(names = "--group", required = true, description = "The consumer group to move.")
        String group;
        @Option(names = "--time", paramLabel = "TIME|last-consumed|source-silent", description = {
                "Resume every partition by time at T - X, T being TIME (epoch ms or ISO-8601, not in the future), the "
                        + "last consumed record's source ReceiveTime from the checkpoint (last-consumed), or when the "
                        + "mirror last heard from the source (source-silent).",
                "Default: exactly at the checkpoints; by time from when the source went silent where there is none. "
                        + "A partition the group never committed on the source stays uncommitted."})
        String time;
        @Option(names = "--buffer", defaultValue = "auto", paramLabel = "DURATION|auto",
                description = "X: a duration (15m, 30s, PT1H), or auto to derive it from the mirror's latencies "
                        + "(default: ${DEFAULT-VALUE}).")
        String buffer;
        @Option(names = "--topic", paramLabel = "TOPIC",
                description = "A target topic to move; repeatable (default: the topics of the group's checkpoints).")
        List<String> topics = new ArrayList<>();
        @Option(names = "--output", defaultValue = "text", description = "text or json.")
        OutputFormat output;

        FailoverRequest request() {
            OptionalLong bufferMs = buffer.equals("auto") ? OptionalLong.empty()
                    : OptionalLong.of(TimeArguments.parseDuration("--buffer", buffer).toMillis());
            return new FailoverRequest(sourceName, group, timeChoice(time), bufferMs, topics);
        }

        static TimeChoice timeChoice(String time) {
            if (time == null) {
                return TimeChoice.none();
            }
            return switch (time) {
                case LAST_CONSUMED -> TimeChoice.lastConsumed();
                case SOURCE_SILENT -> TimeChoice.sourceSilent();
                default -> TimeChoice.given(givenTime(time));
            };
        }

        private static long givenTime(String time) {
            try {
                return TimeArguments.parseTime("--time", time);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--time '" + time + "' is not a time: give epoch milliseconds "
                        + "(1700000000000), an ISO-8601 instant (2023-11-14T22:13:20Z), " + LAST_CONSUMED + " or "
                        + SOURCE_SILENT);
            }
        }

        TidemarkAdmin admin() {
            return ClientOptions.of(target, commandConfig, tls.flags()).admin();
        }

        /** Reads the target's __mirror_state and plans, at the clock's time. */
        FailoverPlan plan(TidemarkAdmin admin, Clock clock) {
            FailoverRequest request = request();
            return new FailoverPlanner(TargetFacts.over(admin)).plan(new MirrorStateReader(admin)
                    .read(request.sourceCluster(), request.group()), request, clock.millis());
        }
    }

    @Command(name = "plan", mixinStandardHelpOptions = true,
            description = "Print where each partition of the group would resume on the target, and why; change nothing.")
    static final class Plan implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        Options options;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (TidemarkAdmin admin = options.admin()) {
                FailoverPlan plan = options.plan(admin, Clock.systemUTC());
                out.print(options.output == OutputFormat.json ? FailoverPlanFormat.json(plan) + "\n"
                        : FailoverPlanFormat.text(plan));
                out.flush();
            }
            return 0;
        }
    }

    @Command(name = "apply", mixinStandardHelpOptions = true, description = "Plan, then commit the plan's offsets for "
            + "the group on the target; refused while the group has members or recent commits there, and when the "
            + "plan skips records unless --allow-skip; applying twice commits once.")
    static final class Apply implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        Options options;
        @Option(names = "--active-window", defaultValue = "1m", paramLabel = "DURATION",
                description = "A commit of the group on the target this recent, not by a failover, means it has active "
                        + "consumers there (default: ${DEFAULT-VALUE}).")
        String activeWindow;
        @Option(names = "--allow-skip", description = "Apply a plan that skips records the group had not consumed "
                + "(the plan's SKIPPED column); without it such a plan is refused.")
        boolean allowSkip;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            long activeWindowMs = TimeArguments.parseDuration("--active-window", activeWindow).toMillis();
            Clock clock = Clock.systemUTC();
            try (TidemarkAdmin admin = options.admin()) {
                FailoverPlan plan = options.plan(admin, clock);
                FailoverCommitter.Decision applied = new FailoverCommitter(admin, clock, activeWindowMs,
                        allowSkip).apply(plan);
                out.print(options.output == OutputFormat.json ? FailoverPlanFormat.json(plan, applied) + "\n"
                        : FailoverPlanFormat.text(plan, applied));
                out.flush();
            }
            return 0;
        }
    }
}
