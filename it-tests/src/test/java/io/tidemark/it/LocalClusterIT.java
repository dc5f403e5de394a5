package io.tidemark.it;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tidemark local up}: three broker processes; while an idempotent producer writes a bounded stream to a
 * three-partition topic, the leader of each partition in turn is killed with SIGKILL and restarted. Every record
 * must be acknowledged and there exactly once, offsets contiguous, ReceiveTime never decreasing, SendTime as the
 * producer set it.
 */
class LocalClusterIT {
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 45_000;

    @TempDir
    Path dir;
    private int basePort;

    @BeforeEach
    void up() throws Exception {
        basePort = FreePorts.freeBasePort();
        Tidemark.Result up = Tidemark.run(dir, "local", "up", "--data-dir", dir.toString(), "--base-port",
                Integer.toString(basePort));
        assertEquals(0, up.exitCode(), up.out() + up.err());
        assertTrue(up.out().contains("Bootstrap: " + bootstrap()), up.out());
    }

    @AfterEach
    void down() throws Exception {
        Tidemark.run(dir, "local", "down", "--data-dir", dir.toString());
    }

    private String bootstrap() {
        return "127.0.0.1:" + basePort + ",127.0.0.1:" + (basePort + 10) + ",127.0.0.1:" + (basePort + 20);
    }

    @Test
    void leaderOfEachPartitionKilledInTurnUnderLoadLosesNoAcknowledgedRecord() throws Exception {
        Tidemark.Result created = Tidemark.run(dir, "topics", "create", "--bootstrap", bootstrap(), "--topic", "chaos",
                "--partitions", Integer.toString(PARTITIONS), "--replication-factor", "3");
        assertEquals(0, created.exitCode(), created.err());
        await().atMost(Duration.ofSeconds(60)).until(() -> IntStream.range(0, PARTITIONS).allMatch(p -> leader(p) > 0));

        long sendTimeBase = Clock.systemUTC().millis() - RECORDS;
        List<String> values = new ArrayList<>();
        Map<String, Long> sendTimes = new HashMap<>();
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).lingerMs(2)
                .deliveryTimeoutMs(90_000).build())) {
            for (int i = 0; i < RECORDS; i++) {
                int partition = i % PARTITIONS;
                String value = partition + ":" + i;
                values.add(value);
                sendTimes.put(value, sendTimeBase + i);
                sent.add(producer.send(new ProducerRecord("chaos", partition, null,
                        value.getBytes(StandardCharsets.UTF_8), sendTimeBase + i)));
                if (i % (RECORDS / (PARTITIONS + 1)) == 0 && i > 0 && i / (RECORDS / (PARTITIONS + 1)) <= PARTITIONS) {
                    killAndRestartLeaderOf(i / (RECORDS / (PARTITIONS + 1)) - 1);
                }
            }
            producer.flush();
        }
        Set<String> acknowledged = PartitionChecker.acknowledged(values, sent);
        assertEquals(RECORDS, acknowledged.size(), "every send acknowledged through the kills; first failure: "
                + PartitionChecker.firstFailure(sent));
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            List<ConsumerRecord> records = PartitionChecker.check(bootstrap(), new TopicPartition("chaos", p),
                    acknowledged.stream().filter(v -> v.startsWith(partition + ":")).collect(Collectors.toSet()),
                    sendTimes);
            assertEquals(RECORDS / PARTITIONS, records.size(), "partition " + p + " holds its records exactly once");
        }
    }

    /** SIGKILLs the broker leading {@code partition} while the producer runs, then starts it again. */
    private void killAndRestartLeaderOf(int partition) throws Exception {
        int leader = await("a leader of partition " + partition).atMost(Duration.ofSeconds(60))
                .until(() -> leader(partition), known -> known > 0);
        ProcessHandle process = ProcessHandle.of(Long.parseLong(Files.readString(dir.resolve(
                "default/node-" + leader + "/broker.pid")).trim())).orElseThrow();
        process.destroyForcibly();
        process.onExit().get();
        Tidemark.Result restarted = Tidemark.run(dir, "local", "up", "--data-dir", dir.toString());
        assertEquals(0, restarted.exitCode(), restarted.out() + restarted.err() + brokerLogTails());
    }

    /** The last lines of every broker's log, for a failure message. */
    private String brokerLogTails() throws IOException {
        StringBuilder tails = new StringBuilder();
        for (int node = 1; node <= 3; node++) {
            List<String> lines = Files.readAllLines(dir.resolve("default/node-" + node + "/broker.log"));
            tails.append("\n--- node ").append(node).append(" ---\n")
                    .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size())));
        }
        return tails.toString();
    }

    /** The leader of a partition of "chaos" as the cluster reports it, -1 while unknown. */
    private int leader(int partition) {
        try {
            Tidemark.Result described = Tidemark.run(dir, "topics", "describe", "--bootstrap", bootstrap(), "--topic",
                    "chaos", "--output", "json");
            Matcher m = Pattern.compile("\"partition\":" + partition + ",\"leader\":(-?\\d+)").matcher(described.out());
            return m.find() ? Integer.parseInt(m.group(1)) : -1;
        } catch (Exception e) {
            return -1;
        }
    }
}
