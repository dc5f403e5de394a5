package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static java.util.stream.Collectors.groupingBy;
import static java.util.stream.Collectors.mapping;
import static java.util.stream.Collectors.toList;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProducerTest {
    private static final long START_MS = 1_700_000_000_000L;
    private static final TopicPartition T0 = new TopicPartition("t", 0);

    private final ManualClock clock = new ManualClock(START_MS);
    private FakeCluster cluster;
    private final List<TidemarkProducer> producers = new ArrayList<>();

    @BeforeEach
    void start() {
        cluster = new FakeCluster(2, clock);
        cluster.createTopic("t", 2);
    }

    @AfterEach
    void stop() throws InterruptedException {
        producers.forEach(p -> p.close(Duration.ofMillis(100)));
        cluster.close();
    }

    private TidemarkProducer producer(Consumer<ProducerConfig.Builder> settings) {
        ProducerConfig.Builder builder = ProducerConfig.builder(cluster.bootstrap()).clock(clock)
                .channelFactory(cluster::channel).lingerMs(0).retryBackoffMs(0);
        settings.accept(builder);
        TidemarkProducer producer = new TidemarkProducer(builder.build());
        producers.add(producer);
        return producer;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static TidemarkException failure(CompletableFuture<?> future) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(5, TimeUnit.SECONDS));
        return assertInstanceOf(TidemarkException.class, e.getCause());
    }

    /** The base sequences of the batches the fake received for {@code tp}, in arrival order. */
    private List<Integer> baseSequences(TopicPartition tp) {
        return cluster.producedHeaders.stream().filter(h -> h.partition().equals(tp))
                .map(FakeCluster.ProducerFields::baseSequence).toList();
    }

    private List<String> values(TopicPartition tp) {
        return cluster.records(tp).stream().map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList();
    }

    private static long offset(TidemarkProducer producer, String value) throws Exception {
        return producer.send(new ProducerRecord("t", 0, null, bytes(value))).get(5, TimeUnit.SECONDS).offset();
    }

    @Test
    void recordsOfOnePartitionArriveInOrderWithExactOffsetsAndSendTimes() throws Exception {
        TidemarkProducer producer = producer(b -> { });
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        List<Long> expectedSendTimes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Long given = i % 2 == 0 ? START_MS - 5_000 + i : null;
            expectedSendTimes.add(given != null ? given : clock.millis());
            futures.add(producer.send(new ProducerRecord("t", 0, bytes("k" + i), bytes("v" + i), given,
                    List.of(new Header("h", bytes("x" + i))))));
            clock.advance(10);
        }
        List<Record> stored = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            RecordMetadata metadata = futures.get(i).get(5, TimeUnit.SECONDS);
            stored = cluster.records(T0);
            assertEquals(new RecordMetadata("t", 0, i, stored.get(i).receiveTimeMs(), expectedSendTimes.get(i)),
                    metadata);
        }
        assertEquals(6, stored.size());
        for (int i = 0; i < 6; i++) {
            Record record = stored.get(i);
            assertEquals(i, record.offset());
            assertArrayEquals(bytes("k" + i), record.key());
            assertArrayEquals(bytes("v" + i), record.value());
            assertEquals(List.of(new Header("h", bytes("x" + i))), record.headers());
            assertEquals(expectedSendTimes.get(i), record.sendTimeMs());
        }
        assertEquals(START_MS + 10 * 6, clock.millis());
    }

    @Test
    void aBatchSizeThatFitsExactlyNRecordsMakesNSendsOneProduceRequest() throws Exception {
        int n = 4;
        byte[] value = new byte[10];
        RecordBatchBuilder exact = new RecordBatchBuilder();
        for (int i = 0; i < n; i++) {
            exact.append(START_MS, null, value);
        }
        TidemarkProducer producer = producer(b -> b.lingerMs(60_000).batchSizeBytes(exact.sizeInBytes()));
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            futures.add(producer.send(new ProducerRecord("t", 0, null, value, START_MS)));
        }
        for (int i = 0; i < n; i++) {
            assertEquals(new RecordMetadata("t", 0, i, START_MS, START_MS), futures.get(i).get(5, TimeUnit.SECONDS));
        }
        assertEquals(List.of("1:t-0:4"), cluster.appended);
        assertEquals(1, cluster.count("Produce"));

        CompletableFuture<RecordMetadata> lingering = producer.send(new ProducerRecord("t", 0, null, value, START_MS));
        assertFalse(lingering.isDone());
        producer.flush();
        assertEquals(4, lingering.get(5, TimeUnit.SECONDS).offset());
        assertEquals(List.of("1:t-0:4", "1:t-0:1"), cluster.appended);
    }

    @Test
    void theBatchesReadyForOneLeaderGoInOneProduceManyAndEachIsAnsweredOnItsOwn() throws Exception {
        cluster.createTopic("wide", 4);
        cluster.lead(new TopicPartition("wide", 3), 2);
        cluster.refusedValues.put("bad", ErrorCode.INVALID_TIMESTAMP);
        TidemarkProducer producer = producer(b -> b.lingerMs(60_000));
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (String value : List.of("a", "bad", "c", "d")) {
            futures.add(producer.send(new ProducerRecord("wide", futures.size(), null, bytes(value), START_MS)));
        }
        producer.flush();

        assertEquals(List.of("1:3", "2:1"), cluster.produceManyCalls.stream().sorted().toList(),
                "one call per leader, served concurrently");
        assertEquals(new RecordMetadata("wide", 0, 0, START_MS, START_MS), futures.get(0).get(5, TimeUnit.SECONDS));
        TidemarkException refused = failure(futures.get(1));
        assertEquals(ErrorCode.INVALID_TIMESTAMP, refused.code());
        assertEquals("record 0 of the batch holds the refused value bad; the whole batch was rejected",
                refused.getMessage());
        assertEquals(new RecordMetadata("wide", 2, 0, START_MS, START_MS), futures.get(2).get(5, TimeUnit.SECONDS));
        assertEquals(new RecordMetadata("wide", 3, 0, START_MS, START_MS), futures.get(3).get(5, TimeUnit.SECONDS));
    }

    @Test
    void batchesForOneLeaderSplitIntoRequestsOfAtMostMaxRequestBytes() throws Exception {
        cluster.createTopic("wide", 3);
        byte[] value = new byte[400];
        TidemarkProducer producer = producer(b -> b.lingerMs(60_000).maxRequestBytes(1_024).batchSizeBytes(1_024));
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            futures.add(producer.send(new ProducerRecord("wide", p, null, value, START_MS)));
        }
        producer.flush();

        assertEquals(List.of("1:1", "1:2"), cluster.produceManyCalls.stream().sorted().toList(),
                "two calls, served concurrently");
        for (CompletableFuture<RecordMetadata> future : futures) {
            assertEquals(0, future.get(5, TimeUnit.SECONDS).offset());
        }
    }

    @Test
    void recordsWithTheSameKeyGoToTheKeyHashPartition() throws Exception {
        cluster.createTopic("wide", 8);
        TidemarkProducer producer = producer(b -> { });
        for (int i = 0; i < 40; i++) {
            byte[] key = bytes("key-" + (i % 20));
            RecordMetadata metadata = producer.send(new ProducerRecord("wide", key, bytes("v"))).get(5,
                    TimeUnit.SECONDS);
            assertEquals(Partitioner.keyPartition(key, 8), metadata.partition());
        }
        long used = cluster.logs.entrySet().stream()
                .filter(e -> e.getKey().topic().equals("wide") && e.getValue().endOffset() > 0).count();
        assertTrue(used >= 5, "20 keys should land in at least 5 of 8 partitions, got " + used);
    }

    @Test
    void notLeaderRefreshesMetadataAndRetriesOnTheNewLeaderWithoutDuplicate() throws Exception {
        TidemarkProducer producer = producer(b -> { });
        assertEquals(0, producer.send(new ProducerRecord("t", 0, null, bytes("r0"))).get(5, TimeUnit.SECONDS)
                .offset());
        cluster.notLeaderNamesLeader = false;
        cluster.lead(T0, 2);
        cluster.calls.clear();

        RecordMetadata metadata = producer.send(new ProducerRecord("t", 0, null, bytes("r1"))).get(5,
                TimeUnit.SECONDS);

        assertEquals(1, metadata.offset());
        assertEquals(List.of("Produce@1", "Metadata@1", "Produce@2"), cluster.calls);
        assertEquals(1, cluster.count("Metadata"));
        assertEquals(List.of("1:t-0:1", "2:t-0:1"), cluster.appended);
        assertEquals(List.of("r0", "r1"), cluster.records(T0).stream()
                .map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList());
        assertEquals(List.of("node 1 does not lead t-0"), cluster.errorsSent);
    }

    @Test
    void notLeaderNamingTheNewLeaderIsResentThereAtOnceAndOnlyOnceWithoutBackoff() throws Exception {
        TidemarkProducer producer = producer(b -> b.retryBackoffMs(60_000));
        assertEquals(0, offset(producer, "r0"));
        cluster.lead(T0, 2);
        cluster.calls.clear();

        assertEquals(1, offset(producer, "r1"));
        assertEquals(List.of("Produce@1", "Produce@2"), cluster.calls.stream().filter(c -> c.startsWith("Produce"))
                .toList(), "node 1 named node 2: no wait for the backoff (60 s on a clock that does not move)");
        assertEquals(START_MS, clock.millis());

        cluster.failNext("Produce", 1, TidemarkException.notLeader("node 2 says node 1 leads", 1,
                cluster.address(1)));
        cluster.failNext("Produce", 1, TidemarkException.notLeader("node 1 says node 2 leads", 2,
                cluster.address(2)));
        CompletableFuture<RecordMetadata> pingPong = producer.send(new ProducerRecord("t", 0, null, bytes("r2")));
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.count("Produce") >= 4);
        assertFalse(pingPong.isDone(), "redirected twice in a row: the second retry waits for the backoff");
        clock.advance(60_000);
        assertEquals(2, pingPong.get(5, TimeUnit.SECONDS).offset());
    }

    /**
     * Node 1 hands t-0 over to node 2 (epoch 2) and refuses a batch naming it; node 2 dies at once and node 1 is
     * elected again (epoch 3). The metadata names node 1 again, the broker that refused: the refusal's leader is older
     * news and the batch goes to node 1, instead of to the dead node 2 for as long as node 1 leads (ManyPartitionsIT).
     */
    @Test
    void aLeaderNamedByARefusalIsLeftOnceTheMetadataNamesALeaderOfALaterEpoch() throws Exception {
        TidemarkProducer producer = producer(b -> { });
        assertEquals(0, offset(producer, "r0"));
        cluster.lead(T0, 2);
        cluster.lead(T0, 1);
        cluster.down.add(2);
        cluster.failNext("Produce", 1, TidemarkException.notLeader("node 2 leads t-0, not this broker", 2, 2,
                cluster.address(2)));
        cluster.calls.clear();

        assertEquals(1, offset(producer, "r1"));
        assertEquals(List.of("1:t-0:1", "1:t-0:1"), cluster.appended);
        assertTrue(cluster.count("Produce@2") <= 1, "node 2 was tried once at most (the refusal's redirect, unless "
                + "the refresh it asked for came first): " + cluster.calls);
    }

    /**
     * A metadata answer older than a refusal (it names the refusing broker, in an earlier epoch than the one the
     * refusal named its successor in) does not send the retries back to the refusing broker.
     */
    @Test
    void aMetadataAnswerOlderThanARefusalDoesNotSendTheRetriesBack() throws Exception {
        TidemarkProducer producer = producer(b -> { });
        assertEquals(0, offset(producer, "r0"));
        cluster.down.add(2);
        cluster.failNext("Produce", 1, TidemarkException.notLeader("node 2 leads t-0, not this broker", 2, 2,
                cluster.address(2)));
        cluster.calls.clear();

        CompletableFuture<RecordMetadata> r1 = producer.send(new ProducerRecord("t", 0, null, bytes("r1")));
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.count("Produce@2") >= 3
                && cluster.count("Metadata") >= 2);
        assertEquals(1, cluster.count("Produce@1"), "every retry after the refusal went to node 2: the metadata "
                + "(node 1, epoch 1) is older than the refusal's leader (node 2, epoch 2): " + cluster.calls);
        cluster.down.remove(2);
        cluster.lead(T0, 2);
        assertEquals(1, r1.get(5, TimeUnit.SECONDS).offset());
        assertEquals(List.of("1:t-0:1", "2:t-0:1"), cluster.appended);
    }

    @Test
    void aBootstrapBrokerCutOffFromTheOthersIsLeftForOneThatKnowsTheLeaders() throws Exception {
        TidemarkProducer producer = producer(b -> { });
        assertEquals(0, offset(producer, "r0"));
        cluster.cutOff.add(1);
        cluster.lead(T0, 2);
        cluster.failNext("Produce", 1, TidemarkException.notLeader("node 1 lost its leadership",
                TidemarkException.NO_LEADER, ""));
        cluster.calls.clear();

        assertEquals(1, offset(producer, "r1"));
        assertEquals(List.of("Produce@1", "Metadata@1", "Metadata@2", "Produce@2"), cluster.calls,
                "node 1 names no leader: the next refresh asks node 2, which metadata named");
    }

    @Test
    void aRetriableErrorIsRetriedUntilTheBrokerAcknowledges() throws Exception {
        cluster.failNext("Produce", 2, new TidemarkException(ErrorCode.NOT_AVAILABLE, "broker starting"));
        TidemarkProducer producer = producer(b -> { });
        RecordMetadata metadata = producer.send(new ProducerRecord("t", 0, null, bytes("r"), START_MS)).get(5,
                TimeUnit.SECONDS);
        assertEquals(new RecordMetadata("t", 0, 0, START_MS, START_MS), metadata);
        assertEquals(3, cluster.count("Produce"));
        assertEquals(List.of("1:t-0:1"), cluster.appended);
    }

    @Test
    void aProduceCutByADyingBrokerIsRetriedNotFailedAsAnInternalError() throws Exception {
        cluster.cutNext("Produce", 2);
        TidemarkProducer producer = producer(b -> { });
        assertEquals(0, producer.send(new ProducerRecord("t", 0, null, bytes("r"))).get(5, TimeUnit.SECONDS)
                .offset());
        assertEquals(3, cluster.count("Produce"));
        assertEquals(List.of("1:t-0:1"), cluster.appended);
    }

    @Test
    void aNonRetriableErrorFailsOnlyThatRecordWithTheBrokersMessage() throws Exception {
        TidemarkProducer producer = producer(b -> { });
        long tooLate = START_MS + FakeLog.SEND_TIME_AFTER_MAX_MS + 1;
        CompletableFuture<RecordMetadata> bad = producer.send(new ProducerRecord("t", 0, null, bytes("bad"), tooLate));
        CompletableFuture<RecordMetadata> good = producer.send(new ProducerRecord("t", 1, null, bytes("ok"), START_MS));

        TidemarkException error = failure(bad);
        assertEquals(ErrorCode.INVALID_TIMESTAMP, error.code());
        assertEquals(List.of(error.getMessage()), cluster.errorsSent);
        assertTrue(error.getMessage().contains("SendTime " + tooLate), error.getMessage());
        assertEquals(new RecordMetadata("t", 1, 0, START_MS, START_MS), good.get(5, TimeUnit.SECONDS));
        assertEquals(0, cluster.log(T0).endOffset());
        assertEquals(2, cluster.count("Produce@1"));
    }

    /**
     * Sends r1, r2 (SendTime past the broker's window) and r3 to t-0 in one lingering batch, flushes, and checks
     * that only r2 failed, with the broker's message for its own batch.
     */
    private void sendThreeOneOfWhichTheBrokerRefuses(TidemarkProducer producer) throws Exception {
        long tooLate = START_MS + FakeLog.SEND_TIME_AFTER_MAX_MS + 1;
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        List<Integer> completionOrder = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 3; i++) {
            int index = i;
            futures.add(producer.send(new ProducerRecord("t", 0, null, bytes("r" + (i + 1)),
                    i == 1 ? tooLate : START_MS)));
            futures.get(i).whenComplete((metadata, error) -> completionOrder.add(index));
        }
        assertEquals(0, cluster.count("Produce"));
        producer.flush();

        assertEquals(new RecordMetadata("t", 0, 0, START_MS, START_MS), futures.get(0).get(5, TimeUnit.SECONDS));
        assertEquals(new RecordMetadata("t", 0, 1, START_MS, START_MS), futures.get(2).get(5, TimeUnit.SECONDS));
        TidemarkException error = failure(futures.get(1));
        assertEquals(ErrorCode.INVALID_TIMESTAMP, error.code());
        assertEquals(2, cluster.errorsSent.size());
        assertTrue(cluster.errorsSent.get(0).startsWith("record 1 of the batch has SendTime " + tooLate),
                cluster.errorsSent.get(0));
        assertEquals(cluster.errorsSent.get(1), error.getMessage());
        assertTrue(error.getMessage().startsWith("record 0 of the batch has SendTime " + tooLate),
                error.getMessage());
        assertEquals(List.of(0, 1, 2), completionOrder);
        assertEquals(List.of("t-0:3", "t-0:1", "t-0:1", "t-0:1"), cluster.produceRequests);
        assertEquals(List.of("r1", "r3"), cluster.records(T0).stream()
                .map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList());
        // the refused batch and r2 give their sequence back: r1 takes 0, r2 1, and r3 1 again
        assertEquals(List.of(0, 0, 1, 1), baseSequences(T0));
    }

    /** A producer whose batches hold one small record each and linger until a flush. */
    private TidemarkProducer oneRecordBatches(Consumer<ProducerConfig.Builder> settings) {
        int oneRecord = ProducerBatch.singleRecordBatchBytes(null, bytes("r0"), List.of());
        return producer(b -> settings.accept(b.lingerMs(60_000).batchSizeBytes(oneRecord)));
    }

    /**
     * Sends r{from}..r{to - 1} to t-0, one batch each, and starts a flush that makes them all ready at once, on a
     * thread of its own: the common pool has one thread on two cores, which a flush of another test still waiting
     * would hold.
     */
    private List<CompletableFuture<RecordMetadata>> sendAndFlush(TidemarkProducer producer, int from, int to) {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (int i = from; i < to; i++) {
            futures.add(producer.send(new ProducerRecord("t", 0, null, bytes("r" + i))));
        }
        Thread flush = new Thread(producer::flush, "test-flush");
        flush.setDaemon(true);
        flush.start();
        return futures;
    }

    /** The batch counts of the ProduceMany requests the fake received, in order. */
    private List<String> requestSizes() {
        return cluster.produceManyCalls.stream().map(call -> call.substring(call.indexOf(':') + 1)).toList();
    }

    @Test
    void aPartitionSendsUpToFiveBatchesBeforeTheFirstIsAnsweredOnceItAcknowledgedOneUnderItsId() throws Exception {
        TidemarkProducer producer = oneRecordBatches(b -> { });
        cluster.holdProduce = true;
        List<CompletableFuture<RecordMetadata>> futures = sendAndFlush(producer, 0, 8);

        // all eight are ready at once, but the first batch under a producer id goes alone (a broker takes any first
        // sequence of an id it does not know, so a batch behind it arriving first would be taken)
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 1);
        assertEquals(List.of("1"), requestSizes());
        cluster.releaseHeldProduces();
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 6);
        assertEquals(List.of("1", "5"), requestSizes(), "then five in flight, the most allowed");
        cluster.releaseHeldProduces();
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 8);
        assertEquals(List.of("1", "5", "2"), requestSizes());
        cluster.releaseHeldProduces();

        for (int i = 0; i < 8; i++) {
            assertEquals(i, futures.get(i).get(5, TimeUnit.SECONDS).offset());
        }
        assertEquals(List.of("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"), values(T0));
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), baseSequences(T0));
        assertEquals(1, cluster.produceStreams.get(), "one stream to the leader carried every request");
    }

    @Test
    void aBatchThatCanStillGrowWaitsForTheOneInFlightAndTakesTheRecordsThatComeMeanwhile() throws Exception {
        TidemarkProducer producer = producer(b -> { });
        assertEquals(0, offset(producer, "r0"));
        cluster.holdProduce = true;
        CompletableFuture<RecordMetadata> r1 = producer.send(new ProducerRecord("t", 0, null, bytes("r1")));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 1);
        CompletableFuture<RecordMetadata> r2 = producer.send(new ProducerRecord("t", 0, null, bytes("r2")));
        CompletableFuture<RecordMetadata> r3 = producer.send(new ProducerRecord("t", 0, null, bytes("r3")));
        cluster.holdProduce = false;
        cluster.releaseHeldProduces();

        assertEquals(3, r3.get(5, TimeUnit.SECONDS).offset());
        assertEquals(List.of(1L, 2L), List.of(r1.get().offset(), r2.get().offset()));
        assertEquals(List.of("t-0:1", "t-0:1", "t-0:2"), cluster.produceRequests,
                "r2's batch, ready at once (linger.ms 0) but not full, waited for r1's answer and took r3 too");
    }

    @Test
    void withOneInFlightOrWithoutIdempotenceAPartitionSendsOneBatchAtATime() throws Exception {
        for (Consumer<ProducerConfig.Builder> setting : List.<Consumer<ProducerConfig.Builder>>of(
                b -> b.maxInFlightPerPartition(1), b -> b.idempotence(false))) {
            cluster.produceManyCalls.clear();
            cluster.holdProduce = true;
            TidemarkProducer producer = oneRecordBatches(setting);
            List<CompletableFuture<RecordMetadata>> futures = sendAndFlush(producer, 0, 3);
            for (int batch = 0; batch < 3; batch++) {
                await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 1);
                cluster.heldProduces.clear();
                cluster.releaseHeldProduces();
            }
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(5, TimeUnit.SECONDS);
            assertEquals(List.of("1", "1", "1"), requestSizes());
        }
    }

    /**
     * Stores r0 alone, then sends r1, r2 and r3 to t-0 in batches of their own and holds them until all three are in
     * flight; the fake serves the Produce calls that come after.
     */
    private List<CompletableFuture<RecordMetadata>> threeInFlightAfterR0() throws Exception {
        TidemarkProducer producer = oneRecordBatches(b -> { });
        assertEquals(0, offset(producer, "r0"));
        cluster.holdProduce = true;
        List<CompletableFuture<RecordMetadata>> futures = sendAndFlush(producer, 1, 4);
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 3);
        cluster.holdProduce = false;
        return futures;
    }

    /**
     * A batch the old leader stored but answers late holds its partition's later batches until it is answered: none
     * goes to the new leader meanwhile, so the batch's retry finds itself among the partition's last batches and is
     * answered as a duplicate. They once went (the metadata had moved on, and the new leader takes requests in order
     * too): seven were stored after it, and its retry, too far behind for the broker to know it as a duplicate (it keeps
     * a producer's last 5 batches), failed OUT_OF_ORDER_SEQUENCE, 253 records of a side-by-side run lost to the
     * application (issue 23).
     */
    @Test
    void aBatchInFlightToTheOldLeaderHoldsItsPartitionsLaterBatchesUntilItIsAnswered() throws Exception {
        TidemarkProducer producer = oneRecordBatches(b -> { });
        assertEquals(0, offset(producer, "r0"));
        cluster.holdRepliesAfterStore = true;
        List<CompletableFuture<RecordMetadata>> stored = sendAndFlush(producer, 1, 2);
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldReleases.size() == 1);
        cluster.holdRepliesAfterStore = false;
        cluster.lead(T0, 2);
        cluster.lead(new TopicPartition("t", 1), 2);
        assertEquals(0, producer.send(new ProducerRecord("t", 1, null, bytes("s0"))).get(5, TimeUnit.SECONDS)
                .offset(), "t-1's NOT_LEADER made the producer read that node 2 leads both now");

        List<CompletableFuture<RecordMetadata>> later = sendAndFlush(producer, 2, 9);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                .until(() -> cluster.appended.stream().noneMatch(a -> a.startsWith("2:t-0")));
        cluster.releaseHeldProducesFailingTheFirst(new TidemarkException(ErrorCode.NOT_AVAILABLE,
                "the old leader's answer was lost"));

        assertEquals(1, stored.get(0).get(5, TimeUnit.SECONDS).offset(), "answered as the duplicate it is");
        for (int i = 0; i < later.size(); i++) {
            assertEquals(i + 2, later.get(i).get(5, TimeUnit.SECONDS).offset());
        }
        assertEquals(List.of("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"), values(T0), "each once");
    }

    @Test
    void aBatchAnsweredOutOfSequenceBehindOneThatFailedIsResentAfterItInOrder() throws Exception {
        List<CompletableFuture<RecordMetadata>> futures = threeInFlightAfterR0();
        cluster.releaseHeldProducesFailingTheFirst(new TidemarkException(ErrorCode.NOT_AVAILABLE,
                "the leader is busy"));

        for (int i = 0; i < 3; i++) {
            assertEquals(i + 1, futures.get(i).get(5, TimeUnit.SECONDS).offset());
        }
        assertEquals(List.of("r0", "r1", "r2", "r3"), values(T0));
        // r2 and r3 went behind r1, which failed: the broker refused them as out of sequence (r1 was not stored), and
        // they went again with their sequences after r1, one at a time
        assertEquals(List.of(0, 1, 2, 3, 1, 2, 3), baseSequences(T0));
        assertEquals(List.of("the leader is busy",
                "base sequence 2 does not follow the last stored sequence 0; expected 1",
                "base sequence 3 does not follow the last stored sequence 0; expected 1"), cluster.errorsSent);
    }

    @Test
    void batchesSentBehindOneTheBrokerRefusedAreRebuiltUnderANewProducerIdAndStoredOnce() throws Exception {
        cluster.refusedValues.put("r1", ErrorCode.INVALID_TIMESTAMP);
        List<CompletableFuture<RecordMetadata>> futures = threeInFlightAfterR0();
        cluster.releaseHeldProduces();

        assertEquals(ErrorCode.INVALID_TIMESTAMP, failure(futures.get(0)).code());
        assertEquals(1, futures.get(1).get(5, TimeUnit.SECONDS).offset());
        assertEquals(2, futures.get(2).get(5, TimeUnit.SECONDS).offset());
        assertEquals(List.of("r0", "r2", "r3"), values(T0));
        long first = producerId(0);
        List<FakeCluster.ProducerFields> headers = cluster.producedHeaders;
        assertEquals(List.of(first, first, first, first), headers.subList(0, 4).stream()
                .map(FakeCluster.ProducerFields::producerId).toList(), "r0..r3 under the first id");
        long renewed = headers.get(4).producerId();
        assertNotEquals(first, renewed, "r1's sequence could not be given back: r2 and r3 carried the ones behind");
        assertEquals(List.of(0, 1, 2, 3, 0, 1), baseSequences(T0));
        assertEquals(List.of(renewed, renewed), headers.subList(4, 6).stream()
                .map(FakeCluster.ProducerFields::producerId).toList(), "r2 and r3 rebuilt under the new id");
    }

    @Test
    void aBrokerWithoutProduceStreamIsSentUnaryCallsOneBatchOfAPartitionAtATime() throws Exception {
        cluster.noProduceStream = true;
        TidemarkProducer producer = oneRecordBatches(b -> { });
        assertEquals(0, offset(producer, "r0"));
        cluster.holdProduce = true;
        List<CompletableFuture<RecordMetadata>> futures = sendAndFlush(producer, 1, 3);
        for (int batch = 0; batch < 2; batch++) {
            await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 1);
            cluster.heldProduces.clear();
            cluster.releaseHeldProduces();
        }
        assertEquals(1, futures.get(0).get(5, TimeUnit.SECONDS).offset());
        assertEquals(2, futures.get(1).get(5, TimeUnit.SECONDS).offset());
        assertEquals(List.of("1", "1", "1"), requestSizes());
        assertEquals(0, cluster.produceStreams.get());

        cluster.holdProduce = false;
        cluster.noProduceStream = false;
        clock.advance(ProduceStreams.UNARY_MS);
        assertEquals(3, offset(producer, "r3"));
        assertEquals(1, cluster.produceStreams.get(), "a minute later the upgraded broker's stream is tried again");
    }

    @Test
    void aRequestWithoutAnAnswerWithinRequestTimeoutIsSentAgainOnANewStreamAndStoredOnce() throws Exception {
        TidemarkProducer producer = producer(b -> b.requestTimeoutMs(1_000));
        cluster.holdProduce = true;
        CompletableFuture<RecordMetadata> future = producer.send(new ProducerRecord("t", 0, null, bytes("r0")));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 1);

        clock.advance(1_000);
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 2);
        assertEquals(2, cluster.produceStreams.get(), "the stream that did not answer was replaced");
        assertFalse(future.isDone());
        cluster.releaseHeldProduces();

        assertEquals(0, future.get(5, TimeUnit.SECONDS).offset());
        assertEquals(List.of("r0"), values(T0), "the resend was a duplicate of the first attempt");
        assertEquals(List.of(0, 0), baseSequences(T0));
    }

    private long producerId(int index) {
        return cluster.producedHeaders.get(index).producerId();
    }

    @Test
    void aBatchRefusedForABadSendTimeIsSplitSoOnlyThatRecordFails() throws Exception {
        sendThreeOneOfWhichTheBrokerRefuses(producer(b -> b.lingerMs(60_000)));
    }

    @Test
    void aSplitBatchReleasesAllItsBufferMemory() throws Exception {
        byte[] value = new byte[235];
        int reservedPerRecord = ProducerBatch.maxRecordSizeBytes(null, value, List.of());
        assertEquals(1024, 4 * reservedPerRecord);
        TidemarkProducer producer = producer(b -> b.lingerMs(60_000).maxRequestBytes(1024).batchSizeBytes(1024)
                .bufferMemoryBytes(1024).maxBlockMs(2_000));
        sendThreeOneOfWhichTheBrokerRefuses(producer);

        cluster.holdProduce = true;
        for (int i = 0; i < 4; i++) {
            assertFalse(producer.send(new ProducerRecord("t", 0, null, value)).isDone());
        }
    }

    @Test
    void aSingleRecordBatchRefusedForABadSendTimeFailsWithoutBeingResent() {
        TidemarkProducer producer = producer(b -> b.lingerMs(60_000));
        long tooLate = START_MS + FakeLog.SEND_TIME_AFTER_MAX_MS + 1;
        CompletableFuture<RecordMetadata> bad = producer.send(new ProducerRecord("t", 0, null, bytes("bad"), tooLate));
        producer.flush();

        TidemarkException error = failure(bad);
        assertEquals(ErrorCode.INVALID_TIMESTAMP, error.code());
        assertEquals(List.of(error.getMessage()), cluster.errorsSent);
        assertEquals(List.of("t-0:1"), cluster.produceRequests);
        assertEquals(0, cluster.log(T0).endOffset());
    }

    @ParameterizedTest
    @EnumSource(value = ErrorCode.class, names = {"CORRUPT_BATCH", "RECORD_TOO_LARGE"})
    void aBatchRefusedForOneRecordIsSplitAheadOfTheNextBatchWhateverTheRecordError(ErrorCode code)
            throws Exception {
        cluster.refusedValues.put("bad", code);
        int twoRecords = new RecordBatchBuilder().append(START_MS, null, bytes("bad"))
                .append(START_MS, null, bytes("good")).sizeInBytes();
        TidemarkProducer producer = producer(b -> b.lingerMs(60_000).batchSizeBytes(twoRecords));
        CompletableFuture<RecordMetadata> bad = producer.send(new ProducerRecord("t", 0, null, bytes("bad")));
        CompletableFuture<RecordMetadata> good = producer.send(new ProducerRecord("t", 0, null, bytes("good")));
        CompletableFuture<RecordMetadata> next = producer.send(new ProducerRecord("t", 0, null, bytes("next")));
        producer.flush();

        TidemarkException error = failure(bad);
        assertEquals(code, error.code());
        assertEquals("record 0 of the batch holds the refused value bad; the whole batch was rejected",
                error.getMessage());
        assertEquals(0, good.get(5, TimeUnit.SECONDS).offset());
        assertEquals(1, next.get(5, TimeUnit.SECONDS).offset());
        assertEquals(List.of("t-0:2", "t-0:1", "t-0:1", "t-0:1"), cluster.produceRequests);
    }

    @Test
    void aFullBufferMemoryBlocksSendThenFailsNamingBufferMemoryAndMaxBlockMs() {
        cluster.holdProduce = true;
        TidemarkProducer producer = producer(b -> b.maxRequestBytes(1024).bufferMemoryBytes(1024)
                .batchSizeBytes(1024).maxBlockMs(1000));
        byte[] value = new byte[300];
        List<CompletableFuture<RecordMetadata>> accepted = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            accepted.add(producer.send(new ProducerRecord("t", 0, null, value)));
        }
        long startNanos = System.nanoTime();
        TidemarkException error = assertThrows(TidemarkException.class,
                () -> producer.send(new ProducerRecord("t", 0, null, value)));
        long blockedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);

        assertTrue(blockedMs >= 1000, "blocked " + blockedMs + " ms");
        assertEquals(ErrorCode.NOT_AVAILABLE, error.code());
        assertTrue(error.getMessage().startsWith("send blocked for max.block.ms=1000 waiting for room in"
                + " buffer.memory=1024 bytes: 963 bytes of records are not yet acknowledged and this record needs"
                + " 321"), error.getMessage());

        producer.close(Duration.ofMillis(50));
        for (CompletableFuture<RecordMetadata> future : accepted) {
            TidemarkException closed = failure(future);
            assertEquals(ErrorCode.NOT_AVAILABLE, closed.code());
            assertEquals("the producer was closed (close timeout 50 ms) before the record was acknowledged",
                    closed.getMessage());
        }
        assertThrows(IllegalStateException.class, () -> producer.send(new ProducerRecord("t", 0, null, value)));
    }

    @Test
    void aRecordLargerThanMaxRequestBytesFailsItsFuture() {
        TidemarkProducer producer = producer(b -> b.maxRequestBytes(1024).batchSizeBytes(512));
        int batchBytes = new RecordBatchBuilder().append(START_MS, null, new byte[1000]).sizeInBytes();
        TidemarkException error = failure(producer.send(new ProducerRecord("t", 0, null, new byte[1000])));
        assertEquals(ErrorCode.RECORD_TOO_LARGE, error.code());
        assertEquals(1068, batchBytes);
        assertEquals("a record of t needs a batch of 1068 bytes, more than max.request.bytes=1024; raise"
                + " max.request.bytes (and the topic's max.batch.bytes)", error.getMessage());
        assertEquals(0, cluster.count("Produce"));
    }

    @Test
    void aRecordLargerThanBatchSizeGetsABatchOfItsOwn() throws Exception {
        TidemarkProducer producer = producer(b -> b.maxRequestBytes(4096).batchSizeBytes(100).lingerMs(60_000));
        RecordMetadata metadata = producer.send(new ProducerRecord("t", 0, null, new byte[2000])).get(5,
                TimeUnit.SECONDS);
        assertEquals(0, metadata.offset());
        assertEquals(List.of("1:t-0:1"), cluster.appended);
    }

    @Test
    void flushSendsLingeringBatchesAndWaitsForTheirAcknowledgement() {
        TidemarkProducer producer = producer(b -> b.lingerMs(60_000));
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            futures.add(producer.send(new ProducerRecord("t", 1, null, bytes("v" + i))));
        }
        assertEquals(0, cluster.count("Produce"));
        producer.flush();
        for (int i = 0; i < 3; i++) {
            assertEquals(i, futures.get(i).join().offset());
        }
        assertEquals(List.of("1:t-1:3"), cluster.appended);
    }

    @Test
    void aRecordNotAcknowledgedWithinDeliveryTimeoutFailsWithTheLastError() {
        cluster.failNext("Produce", 3, new TidemarkException(ErrorCode.NOT_AVAILABLE, "broker starting"));
        TidemarkProducer producer = producer(b -> b.retryBackoffMs(50).deliveryTimeoutMs(1_000));
        CompletableFuture<RecordMetadata> future = producer.send(new ProducerRecord("t", 0, null, bytes("v")));
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.count("Produce") >= 1);
        clock.advance(2_000);

        TidemarkException error = failure(future);
        assertEquals(ErrorCode.NOT_AVAILABLE, error.code());
        // one attempt before the clock moved; a second may slip in between the sender's expiry check and its drain
        assertTrue(error.getMessage().matches("1 record\\(s\\) of t-0 not acknowledged within delivery.timeout.ms=1000"
                + " \\(2000 ms since the batch was opened, [12] attempt\\(s\\)\\); the last error: broker starting"),
                error.getMessage());
        assertEquals(0, cluster.log(T0).endOffset());
    }

    @Test
    void aSentBatchThatTimesOutUnansweredRenewsTheProducerIdSoLaterBatchesAreNotRefusedForTheGap() throws Exception {
        TidemarkProducer producer = producer(b -> b.retryBackoffMs(50).deliveryTimeoutMs(1_000));
        assertEquals(0, offset(producer, "r0"));
        cluster.failNext("Produce", 1, new TidemarkException(ErrorCode.NOT_AVAILABLE, "no quorum"));
        CompletableFuture<RecordMetadata> r1 = producer.send(new ProducerRecord("t", 0, null, bytes("r1")));
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.count("Produce") >= 2);
        clock.advance(2_000);
        assertEquals(ErrorCode.NOT_AVAILABLE, failure(r1).code());

        assertEquals(1, offset(producer, "r2"));
        List<FakeCluster.ProducerFields> sent = cluster.producedHeaders;
        assertEquals(List.of(0, 1, 0), baseSequences(T0), "r1 took sequence 1 and was never stored; r2 starts over");
        assertEquals(sent.get(0).producerId(), sent.get(1).producerId());
        assertNotEquals(sent.get(1).producerId(), sent.get(2).producerId(), "r2 went under a new producer id");
        assertEquals(List.of("r0", "r2"), values(T0));
        assertEquals(List.of("no quorum"), cluster.errorsSent);
    }

    @Test
    void sendToAnUnknownTopicThrowsAfterMaxBlockMs() {
        TidemarkProducer producer = producer(b -> b.maxBlockMs(100).retryBackoffMs(20));
        TidemarkException error = assertThrows(TidemarkException.class,
                () -> producer.send(new ProducerRecord("missing", null, bytes("v"))));
        assertEquals(ErrorCode.UNKNOWN_TOPIC, error.code());
        assertTrue(error.getMessage().startsWith("topic missing is not in the cluster metadata after"
                + " max.block.ms=100"), error.getMessage());
    }

    @Test
    void sendToAPartitionTheTopicDoesNotHaveFailsTheFuture() {
        TidemarkProducer producer = producer(b -> { });
        TidemarkException error = failure(producer.send(new ProducerRecord("t", 7, null, bytes("v"))));
        assertEquals(ErrorCode.UNKNOWN_PARTITION, error.code());
        assertEquals("topic t has 2 partitions (0..1); partition 7 does not exist", error.getMessage());
    }

    @Test
    void twoProducersNumberEachPartitionsBatchesFromZeroUnderDistinctProducerIds() {
        int n = 3;
        List<TidemarkProducer> two = List.of(producer(b -> b.lingerMs(60_000)), producer(b -> b.lingerMs(60_000)));
        for (int round = 0; round < 3; round++) {
            for (TidemarkProducer producer : two) {
                for (int partition = 0; partition < 2; partition++) {
                    for (int i = 0; i < n; i++) {
                        producer.send(new ProducerRecord("t", partition, null, bytes("v" + round + i)));
                    }
                }
                producer.flush();
            }
        }

        Map<Long, Map<Integer, List<Integer>>> sequences = cluster.producedHeaders.stream().collect(groupingBy(
                FakeCluster.ProducerFields::producerId, LinkedHashMap::new, groupingBy(h -> h.partition().partition(),
                        mapping(FakeCluster.ProducerFields::baseSequence, toList()))));
        Map<Integer, List<Integer>> zeroNTwoN = Map.of(0, List.of(0, n, 2 * n), 1, List.of(0, n, 2 * n));
        assertEquals(List.of(zeroNTwoN, zeroNTwoN), List.copyOf(sequences.values()));
        assertTrue(sequences.keySet().stream().allMatch(id -> id >= 0), sequences.keySet().toString());
        assertTrue(cluster.producedHeaders.stream().allMatch(h -> h.epoch() == 0 && h.count() == n));
        assertEquals(List.of(), cluster.errorsSent);
        assertEquals(18, cluster.log(T0).endOffset());
        assertEquals(18, cluster.log(new TopicPartition("t", 1)).endOffset());
    }

    @Test
    void aStoredBatchWhoseReplyWasLostIsRetriedAndAcknowledgedWithItsStoredOffsetsStoredOnce() throws Exception {
        TidemarkProducer producer = producer(b -> b.lingerMs(60_000));
        CompletableFuture<RecordMetadata> r0 = producer.send(new ProducerRecord("t", 0, null, bytes("r0")));
        producer.flush();
        assertEquals(0, r0.get(5, TimeUnit.SECONDS).offset());
        cluster.repliesToLose.set(1);

        CompletableFuture<RecordMetadata> r1 = producer.send(new ProducerRecord("t", 0, null, bytes("r1")));
        CompletableFuture<RecordMetadata> r2 = producer.send(new ProducerRecord("t", 0, null, bytes("r2")));
        producer.flush();

        List<Record> stored = cluster.records(T0);
        assertEquals(new RecordMetadata("t", 0, 1, stored.get(1).receiveTimeMs(), START_MS), r1.get(5,
                TimeUnit.SECONDS));
        assertEquals(new RecordMetadata("t", 0, 2, stored.get(2).receiveTimeMs(), START_MS), r2.get(5,
                TimeUnit.SECONDS));
        assertEquals(List.of("t-0:1", "t-0:2", "t-0:2"), cluster.produceRequests);
        assertEquals(List.of("1:t-0:1", "1:t-0:2"), cluster.appended);
        assertEquals(List.of("the reply to a stored batch was lost"), cluster.errorsSent);
        assertEquals(List.of("r0", "r1", "r2"), values(T0));
        assertEquals(List.of(0, 1, 1), baseSequences(T0));

        CompletableFuture<RecordMetadata> r3 = producer.send(new ProducerRecord("t", 0, null, bytes("r3")));
        producer.flush();
        assertEquals(3, r3.get(5, TimeUnit.SECONDS).offset());
        assertEquals(List.of(0, 1, 1, 3), baseSequences(T0));
    }

    @Test
    void afterABatchRefusedForItsRecordTheNextBatchTakesItsSequenceAndIsAccepted() throws Exception {
        TidemarkProducer producer = producer(b -> { });
        long tooLate = START_MS + FakeLog.SEND_TIME_AFTER_MAX_MS + 1;
        assertEquals(0, offset(producer, "r0"));
        TidemarkException error = failure(producer.send(new ProducerRecord("t", 0, null, bytes("bad"), tooLate)));
        assertEquals(ErrorCode.INVALID_TIMESTAMP, error.code());

        assertEquals(1, offset(producer, "r2"));
        assertEquals(List.of(0, 1, 1), baseSequences(T0));
        assertEquals(List.of(error.getMessage()), cluster.errorsSent);
        assertEquals(List.of("r0", "r2"), values(T0));
    }

    @ParameterizedTest
    @EnumSource(value = ErrorCode.class, names = {"OUT_OF_ORDER_SEQUENCE", "INVALID_PRODUCER_EPOCH"})
    void aSequenceOrEpochRefusalFailsTheBatchWithoutRetryAndTheNextBatchTakesItsSequence(ErrorCode code)
            throws Exception {
        TidemarkProducer producer = producer(b -> { });
        assertEquals(0, offset(producer, "r0"));
        cluster.failNext("Produce", 1, new TidemarkException(code, "refused by the test"));

        TidemarkException error = failure(producer.send(new ProducerRecord("t", 0, null, bytes("r1"))));
        assertEquals(code, error.code());
        assertEquals("refused by the test", error.getMessage());
        assertEquals(1, offset(producer, "r2"));
        assertEquals(3, cluster.count("Produce"));
        assertEquals(List.of(0, 1, 1), baseSequences(T0));
    }

    @Test
    void withoutIdempotenceBatchesCarryNoProducerIdAndALostReplyStoresTheBatchTwice() throws Exception {
        TidemarkProducer producer = producer(b -> b.idempotence(false));
        assertEquals(0, offset(producer, "r0"));
        cluster.repliesToLose.set(1);
        assertEquals(2, offset(producer, "r1"));

        FakeCluster.ProducerFields none = new FakeCluster.ProducerFields(T0, -1, (short) -1, -1, 1);
        assertEquals(List.of(none, none, none), cluster.producedHeaders);
        assertEquals(List.of("r0", "r1", "r1"), values(T0));
    }
}
