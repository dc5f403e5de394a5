package io.tidemark.cli;

import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ConsumerRuntime;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.RebalanceListener;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * {@code tidemark consume}: prints records of a topic (or one partition) from a starting point, until
 * {@code --max-records} were printed or no record came for {@code --timeout}. With {@code --group} and no
 * {@code --partition} it joins the group (subscribes): several processes with the same group split the topic's
 * partitions, each record going to one of them, and partitions move between them as they come and go; with
 * {@code --partition} it reads that partition alone and the group only gives its committed offset. With a group and
 * no {@code --from} it starts at the group's committed offsets (earliest where none); {@code --from} moves every
 * partition it gets. {@code --commit} commits what it printed: every 5 s, so a process killed re-reads at most that
 * much after its successor takes over; of a partition the group takes away, at that moment; of the rest, before it
 * exits.
 */
@Command(name = "consume", mixinStandardHelpOptions = true, description = "Print records of a topic.")
final class ConsumeCommand implements Callable<Integer> {
    /** How often {@code --commit} commits what was printed, as Kafka's default auto.commit.interval.ms. */
    private static final long COMMIT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(5);

    @Spec
    CommandSpec spec;
    @Mixin
    ClientOptions client;
    @Option(names = "--topic", required = true)
    String topic;
    @Option(names = "--partition", description = "Only this partition (default: all).")
    Integer partition;
    @Option(names = "--from", description = "earliest, latest, offset:N, receive-time:TIME or send-time:TIME "
            + "(TIME: epoch ms or ISO-8601). Default: the group's committed offsets with --group, else latest.")
    String from;
    @Option(names = "--max-records", description = "Stop after this many records.")
    Long maxRecords;
    @Option(names = "--timeout", description = "Stop when no record came for this long (500ms, 10s, 5m). "
            + "Default: wait for ever.")
    String timeout;
    @Option(names = "--group", description = "Consumer group: joined (its members split the partitions), or with "
            + "--partition only the committed offsets to start from.")
    String group;
    @Option(names = "--commit", description = "With --group: commit the offsets of what was printed, every 5 s "
            + "(as Kafka's auto.commit.interval.ms), when the group takes a partition away, and at the end.")
    boolean commit;
    @Option(names = "--output", defaultValue = "text", description = "text (values) or json (with headers, so "
            + "tidemark.attempt shows).")
    OutputFormat output;
    @Option(names = "--isolation", defaultValue = "read_uncommitted", description = "read_uncommitted (every "
            + "record as soon as it is stored) or read_committed (records of transactions once committed, never "
            + "those of aborted ones) (default: ${DEFAULT-VALUE}).")
    Isolation isolation;
    @Option(names = "--mode", description = "Run a consumer runtime with a built-in handler, for trying the commit "
            + "modes and outcomes by hand: auto, tracked or transactional (needs --group). It prints each record it "
            + "handles and answers ack(), or retry() for a value matching --fail-matching; it commits by itself.")
    ConsumerRuntime.CommitMode mode;
    @Option(names = "--workers", defaultValue = "1", description = "With --mode: handler threads (default: "
            + "${DEFAULT-VALUE}).")
    int workers;
    @Option(names = "--fail-matching", description = "With --mode: answer retry() for records whose value "
            + "contains a match of this regular expression.")
    Pattern failMatching;
    @Option(names = "--retry-after", description = "With --fail-matching: answer retryAfter(DURATION) instead "
            + "(500ms, 10s, 5m): a durable delayed retry, kept in the delay tiers.")
    String retryAfter;
    @Option(names = "--delay-tiers", split = ",", defaultValue = "1s,10s,1m,10m,1h", description = "With "
            + "--retry-after: the delays of the tier topics (<retry topic>.delay-<delay>, made when missing) "
            + "(default: ${DEFAULT-VALUE}).")
    List<String> delayTiers;
    @Option(names = "--max-attempts", description = "With --mode: attempts a record gets; retries go through the "
            + "retry topic with the tidemark.attempt header.")
    Integer maxAttempts;
    @Option(names = "--retry-topic", description = "With --mode: where retries go (default: the topic itself).")
    String retryTopic;
    @Option(names = "--dead-letter-topic", description = "With --mode: where a record goes after its last attempt.")
    String deadLetterTopic;
    @Option(names = "--copy-to", description = "With --mode: the handler also sends each record it handles to this "
            + "topic (in the same transaction as its position in transactional mode).")
    String copyTo;

    @Override
    public Integer call() throws InterruptedException {
        if (commit && group == null) {
            throw new IllegalArgumentException("--commit needs --group");
        }
        Duration idle = timeout == null ? null : TimeArguments.parseDuration("--timeout", timeout);
        if (mode != null) {
            return runHandler(idle);
        }
        if (failMatching != null || retryAfter != null || maxAttempts != null || retryTopic != null
                || deadLetterTopic != null || copyTo != null) {
            throw new IllegalArgumentException("--fail-matching, --retry-after, --max-attempts, --retry-topic, "
                    + "--dead-letter-topic and --copy-to need --mode");
        }
        // Only --commit commits, and only what was printed: positions run ahead of it when --max-records stops
        // inside what a poll returned.
        ConsumerConfig.Builder config = client.consumerConfig().enableAutoCommit(false)
                .autoOffsetReset(group != null ? ConsumerConfig.OffsetReset.EARLIEST : ConsumerConfig.OffsetReset.LATEST)
                .isolationLevel(isolation.level);
        if (group != null) {
            config.group(group);
        }
        PrintWriter out = spec.commandLine().getOut();
        Map<TopicPartition, OffsetAndMetadata> printed = new HashMap<>();
        try (TidemarkConsumer consumer = new TidemarkConsumer(config.build())) {
            if (group != null && partition == null) {
                consumer.subscribe(List.of(topic), new PrintedOffsets(consumer, printed));
            } else {
                List<TopicPartition> partitions = client.partitions(topic, partition);
                consumer.assign(partitions);
                if (from != null) {
                    StartPosition.parse(from).seek(consumer, partitions);
                }
            }
            long count = 0;
            long lastRecordNanos = System.nanoTime();
            long lastCommitNanos = lastRecordNanos;
            while (maxRecords == null || count < maxRecords) {
                List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord record : records) {
                    if (maxRecords != null && count >= maxRecords) {
                        break;
                    }
                    print(out, record);
                    printed.put(record.topicPartition(), new OffsetAndMetadata(record.offset() + 1));
                    count++;
                }
                out.flush();
                if (commit && !printed.isEmpty() && System.nanoTime() - lastCommitNanos >= COMMIT_INTERVAL_NANOS) {
                    consumer.commitSync(printed);
                    printed.clear();
                    lastCommitNanos = System.nanoTime();
                }
                if (!records.isEmpty()) {
                    lastRecordNanos = System.nanoTime();
                } else if (idle != null && System.nanoTime() - lastRecordNanos >= idle.toNanos()) {
                    break;
                }
            }
            if (commit && !printed.isEmpty()) {
                consumer.commitSync(printed);
                printed.clear();
            }
        }
        return 0;
    }

    private int runHandler(Duration idle) throws InterruptedException {
        if (group == null) {
            throw new IllegalArgumentException("--mode needs --group: the runtime commits the group's positions");
        }
        if (partition != null || from != null || commit) {
            throw new IllegalArgumentException("--mode reads the group's share of the whole topic from its committed "
                    + "positions and commits by itself: --partition, --from and --commit are not allowed with it");
        }
        if (retryAfter != null && failMatching == null) {
            throw new IllegalArgumentException("--retry-after needs --fail-matching: it says what the handler "
                    + "answers for the records that match");
        }
        Duration delay = retryAfter == null ? null : TimeArguments.parseDuration("--retry-after", retryAfter);
        List<Duration> tiers = delayTiers.stream().map(d -> TimeArguments.parseDuration("--delay-tiers", d))
                .toList();
        ConsumerConfig consumer = client.consumerConfig().group(group)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).isolationLevel(isolation.level).build();
        return new HandlerRun(client, consumer, topic, mode, workers, failMatching, delay, tiers,
                maxAttempts, retryTopic, deadLetterTopic, copyTo, maxRecords, idle, spec.commandLine().getOut(),
                this::print)
                .run(spec.commandLine().getErr());
    }

    /** The isolation levels as the command line spells them. */
    enum Isolation {
        read_uncommitted(ConsumerConfig.IsolationLevel.READ_UNCOMMITTED),
        read_committed(ConsumerConfig.IsolationLevel.READ_COMMITTED);

        private final ConsumerConfig.IsolationLevel level;

        Isolation(ConsumerConfig.IsolationLevel level) {
            this.level = level;
        }
    }

    /**
     * Seeks the partitions the group gives by {@code --from}, and commits what was printed of those it takes away
     * when {@code --commit} asks for commits (its last chance: another member reads them next).
     */
    private final class PrintedOffsets implements RebalanceListener {
        private final TidemarkConsumer consumer;
        private final Map<TopicPartition, OffsetAndMetadata> printed;

        PrintedOffsets(TidemarkConsumer consumer, Map<TopicPartition, OffsetAndMetadata> printed) {
            this.consumer = consumer;
            this.printed = printed;
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            Map<TopicPartition, OffsetAndMetadata> leaving = new HashMap<>();
            partitions.forEach(tp -> {
                OffsetAndMetadata offset = printed.remove(tp);
                if (offset != null) {
                    leaving.put(tp, offset);
                }
            });
            if (commit && !leaving.isEmpty()) {
                consumer.commitSync(leaving);
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (from != null) {
                StartPosition.parse(from).seek(consumer, List.copyOf(partitions));
            }
        }
    }

    private void print(PrintWriter out, ConsumerRecord record) {
        if (output == OutputFormat.text) {
            out.println(text(record.value()));
            return;
        }
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("topic", record.topic());
        fields.put("partition", record.partition());
        fields.put("offset", record.offset());
        fields.put("key", text(record.key()));
        fields.put("value", text(record.value()));
        fields.put("headers", JsonLines.headers(record.headers()));
        fields.put("sendTime", record.sendTimeMs());
        fields.put("receiveTime", record.receiveTimeMs());
        JsonLines.print(out, fields);
    }

    private static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }
}
