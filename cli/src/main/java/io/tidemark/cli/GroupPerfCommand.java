package io.tidemark.cli;

import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.RebalanceListener;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code tidemark perf group}: how long a consumer group takes to hand its partitions out, and how many commits its
 * coordinator takes. In this process, {@code --members} consumers subscribe to one topic in a new group, each polling
 * on its own thread; the command times, from each event until the group is balanced again (every partition of the
 * topic assigned to exactly one live member, as the members' own {@code assignment()} after a poll says, and their
 * counts at most one apart): the members joining at once, one more joining, one leaving ({@code close()}), and with
 * {@code --death}, one that stops polling (a crashed process: its partitions move once its session times out). Then every member commits its positions (one CommitOffsets of
 * its partitions, through the coordinator, as a member) in a loop for {@code --commit-seconds}: commits per second
 * and their latency percentiles.
 */
@Command(name = "group", mixinStandardHelpOptions = true,
        description = "Time a consumer group's rebalances (members joining, one more joining, one leaving, one dying) "
                + "and measure commits per second through its coordinator.")
final class GroupPerfCommand implements Callable<Integer> {
    /** How long an event may take to settle before the run ends with an error. */
    private static final long SETTLE_TIMEOUT_MS = 120_000;
    private static final Duration POLL = Duration.ofMillis(50);

    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--topic", defaultValue = "group-perf",
            description = "The topic, created with --partitions when absent (default: ${DEFAULT-VALUE}).")
    String topic;
    @Option(names = "--partitions", defaultValue = "100", description = "(default: ${DEFAULT-VALUE})")
    int partitions;
    @Option(names = "--members", defaultValue = "10", description = "(default: ${DEFAULT-VALUE})")
    int memberCount;
    @Option(names = "--commit-seconds", defaultValue = "10",
            description = "How long the members commit in a loop (default: ${DEFAULT-VALUE}).")
    int commitSeconds;
    @Option(names = "--death", description = "Also time a member that stops polling: a session timeout long.")
    boolean death;

    /** One member: its consumer, polled by its own thread, and what that thread last saw. */
    private static final class Member implements AutoCloseable {
        final TidemarkConsumer consumer;
        final Thread thread;
        final AtomicBoolean polling = new AtomicBoolean(true);
        final AtomicBoolean committing = new AtomicBoolean();
        final AtomicLong commits = new AtomicLong();
        final Histogram commitMicros = new Histogram(3);
        volatile Set<TopicPartition> assignment = Set.of();
        volatile RuntimeException failure;

        Member(ClientOptions client, String group, String topic, int index) {
            consumer = new TidemarkConsumer(client.consumerConfig().group(group)
                    .clientId("perf-group-" + index).enableAutoCommit(false)
                    .autoOffsetReset(ConsumerConfig.OffsetReset.LATEST).build());
            thread = new Thread(() -> run(topic), "perf-group-member-" + index);
            thread.setDaemon(true);
            thread.start();
        }

        private void run(String topic) {
            try {
                consumer.subscribe(List.of(topic), RebalanceListener.NONE);
                while (polling.get()) {
                    consumer.poll(POLL);
                    assignment = Set.copyOf(consumer.assignment());
                    if (committing.get() && !assignment.isEmpty()) {
                        commit();
                    }
                }
            } catch (RuntimeException e) {
                failure = e;
            }
        }

        private void commit() {
            Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
            assignment.forEach(tp -> positions.put(tp, new OffsetAndMetadata(consumer.position(tp))));
            long start = System.nanoTime();
            consumer.commitSync(positions);
            commitMicros.recordValue(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start));
            commits.incrementAndGet();
        }

        /** Stops polling, leaving the group as a crashed process would not. */
        void stopPolling() throws InterruptedException {
            polling.set(false);
            thread.join();
        }

        @Override
        public void close() throws InterruptedException {
            stopPolling();
            consumer.close();
        }
    }

    @Override
    public Integer call() throws Exception {
        if (partitions < 1 || memberCount < 2 || commitSeconds < 0) {
            throw new IllegalArgumentException("--partitions must be at least 1, --members at least 2 and "
                    + "--commit-seconds at least 0");
        }
        PrintWriter out = spec.commandLine().getOut();
        try (TidemarkAdmin admin = client.admin()) {
            if (admin.listTopics(false).stream().noneMatch(t -> t.getName().equals(topic))) {
                admin.createTopic(topic, partitions, Math.min(3, admin.clusterStatus().getBrokersCount()), Map.of());
            }
            partitions = admin.metadata(List.of(topic)).getTopics(0).getPartitionsCount();
        }
        String group = "perf-group-" + UUID.randomUUID();
        List<Member> live = new ArrayList<>();
        List<Member> gone = new ArrayList<>();
        try {
            long start = System.nanoTime();
            for (int i = 0; i < memberCount; i++) {
                live.add(new Member(client, group, topic, i));
            }
            report(out, memberCount + " members joining at once", settle(live, start));
            start = System.nanoTime();
            live.add(new Member(client, group, topic, memberCount));
            report(out, "member " + (memberCount + 1) + " joining", settle(live, start));
            Member leaving = live.remove(0);
            start = System.nanoTime();
            leaving.close();
            report(out, "a member leaving (close)", settle(live, start));
            if (death) {
                Member dying = live.remove(0);
                gone.add(dying);
                start = System.nanoTime();
                dying.stopPolling();
                report(out, "a member dying (no more heartbeats)", settle(live, start));
            }
            if (commitSeconds > 0) {
                measureCommits(out, live);
            }
        } finally {
            for (Member member : live) {
                member.close();
            }
            for (Member member : gone) {
                try {
                    member.consumer.close();
                } catch (TidemarkException e) {
                    out.println("the dead member's close: " + e.getMessage());
                }
            }
        }
        return 0;
    }

    /**
     * Waits until the group is balanced again: every partition assigned to exactly one of {@code live}, and each of
     * them holding its share (the uniform assignor leaves counts at most one apart); the time since {@code start}.
     */
    private long settle(List<Member> live, long start) throws InterruptedException {
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(SETTLE_TIMEOUT_MS);
        int fewest = partitions / live.size();
        while (System.nanoTime() < deadline) {
            Set<TopicPartition> owned = new HashSet<>();
            int count = 0;
            boolean shared = true;
            for (Member member : live) {
                if (member.failure != null) {
                    throw member.failure;
                }
                Set<TopicPartition> assigned = member.assignment;
                owned.addAll(assigned);
                count += assigned.size();
                shared &= assigned.size() == fewest || assigned.size() == fewest + 1;
            }
            if (owned.size() == partitions && count == partitions && shared) {
                return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            }
            Thread.sleep(POLL.toMillis());
        }
        throw new TidemarkException(ErrorCode.NOT_AVAILABLE, "the group did not settle within " + SETTLE_TIMEOUT_MS
                + " ms");
    }

    private void report(PrintWriter out, String event, long ms) {
        out.printf("%s: balanced again (each of %d partitions assigned to one member, shares at most one apart) "
                + "after %d ms%n", event, partitions, ms);
        out.flush();
    }

    private void measureCommits(PrintWriter out, List<Member> live) throws InterruptedException {
        live.forEach(m -> m.committing.set(true));
        Thread.sleep(TimeUnit.SECONDS.toMillis(commitSeconds));
        live.forEach(m -> m.committing.set(false));
        Histogram all = new Histogram(3);
        long commits = 0;
        for (Member member : live) {
            member.stopPolling();
            if (member.failure != null) {
                throw member.failure;
            }
            all.add(member.commitMicros);
            commits += member.commits.get();
        }
        out.printf("commits: %d members, %d commits in %d s: %.1f commits/s (each of ~%d offsets); latency ms "
                        + "p50 %.1f, p99 %.1f, max %.1f%n", live.size(), commits, commitSeconds,
                commits / (double) commitSeconds, partitions / live.size(), all.getValueAtPercentile(50) / 1e3,
                all.getValueAtPercentile(99) / 1e3, all.getMaxValue() / 1e3);
    }
}
