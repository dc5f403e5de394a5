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

/** One batch a partition at a time, idempotent across retries, and a sequence that follows what was stored. */
class PartitionWriterTest {
    private static final long START_MS = 1_700_000_000_000L;
    private static final TopicPartition T0 = new TopicPartition("t", 0);

    private final ManualClock clock = new ManualClock(START_MS);
    private FakeCluster cluster;
    private PartitionWriter writer;

    @BeforeEach
    void start() {
        cluster = new FakeCluster(1, clock);
        cluster.createTopic("t", 1);
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
    void aRefusedBatchGivesItsSequenceBack() throws Exception {
        cluster.failNext("Produce", 1, new TidemarkException(ErrorCode.ORIGIN_OFFSET_HELD, "held"));
        assertEquals(ErrorCode.ORIGIN_OFFSET_HELD, failure(writer.write(T0, batch("a"))).code());
        ok(writer.write(T0, batch("b")));
        assertEquals(List.of(0, 0), baseSequences());
    }

    @Test
    void onlyOneBatchOfAPartitionIsOutstanding() throws Exception {
        cluster.holdProduce = true;
        CompletableFuture<ProduceResponse> held = writer.write(T0, batch("a"));
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.heldProduces.size() == 1);
        assertEquals("t-0 has a batch outstanding; a PartitionWriter writes one batch of a partition at a time",
                assertThrows(IllegalStateException.class, () -> writer.write(T0, batch("b"))).getMessage());
        writer.close();
        assertEquals(ErrorCode.NOT_AVAILABLE, failure(held).code());
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
