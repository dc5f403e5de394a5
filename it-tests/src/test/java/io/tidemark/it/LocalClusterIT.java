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
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tidemark local up}: three broker processes, then the leader of a partition killed with SIGKILL while a
 * producer writes to it, and restarted. Every acknowledged record must be there, offsets contiguous, ReceiveTime
 * never decreasing.
 */
class LocalClusterIT {
    private static final int RECORDS = 3000;

    @TempDir
    Path dir;
    private int basePort;

    @BeforeEach
    void up() throws Exception {
        basePort = freeBasePort();
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

    /** A base port whose 3 nodes' client, metrics and Raft ports are all free now. */
    private static int freeBasePort() throws IOException {
        Random random = new Random();
        for (int attempt = 0; attempt < 100; attempt++) {
            int base = 20_000 + random.nextInt(2_000) * 10;
            if (allFree(base)) {
                return base;
            }
        }
        throw new IllegalStateException("no free port range found");
    }

    private static boolean allFree(int base) {
        for (int node = 0; node < 3; node++) {
            for (int offset : new int[] {0, 1, 5}) {
                try (ServerSocket socket = new ServerSocket(base + 10 * node + offset)) {
                    socket.setReuseAddress(true);
                } catch (IOException e) {
                    return false;
                }
            }
        }
        return true;
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
        Set<String> acknowledged = new HashSet<>();
        for (int i = 0; i < RECORDS; i++) {
            if (!sent.get(i).isCompletedExceptionally()) {
                sent.get(i).join();
                acknowledged.add("r" + i);
            }
        }
        assertTrue(acknowledged.size() > RECORDS / 2, "most records acknowledged: " + acknowledged.size());

        Tidemark.Result restarted = Tidemark.run(dir, "local", "up", "--data-dir", dir.toString());
        assertEquals(0, restarted.exitCode(), restarted.out() + restarted.err());

        List<ConsumerRecord> records = new ArrayList<>();
        try (TidemarkConsumer consumer = new TidemarkConsumer(ConsumerConfig.builder(bootstrap())
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).build())) {
            consumer.assign(List.of(new TopicPartition("chaos", 0)));
            List<Tidemark.Result> latest = new ArrayList<>();
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                latest.add(0, Tidemark.run(dir, "offsets", "--bootstrap", bootstrap(), "--topic", "chaos", "--latest"));
                return latest.get(0).exitCode() == 0;
            });
            long end = Long.parseLong(latest.get(0).out().trim().split(":")[2]);
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                records.addAll(consumer.poll(Duration.ofMillis(200)));
                return records.size() >= end;
            });
        }
        Set<String> stored = new HashSet<>();
        for (int i = 0; i < records.size(); i++) {
            ConsumerRecord r = records.get(i);
            assertEquals(i, r.offset(), "offsets are contiguous");
            if (i > 0) {
                assertTrue(r.receiveTimeMs() >= records.get(i - 1).receiveTimeMs(), "ReceiveTime never decreases");
            }
            stored.add(new String(r.value(), StandardCharsets.UTF_8));
        }
        acknowledged.removeAll(stored);
        assertEquals(Set.of(), acknowledged, "every acknowledged record is stored");
    }

    private int leader() throws Exception {
        Tidemark.Result described = Tidemark.run(dir, "topics", "describe", "--bootstrap", bootstrap(), "--topic",
                "chaos", "--output", "json");
        Matcher m = Pattern.compile("\"leader\":(-?\\d+)").matcher(described.out());
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }
}
