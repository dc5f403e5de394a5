package io.tidemark.it;

import io.grpc.ManagedChannel;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.OffsetAndMetadata;
import io.tidemark.client.api.OffsetSpec;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.ProducerRecord;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transactions checked the way Jepsen checked Kafka's: a read-process-write pipeline (consume {@code in}, write each
 * input's output to {@code out} tagged with its transaction, send the consumed positions to the transaction, commit)
 * runs while the brokers fail, then a read_committed reader reads {@code out}:
 * <ul>
 *   <li>every input's output is visible exactly once (nothing lost, no aborted or duplicated output visible);</li>
 *   <li>no transaction is torn: a transaction whose output is visible is visible whole;</li>
 *   <li>reads are monotonic: each partition's offsets only grow as the reader reads.</li>
 * </ul>
 * The faults: the leader of {@code __group_offsets} (the transaction coordinator, mid two-phase commit) and the leader
 * of an output partition killed with SIGKILL and restarted; the coordinator isolated from the other brokers until
 * they elect another, then healed (the deposed one may still be writing markers of the transactions it decided). Each
 * fault begins while the pipeline has ten transactions to run, and the next waits until they committed. The pipeline,
 * on any error, drops its producer and consumer and starts again from the committed positions (a new producer
 * instance fences the old one and aborts what it left open).
 */
class TransactionChaosIT {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final int INPUTS_PER_PARTITION = 150;
    private static final int PARTITIONS = 3;

    @TempDir
    Path dir;

    @Test
    void leadersKilledMidTransactionLoseAndDuplicateNothing() throws Exception {
        try (ClusterProcesses cluster = new ClusterProcesses(dir, Map.of())) {
            try (TidemarkAdmin admin = cluster.admin()) {
                prepare(admin, cluster.bootstrap(), cluster.channels());
                try (Pipeline pipeline = Pipeline.start(cluster.bootstrap(), cluster.channels())) {
                    for (String victim : List.of("__group_offsets", "out", "__group_offsets")) {
                        int node = leader(admin, victim);
                        long from = pipeline.allow(10);
                        cluster.kill(node);
                        pipeline.awaitCommitted(from + 10);
                        cluster.start(node);
                        cluster.awaitReady();
                    }
                    pipeline.awaitDone();
                }
                check(admin, cluster.bootstrap(), cluster.channels());
            }
        }
    }

    @Test
    void anIsolatedCoordinatorLosesAndDuplicatesNothing() throws Exception {
        try (ClusterProcesses cluster = ClusterProcesses.throughLinks(dir, Map.of())) {
            try (TidemarkAdmin admin = cluster.admin()) {
                prepare(admin, cluster.bootstrap(), cluster.channels());
                try (Pipeline pipeline = Pipeline.start(cluster.bootstrap(), cluster.channels())) {
                    for (int round = 0; round < 2; round++) {
                        int coordinator = leader(admin, "__group_offsets");
                        long from = pipeline.allow(10);
                        cluster.links().isolate(coordinator);
                        try (TidemarkAdmin majority = cluster.admin(coordinator % 3 + 1)) {
                            await().atMost(WAIT).ignoreException(TidemarkException.class).until(() -> {
                                int leader = leader(majority, "__group_offsets");
                                return leader != coordinator;
                            });
                        }
                        cluster.links().healAll();
                        pipeline.awaitCommitted(from + 10);
                    }
                    pipeline.awaitDone();
                }
                check(admin, cluster.bootstrap(), cluster.channels());
            }
        }
    }

    private static void prepare(TidemarkAdmin admin, String bootstrap, Function<String, ManagedChannel> channels) {
        admin.createTopic("in", PARTITIONS, 3, Map.of());
        admin.createTopic("out", PARTITIONS, 3, Map.of());
        try (TidemarkProducer input = new TidemarkProducer(ProducerConfig.builder(bootstrap)
                .channelFactory(channels).build())) {
            for (int p = 0; p < PARTITIONS; p++) {
                for (int i = 0; i < INPUTS_PER_PARTITION; i++) {
                    input.send(new ProducerRecord("in", p, null, bytes("in-" + p + "-" + i)));
                }
            }
            input.flush();
        }
    }

    /** Any broker's view of who leads partition 0 of {@code topic}, once one does. */
    private static int leader(TidemarkAdmin admin, String topic) {
        AtomicInteger leader = new AtomicInteger();
        await().atMost(WAIT).ignoreException(TidemarkException.class).until(() -> {
            leader.set(admin.describeTopics(List.of(topic)).get(0).getPartitions(0).getLeaderNodeId());
            return leader.get() > 0;
        });
        return leader.get();
    }

    private static void check(TidemarkAdmin admin, String bootstrap, Function<String, ManagedChannel> channels) {
        List<TopicPartition> out = IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition("out", p)).toList();
        Map<TopicPartition, Long> ends = new HashMap<>();
        // a partition's leadership may still be moving (the balancer gives it back to the restarted broker): its
        // lookup is retried as a client would (NOT_AVAILABLE "no leader with a known address" failed a run here)
        await().atMost(WAIT).ignoreExceptionsMatching(e -> e instanceof TidemarkException t && t.retriable())
                .untilAsserted(() -> out.forEach(tp -> ends.put(tp, admin.listOffsets(tp, OffsetSpec.latest())
                        .logEndOffset())));
        List<ConsumerRecord> read = new ArrayList<>();
        Map<TopicPartition, Long> lastOffsets = new HashMap<>();
        try (TidemarkConsumer reader = new TidemarkConsumer(ConsumerConfig.builder(bootstrap)
                .channelFactory(channels).autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)
                .isolationLevel(ConsumerConfig.IsolationLevel.READ_COMMITTED).build())) {
            reader.assign(out);
            await().atMost(WAIT).until(() -> {
                for (ConsumerRecord record : reader.poll(Duration.ofMillis(200))) {
                    Long last = lastOffsets.put(record.topicPartition(), record.offset());
                    assertTrue(last == null || record.offset() > last, "monotonic reads: " + record.topicPartition()
                            + " went from offset " + last + " to " + record.offset());
                    read.add(record);
                }
                return out.stream().allMatch(tp -> reader.position(tp) >= ends.get(tp));
            });
        }
        Map<String, Long> outputsPerInput = read.stream().collect(Collectors.groupingBy(
                r -> text(r).substring(text(r).indexOf(':') + 1), TreeMap::new, Collectors.counting()));
        List<String> duplicated = outputsPerInput.entrySet().stream().filter(e -> e.getValue() > 1)
                .map(Map.Entry::getKey).toList();
        assertEquals(List.of(), duplicated, "inputs whose output is visible more than once");
        TreeSet<String> missing = new TreeSet<>();
        for (int p = 0; p < PARTITIONS; p++) {
            for (int i = 0; i < INPUTS_PER_PARTITION; i++) {
                if (!outputsPerInput.containsKey("in-" + p + "-" + i)) {
                    missing.add("in-" + p + "-" + i);
                }
            }
        }
        assertEquals(new TreeSet<>(), missing, "inputs whose output is not visible; where the producer was told "
                + "they went: " + Pipeline.whereStored(missing));
        Map<String, Long> perTransaction = read.stream().collect(Collectors.groupingBy(
                r -> text(r).substring(0, text(r).indexOf(':')), Collectors.counting()));
        perTransaction.forEach((transaction, visible) -> assertEquals(Pipeline.SIZES.get(transaction), visible,
                "transaction " + transaction + " is torn: " + visible + " of its outputs are visible"));
        System.out.println("transaction chaos: " + read.size() + " outputs in " + perTransaction.size()
                + " committed transactions; " + Pipeline.SIZES.size() + " transactions begun; the pipeline restarted "
                + Pipeline.RESTARTS.get() + " times");
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(ConsumerRecord record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }

    /**
     * The read-process-write loop, on its own thread: each transaction gets a unique name, and each of its outputs is
     * {@code name:input}; {@link #SIZES} keeps how many outputs each transaction sent. It begins a transaction only
     * with a permit ({@link #allow}), so the faults hit it while it runs; {@link #awaitDone} lets it run to the end.
     */
    private static final class Pipeline implements AutoCloseable {
        static final Map<String, Long> SIZES = new ConcurrentHashMap<>();
        static final AtomicInteger RESTARTS = new AtomicInteger();
        /** Each output sent, to where the producer said it was stored or why it failed. */
        private static final Map<String, String> STORED = new ConcurrentHashMap<>();
        private static final AtomicInteger TRANSACTIONS = new AtomicInteger();
        private final String bootstrap;
        private final Function<String, ManagedChannel> channels;
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicBoolean done = new AtomicBoolean();
        private final AtomicLong committedTransactions = new AtomicLong();
        private final Semaphore permits = new Semaphore(0);
        private final Thread thread;

        private Pipeline(String bootstrap, Function<String, ManagedChannel> channels) {
            this.bootstrap = bootstrap;
            this.channels = channels;
            this.thread = new Thread(this::run, "transaction-chaos-pipeline");
        }

        /** What the producer said of the outputs of {@code inputs}; an input absent was never sent. */
        static Map<String, String> whereStored(Set<String> inputs) {
            return STORED.entrySet().stream().filter(e -> inputs.contains(e.getKey().substring(
                    e.getKey().indexOf(':') + 1))).collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue,
                    (a, b) -> a, TreeMap::new));
        }

        static Pipeline start(String bootstrap, Function<String, ManagedChannel> channels) {
            Pipeline pipeline = new Pipeline(bootstrap, channels);
            pipeline.thread.start();
            return pipeline;
        }

        /** Lets {@code transactions} more transactions begin; the transactions committed so far. */
        long allow(int transactions) {
            long committed = committedTransactions.get();
            permits.release(transactions);
            return committed;
        }

        void awaitCommitted(long transactions) {
            await().atMost(WAIT).until(() -> committedTransactions.get() >= transactions);
        }

        /** Lets it run to the end of its input, and waits for it. */
        void awaitDone() {
            permits.release(Integer.MAX_VALUE / 2);
            await().atMost(WAIT).until(done::get);
        }

        private void run() {
            List<TopicPartition> in = IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition("in", p))
                    .toList();
            while (!stop.get() && !done.get()) {
                try (TidemarkConsumer consumer = new TidemarkConsumer(ConsumerConfig.builder(bootstrap)
                        .channelFactory(channels).group("chaos-pipeline").enableAutoCommit(false)
                        .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).maxPollRecords(5)
                        .requestTimeoutMs(5_000).isolationLevel(ConsumerConfig.IsolationLevel.READ_COMMITTED)
                        .build());
                     TidemarkProducer producer = new TidemarkProducer(ProducerConfig.builder(bootstrap)
                             .channelFactory(channels).transactionalId("chaos-pipeline").requestTimeoutMs(5_000)
                             .deliveryTimeoutMs(20_000).maxBlockMs(20_000).build())) {
                    consumer.assign(in);
                    producer.initTransactions();
                    while (!stop.get() && !done.get()) {
                        transact(consumer, producer, in);
                    }
                } catch (RuntimeException e) {
                    RESTARTS.incrementAndGet();
                    System.out.println("pipeline restarts after: " + e);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private void transact(TidemarkConsumer consumer, TidemarkProducer producer, List<TopicPartition> in)
                throws InterruptedException {
            if (!permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                return;
            }
            List<ConsumerRecord> read;
            try {
                read = consumer.poll(Duration.ofMillis(100));
            } catch (RuntimeException e) {
                permits.release();
                throw e;
            }
            if (read.isEmpty()) {
                permits.release();
                done.set(in.stream().allMatch(tp -> consumer.position(tp) >= INPUTS_PER_PARTITION));
                return;
            }
            String name = "t" + TRANSACTIONS.incrementAndGet();
            SIZES.put(name, (long) read.size());
            try {
                producer.beginTransaction();
                for (ConsumerRecord record : read) {
                    String value = name + ":" + text(record);
                    producer.send(new ProducerRecord("out", record.partition(), null, bytes(value)))
                            .whenComplete((m, e) -> STORED.put(value, e == null ? "out-" + m.partition() + "@"
                                    + m.offset() : e.toString()));
                }
                Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
                in.forEach(tp -> positions.put(tp, new OffsetAndMetadata(consumer.position(tp))));
                producer.sendOffsetsToTransaction(positions, consumer.groupMetadata());
                producer.commitTransaction();
            } catch (RuntimeException e) {
                // not committed: the test allowed a number of commits, so the permit goes back
                permits.release();
                throw e;
            }
            committedTransactions.incrementAndGet();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(WAIT.toMillis());
        }
    }
}
