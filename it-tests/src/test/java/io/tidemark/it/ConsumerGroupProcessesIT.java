package io.tidemark.it;

import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.GroupPartitionLag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tidemark consume --group --commit} processes share a topic while records keep coming: three join, one is
 * SIGKILLed once every partition has a commit (its partitions move once its session of 6 s expires) and a fourth
 * joins. Every record is printed, by one process only except those the killed one printed after its last commit
 * (at-least-once: its successor reads from the group's committed offset, nothing before it); at the end the survivors
 * committed everything and left.
 */
class ConsumerGroupProcessesIT {
    private static final String TOPIC = "chaos";
    private static final int PARTITIONS = 6;
    /** 200 records a second for 12 s: the kill and the join happen while records keep coming. */
    private static final int RECORDS = 2_400;
    private static final long RECORD_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final Pattern PRINTED = Pattern.compile("\"partition\":(\\d+),\"offset\":(\\d+)");

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;
    private BrokerProcess broker;
    private final List<Process> consumers = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        consumers.forEach(Process::destroyForcibly);
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void consumerProcessesShareATopicThroughAKillAndAJoin() throws Exception {
        Path config = dir.resolve("broker.properties");
        Files.writeString(config, "group.consumer.session.timeout.ms=6000\ngroup.consumer.heartbeat.interval.ms=500\n");
        broker = BrokerProcess.start(dir.resolve("data"), dir, "--config", config.toString());
        String b = broker.bootstrap();
        try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(b).build())) {
            admin.createTopic(TOPIC, PARTITIONS, 1, Map.of());
            CompletableFuture<Void> load = CompletableFuture.runAsync(() -> produce(b));
            for (int i = 0; i < 3; i++) {
                consumers.add(consume(b, i));
            }
            await().atMost(Duration.ofSeconds(60)).ignoreException(TidemarkException.class)
                    .until(() -> committed(admin).size() == PARTITIONS
                            && committed(admin).values().stream().allMatch(offset -> offset > 0));
            consumers.get(0).destroyForcibly().waitFor();
            Map<Integer, Long> committedAtKill = committed(admin);
            consumers.add(consume(b, 3));
            load.get(60, TimeUnit.SECONDS);
            for (Process survivor : consumers.subList(1, 4)) {
                assertTrue(survivor.waitFor(90, TimeUnit.SECONDS), "each survivor stops 10 s after the last record");
                assertEquals(0, survivor.exitValue());
            }

            Map<String, List<Integer>> printers = new HashMap<>();
            for (int i = 0; i < 4; i++) {
                for (String record : printed(i)) {
                    printers.computeIfAbsent(record, r -> new ArrayList<>()).add(i);
                }
            }
            long total = 0;
            List<String> missing = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                long end = admin.listOffsets(new TopicPartition(TOPIC, p), OffsetSpec.latest()).logEndOffset();
                total += end;
                for (long offset = 0; offset < end; offset++) {
                    if (!printers.containsKey(p + "@" + offset)) {
                        missing.add(p + "@" + offset);
                    }
                }
            }
            assertEquals(RECORDS, total);
            assertEquals(List.of(), missing, "every record printed");
            List<String> twice = printers.entrySet().stream().filter(e -> e.getValue().size() > 1
                    && (e.getValue().size() > 2 || !e.getValue().contains(0))).map(Map.Entry::getKey).toList();
            assertEquals(List.of(), twice, "a record printed twice was printed by the killed process, and once more "
                    + "by its successor");
            assertEquals(List.of(), printers.entrySet().stream().filter(e -> e.getValue().size() > 1)
                    .map(Map.Entry::getKey).filter(r -> offset(r) < committedAtKill.get(partition(r))).toList(),
                    "nothing the killed process committed was read again");
            System.out.println("Printed twice (by the killed process, then again): " + printers.values().stream()
                    .filter(p -> p.size() > 1).count() + " of " + total);
            assertEquals(Set.of(0L), Set.copyOf(admin.describeGroup("k").getPartitionsList().stream()
                    .map(GroupPartitionLag::getLag).toList()), "the survivors committed everything they printed");
            assertEquals(0, admin.describeGroup("k").getMembersCount(), "and left");
        }
    }

    /** The group's committed offset of each partition it committed, by partition. */
    private static Map<Integer, Long> committed(TidemarkAdmin admin) {
        Map<Integer, Long> offsets = new HashMap<>();
        admin.committedPartitions("k").forEach(p -> offsets.put(p.getPartition(), p.getCommittedOffset()));
        return offsets;
    }

    private static int partition(String record) {
        return Integer.parseInt(record.substring(0, record.indexOf('@')));
    }

    private static long offset(String record) {
        return Long.parseLong(record.substring(record.indexOf('@') + 1));
    }

    private Process consume(String bootstrap, int index) throws IOException {
        return new ProcessBuilder(Tidemark.command("consume", "--bootstrap", bootstrap, "--topic", TOPIC, "--group",
                "k", "--commit", "--timeout", "10s", "--output", "json"))
                .redirectOutput(dir.resolve("consumer-" + index + ".out").toFile())
                .redirectError(dir.resolve("consumer-" + index + ".err").toFile()).start();
    }

    /** What consumer {@code index} printed so far, as "partition@offset", in the order printed. */
    private List<String> printed(int index) throws IOException {
        Path out = dir.resolve("consumer-" + index + ".out");
        List<String> records = new ArrayList<>();
        if (Files.exists(out)) {
            Matcher m = PRINTED.matcher(Files.readString(out, StandardCharsets.UTF_8));
            while (m.find()) {
                records.add(m.group(1) + "@" + m.group(2));
            }
        }
        return records;
    }

    private static void produce(String bootstrap) {
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap).lingerMs(5).build())) {
            long next = System.nanoTime();
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord(TOPIC, i % PARTITIONS, null,
                        ("record " + i).getBytes(StandardCharsets.UTF_8)));
                next += RECORD_INTERVAL_NANOS;
                LockSupport.parkNanos(next - System.nanoTime());
            }
            producer.flush();
        }
    }
}
