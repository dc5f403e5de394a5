package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ProduceResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A partition's batches stored in write order or not at all past a failed one, several in flight once its producer id
 * is known, idempotent across retries.
 */
class PartitionWriterTest {
    private static final long START_MS = 1_700_000_000_000L;
    private static final TopicPartition T0 = new TopicPartition("t", 0);

    private final ManualClock clock = new ManualClock(START_MS);
    private FakeCluster cluster;
    private PartitionWriter writer;

    @BeforeEach
    void start() {
        cluster = new FakeCluster(2, clock);
        cluster.createTopic("t", 2);
        writer = new PartitionWriter(ProducerConfig.builder(cluster.bootstrap()).clock(clock)
                .channelFactory(cluster::channel).retryBackoffMs(0).deliveryTimeoutMs(1000).build());
    }

    @AfterEach
    void stop() throws InterruptedException {
        writer.close();
        cluster.close();
    }

    private static RecordBatchBuilder batch(String... values) {
        RecordBatchBuilder builder = new RecordBatchBuilder();
        for (String value : values) {
            builder.append(START_MS, null, value.getBytes(StandardCharsets.UTF_8));
        }
        return builder;
    }

    private static ProduceResponse ok(CompletableFuture<ProduceResponse> write) throws Exception {
        return write.get(10, TimeUnit.SECONDS);
    }

    private static TidemarkException failure(CompletableFuture<ProduceResponse> write) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> write.get(10, TimeUnit.SECONDS));
        return assertInstanceOf(TidemarkException.class, e.getCause());
    }

    private List<Integer> baseSequences() {
        return cluster.producedHeaders.stream().map(FakeCluster.ProducerFields::baseSequence).toList();
    }

    @Test
    void aLostReplyIsRetriedAndAnsweredWithTheFirstResult() throws Exception {
        cluster.repliesToLose.set(1);
        ProduceResponse first = ok(writer.write(T0, batch("a", "b")));
        assertEquals(0, first.getBaseOffset());
        assertEquals(1, first.getLastOffset());
        assertEquals(2, ok(writer.write(T0, batch("c"))).getBaseOffset());
        assertEquals(List.of(0, 0, 2), baseSequences(), "the retry carried the same sequence");
        assertEquals(3, cluster.records(T0).size(), "stored once");
    }

    @Test
    void aWriteCutByADyingBrokerIsResentWithTheSameSequence() throws Exception {
        cluster.cutNext("Produce", 2);
        assertEquals(0, ok(writer.write(T0, batch("a"))).getBaseOffset());
        assertEquals(List.of(0, 0, 0), baseSequences());
        assertEquals(1, cluster.records(T0).size());
    }

    @Test
    void aWriteStillFailingAtTheDeliveryTimeoutFailsWithItsLastErrorNamingTheAttempts() {
        cluster.callTakesMs = 400;
        cluster.failNext("Produce", 100_000, new TidemarkException(ErrorCode.NOT_AVAILABLE, "no quorum"));
        TidemarkException timeout = failure(writer.write(T0, batch("a")));
        assertEquals(ErrorCode.NOT_AVAILABLE, timeout.code());
        assertEquals("batch of t-0 not acknowledged within delivery.timeout.ms=1000 (1 attempt(s)); the last error: "
                + "no quorum", timeout.getMessage(), "one attempt is the LeaderCaller's first metadata refresh, a "
                + "Produce, a refresh and a Produce: 1600 ms on the clock, no second attempt");
        assertEquals(2, cluster.count("Produce"));
    }

    @Test
    void aRefusedBatchMovesThePartitionToANewProducerId() throws Exception {
        cluster.failNext("Produce", 1, new TidemarkException(ErrorCode.ORIGIN_OFFSET_HELD, "held"));
        assertEquals(ErrorCode.ORIGIN_OFFSET_HELD, failure(writer.write(T0, batch("a"))).code());
        writer.resume(T0);
        assertEquals(0, ok(writer.write(T0, batch("b"))).getBaseOffset());
        assertEquals(List.of(0, 0), baseSequences());
        assertNotEquals(cluster.producedHeaders.get(0).producerId(), cluster.producedHeaders.get(1).producerId());
    }

    @Test
    void aPartitionsBatchesGoTogetherOnlyOnceItsProducerIdHadABatchStored() throws Exception {
        cluster.holdProduce = true;
        CompletableFuture<ProduceResponse> a = writer.write(T0, batch("a"));
        CompletableFuture<ProduceResponse> b = writer.write(T0, batch("b"));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 1);
        assertEquals(1, cluster.producedHeaders.size(), "b waits: a broker takes the first batch of a producer id "
                + "it does not know whatever its sequence, so b could be stored without a");
        cluster.releaseHeldProduces();
        assertEquals(0, ok(a).getBaseOffset());
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 2);
        CompletableFuture<ProduceResponse> c = writer.write(T0, batch("c"));
        CompletableFuture<ProduceResponse> d = writer.write(T0, batch("d"));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 4);
        cluster.releaseHeldProduces();
        assertEquals(List.of(1L, 2L, 3L), List.of(ok(b).getBaseOffset(), ok(c).getBaseOffset(),
                ok(d).getBaseOffset()));
        assertEquals(List.of(0, 1, 2, 3), baseSequences());
    }

    @Test
    void aPartitionTakesMaxInFlightBatchesUnanswered() throws Exception {
        ok(writer.write(T0, batch("a")));
        cluster.holdProduce = true;
        for (int i = 0; i < writer.maxInFlight(); i++) {
            writer.write(T0, batch("b" + i));
        }
        assertEquals("t-0 has 5 batches unanswered; a PartitionWriter takes max.in.flight.requests.per.partition=5"
                + " of a partition", assertThrows(IllegalStateException.class,
                () -> writer.write(T0, batch("c"))).getMessage());
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 5);
        cluster.holdProduce = false;
        cluster.releaseHeldProduces();
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.records(T0).size() == 6);
        assertEquals(6, ok(writer.write(T0, batch("c"))).getBaseOffset());
    }

    @Test
    void aRefusedBatchFailsTheBatchesWrittenAfterItAndNothingAfterItIsStored() throws Exception {
        ok(writer.write(T0, batch("a")));
        cluster.holdProduce = true;
        CompletableFuture<ProduceResponse> b = writer.write(T0, batch("b"));
        CompletableFuture<ProduceResponse> c = writer.write(T0, batch("c"));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 2);
        CompletableFuture<ProduceResponse> d = writer.write(T0, batch("d"));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 3);
        cluster.holdProduce = false;
        cluster.releaseHeldProducesFailingTheFirst(new TidemarkException(ErrorCode.INVALID_TIMESTAMP, "too old"));
        assertEquals(ErrorCode.INVALID_TIMESTAMP, failure(b).code());
        assertEquals(ErrorCode.OUT_OF_ORDER_SEQUENCE, failure(c).code(), "c was in flight: the broker refused it");
        assertEquals(ErrorCode.OUT_OF_ORDER_SEQUENCE, failure(d).code());
        writer.resume(T0);
        assertEquals(1, ok(writer.write(T0, batch("e"))).getBaseOffset());
        assertEquals(2, cluster.records(T0).size(), "a and e");
        FakeCluster.ProducerFields last = cluster.producedHeaders.get(cluster.producedHeaders.size() - 1);
        assertNotEquals(cluster.producedHeaders.get(0).producerId(), last.producerId());
        assertEquals(0, last.baseSequence());
    }

    @Test
    void aBatchWrittenAfterAFailureFailsAtOnceUntilTheCallerResumesThePartition() throws Exception {
        cluster.failNext("Produce", 1, new TidemarkException(ErrorCode.RECORD_TOO_LARGE, "above max.batch.bytes"));
        CompletableFuture<ProduceResponse> refused = writer.write(T0, batch("a"));
        assertEquals(ErrorCode.RECORD_TOO_LARGE, failure(refused).code());
        TidemarkException unaware = failure(writer.write(T0, batch("b")));
        assertEquals(ErrorCode.OUT_OF_ORDER_SEQUENCE, unaware.code());
        assertEquals("batch of t-0 not sent: a batch of t-0 failed before it, and the writer takes t-0's batches again "
                + "once its caller resumes it", unaware.getMessage());
        assertEquals(0, ok(writer.write(new TopicPartition("t", 1), batch("c"))).getBaseOffset(),
                "another partition goes on");
        assertEquals(List.of(), cluster.records(T0), "b was not stored past a");
        writer.resume(T0);
        assertEquals(0, ok(writer.write(T0, batch("d"))).getBaseOffset());
        assertEquals(1, cluster.records(T0).size());
    }

    @Test
    void aBatchNotSentYetFailsWithTheFailureOfTheBatchBeforeIt() throws Exception {
        cluster.holdProduce = true;
        CompletableFuture<ProduceResponse> a = writer.write(T0, batch("a"));
        CompletableFuture<ProduceResponse> b = writer.write(T0, batch("b"));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 1);
        cluster.releaseHeldProducesFailingTheFirst(new TidemarkException(ErrorCode.CORRUPT_BATCH, "bad crc"));
        assertEquals(ErrorCode.CORRUPT_BATCH, failure(a).code());
        TidemarkException notSent = failure(b);
        assertEquals(ErrorCode.OUT_OF_ORDER_SEQUENCE, notSent.code());
        assertEquals("batch of t-0 not sent: the batch written before it failed (CORRUPT_BATCH: bad crc)",
                notSent.getMessage());
        assertEquals(1, cluster.producedHeaders.size());
    }

    @Test
    void aBatchRefusedOutOfTurnWhileTheOneBeforeItIsRetriedIsResentAfterIt() throws Exception {
        ok(writer.write(T0, batch("a")));
        cluster.holdProduce = true;
        CompletableFuture<ProduceResponse> b = writer.write(T0, batch("b"));
        CompletableFuture<ProduceResponse> c = writer.write(T0, batch("c"));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 2);
        cluster.holdProduce = false;
        cluster.releaseHeldProducesFailingTheFirst(new TidemarkException(ErrorCode.NOT_AVAILABLE, "no quorum"));
        assertEquals(List.of(1L, 2L), List.of(ok(b).getBaseOffset(), ok(c).getBaseOffset()));
        assertEquals(List.of("a", "b", "c"), cluster.records(T0).stream()
                .map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList());
    }

    /**
     * A write the old leader stored but answers late holds its partition's later writes until it is answered: sent to
     * the new leader meanwhile, they would be stored after it, and its retry found too far behind for the broker to
     * know it as a duplicate.
     */
    @Test
    void aWriteInFlightToTheOldLeaderHoldsItsPartitionsLaterWritesUntilItIsAnswered() throws Exception {
        ok(writer.write(T0, batch("a")));
        cluster.holdRepliesAfterStore = true;
        CompletableFuture<ProduceResponse> b = writer.write(T0, batch("b"));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldReleases.size() == 1);
        cluster.holdRepliesAfterStore = false;
        TopicPartition t1 = new TopicPartition("t", 1);
        cluster.lead(T0, 2);
        cluster.lead(t1, 2);
        assertEquals(0, ok(writer.write(t1, batch("s"))).getBaseOffset(), "t-1's NOT_LEADER made the writer read "
                + "that node 2 leads both now");

        List<CompletableFuture<ProduceResponse>> later = List.of(writer.write(T0, batch("c")),
                writer.write(T0, batch("d")));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                .until(() -> cluster.appended.stream().noneMatch(a -> a.startsWith("2:t-0")));
        cluster.releaseHeldProducesFailingTheFirst(new TidemarkException(ErrorCode.NOT_AVAILABLE,
                "the old leader's answer was lost"));

        assertEquals(1, ok(b).getBaseOffset(), "answered as the duplicate it is");
        assertEquals(List.of(2L, 3L), List.of(ok(later.get(0)).getBaseOffset(), ok(later.get(1)).getBaseOffset()));
        assertEquals(List.of("a", "b", "c", "d"), cluster.records(T0).stream()
                .map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList());
    }

    @Test
    void aBatchOfUnknownFateMovesThePartitionToANewProducerId() throws Exception {
        cluster.failNext("Produce", 100_000, new TidemarkException(ErrorCode.NOT_AVAILABLE, "down"));
        CompletableFuture<ProduceResponse> lost = writer.write(T0, batch("a"));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.producedHeaders.size() > 3);
        clock.advance(1000);
        TidemarkException timeout = failure(lost);
        assertEquals(ErrorCode.NOT_AVAILABLE, timeout.code());
        cluster.clearFailures("Produce");
        writer.resume(T0);
        ok(writer.write(T0, batch("b")));
        FakeCluster.ProducerFields last = cluster.producedHeaders.get(cluster.producedHeaders.size() - 1);
        assertNotEquals(cluster.producedHeaders.get(0).producerId(), last.producerId());
        assertEquals(0, last.baseSequence());
    }

    @Test
    void originOffsetOfATopicThatIsGoneFailsWithTheTidemarkExceptionItself() {
        Throwable error = writer.originOffset(new TopicPartition("gone", 0),
                        new OriginPartition("A", "gone", new UUID(0, 1), 0))
                .handle((answer, failure) -> failure).join();
        TidemarkException gone = assertInstanceOf(TidemarkException.class, error, "not wrapped in a "
                + "CompletionException: the mirror's copier tells a gone topic by its code");
        assertEquals(ErrorCode.UNKNOWN_TOPIC, gone.code());
    }

    @Test
    void aTopicThatIsGoneFailsTheWriteOnceTheLeaderCallerRefreshedAndTriedAgain() {
        cluster.failNext("Produce", 100_000, new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic t does not exist"));
        TidemarkException gone = failure(writer.write(T0, batch("a")));
        assertEquals(ErrorCode.UNKNOWN_TOPIC, gone.code());
        assertEquals("topic t does not exist", gone.getMessage(), "the broker's answer, at once: the clock stands "
                + "still, so a write retried until delivery.timeout.ms would never fail");
    }
}
