package io.tidemark.cli;

import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetAndMetadata;
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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tidemark consume}: prints records of a topic (or one partition) from a starting point, until
 * {@code --max-records} were printed or no record came for {@code --timeout}. With {@code --group} and no
 * {@code --from} it starts at the group's committed offsets (earliest where none); {@code --commit} commits
 * what it printed before it exits.
 */
@Command(name = "consume", mixinStandardHelpOptions = true, description = "Print records of a topic.")
final class ConsumeCommand implements Callable<Integer> {
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
    @Option(names = "--group", description = "Consumer group whose committed offsets to start from.")
    String group;
    @Option(names = "--commit", description = "With --group: commit the offsets of what was printed at the end.")
    boolean commit;
    @Option(names = "--output", defaultValue = "text", description = "text (values) or json.")
    OutputFormat output;

    @Override
    public Integer call() {
        if (commit && group == null) {
            throw new IllegalArgumentException("--commit needs --group");
        }
        Duration idle = timeout == null ? null : TimeArguments.parseDuration("--timeout", timeout);
        ConsumerConfig.Builder config = ConsumerConfig.builder(client.bootstrap)
                .autoOffsetReset(group != null ? ConsumerConfig.OffsetReset.EARLIEST : ConsumerConfig.OffsetReset.LATEST);
        if (group != null) {
            config.group(group);
        }
        PrintWriter out = spec.commandLine().getOut();
        Map<TopicPartition, OffsetAndMetadata> printed = new HashMap<>();
        try (TidemarkConsumer consumer = new TidemarkConsumer(config.build())) {
            List<TopicPartition> partitions = client.partitions(topic, partition);
            consumer.assign(partitions);
            if (from != null) {
                StartPosition.parse(from).seek(consumer, partitions);
            }
            long count = 0;
            long lastRecordNanos = System.nanoTime();
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
                if (!records.isEmpty()) {
                    lastRecordNanos = System.nanoTime();
                } else if (idle != null && System.nanoTime() - lastRecordNanos >= idle.toNanos()) {
                    break;
                }
            }
            if (commit && !printed.isEmpty()) {
                consumer.commitSync(printed);
            }
        }
        return 0;
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
