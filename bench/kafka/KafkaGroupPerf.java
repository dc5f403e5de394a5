import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Kafka's side of {@code tidemark perf group}, step for step, for a side-by-side run (bench/group-side-by-side.sh):
 * MEMBERS consumers of one group (Kafka 4's consumer protocol, KIP-848, as Tidemark's) join a topic of PARTITIONS at
 * once, then one more joins, one leaves (close), and, with {@code death}, one stops polling (it leaves after
 * {@code max.poll.interval.ms}, set to the 45 s session timeout);
 * after each, the time until the group is balanced again (each partition assigned to one member, shares at most one
 * apart). Then every member commits its positions in a loop for COMMIT_SECONDS: commits per second and their latency.
 * Prints lines in the format of {@code tidemark perf group}.
 *
 * <p>Run with the harness' class path: {@code java -cp "$K/target/classes:$K/target/lib/*" KafkaGroupPerf.java
 * BOOTSTRAP TOPIC PARTITIONS MEMBERS COMMIT_SECONDS [death]}. Every wait is bounded (120 s per step).
 */
public final class KafkaGroupPerf {
    private static final Duration POLL = Duration.ofMillis(50);
    private static final long SETTLE_TIMEOUT_MS = 120_000;

    /** One member: its consumer, used by its own thread until it stops polling, and what that thread last saw. */
    private static final class Member {
        final KafkaConsumer<byte[], byte[]> consumer;
        final Thread thread;
        final AtomicBoolean polling = new AtomicBoolean(true);
        final AtomicBoolean committing = new AtomicBoolean();
        final AtomicLong commits = new AtomicLong();
        final List<Long> commitMicros = new ArrayList<>();
        volatile Set<TopicPartition> assignment = Set.of();
        volatile RuntimeException failure;

        Member(String bootstrap, String group, String topic, int index) {
            Properties props = new Properties();
            props.put("bootstrap.servers", bootstrap);
            props.put("group.id", group);
            props.put("group.protocol", "consumer");
            props.put("client.id", "perf-group-" + index);
            props.put("enable.auto.commit", "false");
            props.put("auto.offset.reset", "latest");
            // Kafka's consumer heartbeats from a background thread: one that stops polling stays a member until it
            // leaves by itself after max.poll.interval.ms. 45 s, the session timeout, so the dying step waits as long
            // as Tidemark's, whose members heartbeat from poll and expire after the session timeout.
            props.put("max.poll.interval.ms", "45000");
            consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
            thread = new Thread(() -> run(topic), "perf-group-member-" + index);
            thread.setDaemon(true);
            thread.start();
        }

        private void run(String topic) {
            try {
                consumer.subscribe(List.of(topic));
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
            synchronized (commitMicros) {
                commitMicros.add(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start));
            }
            commits.incrementAndGet();
        }

        /** Stops polling without leaving the group, as a crashed process would. */
        void stopPolling() throws InterruptedException {
            polling.set(false);
            thread.join();
        }

        /** Stops polling and leaves the group: closed once its thread ended, so one thread uses it at a time. */
        void close() throws InterruptedException {
            stopPolling();
            consumer.close();
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int partitions = Integer.parseInt(args[2]);
        int memberCount = Integer.parseInt(args[3]);
        int commitSeconds = Integer.parseInt(args[4]);
        boolean death = args.length > 5 && args[5].equals("death");
        Properties adminProps = new Properties();
        adminProps.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(adminProps)) {
            if (!admin.listTopics().names().get(60, TimeUnit.SECONDS).contains(topic)) {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 3))).all()
                        .get(60, TimeUnit.SECONDS);
            }
        }
        String group = "perf-group-" + UUID.randomUUID();
        List<Member> live = new ArrayList<>();
        List<Member> gone = new ArrayList<>();
        try {
            long start = System.nanoTime();
            for (int i = 0; i < memberCount; i++) {
                live.add(new Member(bootstrap, group, topic, i));
            }
            report(memberCount + " members joining at once", partitions, settle(live, start, partitions));
            start = System.nanoTime();
            live.add(new Member(bootstrap, group, topic, memberCount));
            report("member " + (memberCount + 1) + " joining", partitions, settle(live, start, partitions));
            Member leaving = live.remove(0);
            start = System.nanoTime();
            leaving.close();
            report("a member leaving (close)", partitions, settle(live, start, partitions));
            if (death) {
                Member dying = live.remove(0);
                gone.add(dying);
                start = System.nanoTime();
                dying.stopPolling();
                report("a member dying (no more heartbeats)", partitions, settle(live, start, partitions));
            }
            if (commitSeconds > 0) {
                measureCommits(live, commitSeconds, partitions);
            }
        } finally {
            for (Member member : live) {
                member.close();
            }
            for (Member member : gone) {
                member.consumer.close(Duration.ofSeconds(5));
            }
        }
    }

    private static long settle(List<Member> live, long start, int partitions) throws InterruptedException {
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
        throw new IllegalStateException("the group did not settle within " + SETTLE_TIMEOUT_MS + " ms");
    }

    private static void report(String event, int partitions, long ms) {
        System.out.printf("%s: balanced again (each of %d partitions assigned to one member, shares at most one apart) "
                + "after %d ms%n", event, partitions, ms);
    }

    private static void measureCommits(List<Member> live, int commitSeconds, int partitions)
            throws InterruptedException {
        live.forEach(m -> m.committing.set(true));
        Thread.sleep(TimeUnit.SECONDS.toMillis(commitSeconds));
        live.forEach(m -> m.committing.set(false));
        List<Long> all = new ArrayList<>();
        long commits = 0;
        for (Member member : live) {
            member.stopPolling();
            if (member.failure != null) {
                throw member.failure;
            }
            synchronized (member.commitMicros) {
                all.addAll(member.commitMicros);
            }
            commits += member.commits.get();
        }
        all.sort(null);
        System.out.printf("commits: %d members, %d commits in %d s: %.1f commits/s (each of ~%d offsets); latency ms "
                        + "p50 %.1f, p99 %.1f, max %.1f%n", live.size(), commits, commitSeconds,
                commits / (double) commitSeconds, partitions / live.size(), percentile(all, 50) / 1e3,
                percentile(all, 99) / 1e3, all.isEmpty() ? 0 : all.get(all.size() - 1) / 1e3);
    }

    private static double percentile(List<Long> sorted, double p) {
        return sorted.isEmpty() ? 0 : sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(p / 100 * sorted.size()) - 1));
    }
}
