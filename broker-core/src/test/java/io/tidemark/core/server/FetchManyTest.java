package io.tidemark.core.server;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.auth.AclIndex;
import io.tidemark.core.auth.Authorizer;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.HostPort;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.LogTestUtils;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.partition.LocalPartition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.quota.ClientQuotas;
import io.tidemark.core.topic.Topic;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchManyRequest;
import io.tidemark.proto.v1.FetchManyResponse;
import io.tidemark.proto.v1.FetchOutcome;
import io.tidemark.proto.v1.FetchPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** FetchMany on one broker: each partition read or refused alone, the answer's room, and the long poll over all. */
class FetchManyTest {
    private static final InstantSource CLOCK = InstantSource.fixed(Instant.ofEpochMilli(LogTestUtils.BASE_MS));
    private static final UUID TOPIC_ID = new UUID(1, 1);

    @TempDir
    Path dir;
    private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-rpc-pool"));
    private final List<LocalPartition> partitions = new ArrayList<>();
    private BrokerServiceAdapter adapter;

    @BeforeEach
    void start() throws IOException {
        for (int p = 0; p < 3; p++) {
            partitions.add(LocalPartition.open(new TopicPartition("t", p), 1, dir.resolve("t-" + p),
                    TopicConfig.parse(Map.of()), CLOCK));
        }
        Topic topic = new Topic("t", TOPIC_ID, 1, Map.of(), TopicConfig.parse(Map.of()), List.copyOf(partitions));
        BrokerConfig config = BrokerConfig.of(1, dir, new HostPort("127.0.0.1", 0), Optional.empty(), Map.of(),
                "test");
        adapter = new BrokerServiceAdapter(new OneTopic(topic), config, List::of,
                new BrokerMetrics(new MetricRegistry()), pool,
                new Authorizer(config.auth(), () -> AclIndex.EMPTY, new MetricRegistry()),
                new ClientQuotas(ClientQuotas.UNLIMITED, ClientQuotas.UNLIMITED, Map::of, CLOCK,
                        new MetricRegistry()));
    }

    @AfterEach
    void stop() throws IOException {
        pool.shutdownNow();
        for (LocalPartition partition : partitions) {
            partition.close();
        }
    }

    /**
     * Records, an empty partition, an offset past the end, an unknown topic and an unknown partition in one call:
     * each answered in request order as its own Fetch would be, at once (an error is something to answer, so the
     * call does not wait its 30 s).
     */
    @Test
    void eachPartitionIsReadOrRefusedOnItsOwnInRequestOrder() {
        append(0, 0);
        append(0, 1);
        FetchManyResponse answer = fetchMany(request(30_000, 1 << 20, part("t", 0, 0), part("t", 1, 0),
                part("t", 2, 5), part("nope", 0, 0), part("t", 7, 0)));

        List<FetchOutcome> outcomes = answer.getOutcomesList();
        assertEquals(5, outcomes.size());
        assertEquals(2, outcomes.get(0).getFetched().getHighWatermark());
        assertEquals(sizeOfBatches(0, 0), outcomes.get(0).getFetched().getBatches().size());
        assertEquals(0, outcomes.get(1).getFetched().getHighWatermark());
        assertTrue(outcomes.get(1).getFetched().getBatches().isEmpty());
        assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, outcomes.get(2).getRefused().getCode());
        assertEquals(ErrorCode.UNKNOWN_TOPIC, outcomes.get(3).getRefused().getCode());
        assertEquals("topic 'nope' does not exist", outcomes.get(3).getRefused().getMessage());
        assertEquals(ErrorCode.UNKNOWN_PARTITION, outcomes.get(4).getRefused().getCode());
    }

    /**
     * Nothing to read anywhere: the call waits, and the first append to any of its partitions answers it (on the
     * pool), with that partition's batch; every other partition's wait is forgotten.
     */
    @Test
    void aLongPollOverAllPartitionsIsAnsweredByTheFirstAppendToAny() {
        CompletableFuture<FetchManyResponse> answer = start(request(30_000, 1 << 20, part("t", 0, 0),
                part("t", 1, 0), part("t", 2, 0)));
        await().atMost(Duration.ofSeconds(10)).until(() -> partitions.get(0).appendWaiters() == 1);
        assertFalse(answer.isDone());

        append(2, 0);

        FetchManyResponse fetched = await().atMost(Duration.ofSeconds(10)).until(() -> answer.getNow(null),
                a -> a != null);
        assertEquals(List.of(0L, 0L, 1L), fetched.getOutcomesList().stream()
                .map(o -> o.getFetched().getHighWatermark()).toList());
        assertEquals(sizeOfBatches(2, 0), fetched.getOutcomes(2).getFetched().getBatches().size());
        assertEquals(List.of(0, 0, 0), partitions.stream().map(LocalPartition::appendWaiters).toList());
    }

    /** A wait that times out answers every partition empty, and leaves no waiter behind on any. */
    @Test
    void aLongPollThatTimesOutLeavesNoWaiterBehind() {
        FetchManyResponse answer = fetchMany(request(20, 1 << 20, part("t", 0, 0), part("t", 1, 0)));

        assertEquals(2, answer.getOutcomesCount());
        assertTrue(answer.getOutcomesList().stream().allMatch(o -> o.getFetched().getBatches().isEmpty()));
        assertEquals(List.of(0, 0, 0), partitions.stream().map(LocalPartition::appendWaiters).toList());
    }

    /**
     * The answer's room is one batch: the first partition gets its whole batch, the next is answered with no batch
     * but with its high watermark, so the reader knows it has records and asks again.
     */
    @Test
    void whenTheRoomRunsOutTheRestAreAnsweredWhereTheyStand() {
        append(0, 0);
        append(1, 0);
        int oneBatch = sizeOfBatches(0, 0);
        FetchManyResponse answer = fetchMany(request(0, oneBatch, part("t", 0, 0), part("t", 1, 0)));

        assertEquals(oneBatch, answer.getOutcomes(0).getFetched().getBatches().size());
        assertTrue(answer.getOutcomes(1).getFetched().getBatches().isEmpty());
        assertEquals(1, answer.getOutcomes(1).getFetched().getHighWatermark());

        FetchManyResponse smaller = fetchMany(request(0, 1, part("t", 0, 0)));
        assertEquals(oneBatch, smaller.getOutcomes(0).getFetched().getBatches().size(),
                "a first batch larger than the room comes whole");
    }

    /** A partition's max_bytes outside what the broker allows fails the call, naming the partition and the bound. */
    @Test
    void aPartitionsMaxBytesOutsideTheBrokersLimitFailsTheCall() {
        FetchManyRequest request = FetchManyRequest.newBuilder().setMaxBytes(1 << 20).addPartitions(
                FetchPartition.newBuilder().setTopic("t").setPartition(1).setMaxBytes(0)).build();

        CompletableFuture<FetchManyResponse> answer = start(request);
        await().atMost(Duration.ofSeconds(10)).until(answer::isDone);
        TidemarkException e = GrpcErrors.fromThrowable(assertThrows(Exception.class, answer::join).getCause());
        assertEquals(ErrorCode.INVALID_REQUEST, e.code());
        assertEquals("max_bytes 0 of t-1 is not allowed: 1 to 16777216 (max.fetch.bytes)", e.getMessage());
    }

    private void append(int partition, int n) {
        partitions.get(partition).append(LogTestUtils.singleRecordBatch(n, LogTestUtils.BASE_MS)).join();
    }

    private int sizeOfBatches(int partition, long offset) {
        return partitions.get(partition).read(offset, 1 << 20).batches().remaining();
    }

    private static FetchPartition part(String topic, int partition, long offset) {
        return FetchPartition.newBuilder().setTopic(topic).setPartition(partition).setOffset(offset)
                .setMaxBytes(1 << 20).build();
    }

    private static FetchManyRequest request(long maxWaitMs, int maxBytes, FetchPartition... partitions) {
        return FetchManyRequest.newBuilder().setMaxWaitMs(maxWaitMs).setMaxBytes(maxBytes)
                .addAllPartitions(List.of(partitions)).build();
    }

    private FetchManyResponse fetchMany(FetchManyRequest request) {
        CompletableFuture<FetchManyResponse> answer = start(request);
        await().atMost(Duration.ofSeconds(10)).until(answer::isDone);
        return answer.join();
    }

    private CompletableFuture<FetchManyResponse> start(FetchManyRequest request) {
        AnswerObserver<FetchManyResponse> observer = new AnswerObserver<>();
        adapter.fetchMany(request, observer);
        return observer.answer;
    }
}
