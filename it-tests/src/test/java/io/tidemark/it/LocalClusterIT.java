package io.tidemark.it;

import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.RecordMetadata;
import io.tidemark.client.api.TidemarkConsumer;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tidemark local up}: three broker processes, then the leader of a partition killed with SIGKILL while a
 * producer writes to it, and restarted. Every acknowledged record must be there exactly once, offsets
 * contiguous, ReceiveTime never decreasing.
 */
class LocalClusterIT {
    private static final int RECORDS = 3000;

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
    void leaderKilledUnderLoadLosesNoAcknowledgedRecord() throws Exception {
        Tidemark.Result created = Tidemark.run(dir, "topics", "create", "--bootstrap", bootstrap(), "--topic", "chaos",
                "--partitions", "1", "--replication-factor", "3");
        assertEquals(0, created.exitCode(), created.err());
        await().atMost(Duration.ofSeconds(60)).until(() -> leader() > 0);

        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        try (TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap()).lingerMs(2)
                .deliveryTimeoutMs(90_000).build())) {
            for (int i = 0; i < RECORDS; i++) {
                sent.add(producer.send(new ProducerRecord("chaos", 0, null, ("r" + i).getBytes(StandardCharsets.UTF_8))));
                if (i == RECORDS / 3) {
                    producer.flush();
                    int leader = leader();
                    ProcessHandle process = ProcessHandle.of(Long.parseLong(Files.readString(dir.resolve(
                            "default/node-" + leader + "/broker.pid")).trim())).orElseThrow();
                    process.destroyForcibly();
                    process.onExit().get();
                }
            }
            producer.flush();
        }
        List<String> values = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            values.add("r" + i);
        }
        Set<String> acknowledged = PartitionChecker.acknowledged(values, sent);
        assertTrue(acknowledged.size() > RECORDS / 2, "most records acknowledged: " + acknowledged.size());

        Tidemark.Result restarted = Tidemark.run(dir, "local", "up", "--data-dir", dir.toString());
        assertEquals(0, restarted.exitCode(), restarted.out() + restarted.err());
        PartitionChecker.check(bootstrap(), new TopicPartition("chaos", 0), acknowledged);
    }

    private int leader() throws Exception {
        Tidemark.Result described = Tidemark.run(dir, "topics", "describe", "--bootstrap", bootstrap(), "--topic",
                "chaos", "--output", "json");
        Matcher m = Pattern.compile("\"leader\":(-?\\d+)").matcher(described.out());
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }
}
