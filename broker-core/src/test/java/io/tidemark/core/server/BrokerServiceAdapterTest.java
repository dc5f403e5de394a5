package io.tidemark.core.server;

import com.codahale.metrics.MetricRegistry;
import io.grpc.stub.StreamObserver;
import io.tidemark.core.auth.AclIndex;
import io.tidemark.core.auth.Authorizer;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.quota.ClientQuotas;
import io.tidemark.core.config.HostPort;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.LogTestUtils;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.partition.LocalPartition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.FetchResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
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

class BrokerServiceAdapterTest {
    @TempDir
    Path dir;
    private static final InstantSource CLOCK = InstantSource.fixed(java.time.Instant.ofEpochMilli(
            LogTestUtils.BASE_MS));
    private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-rpc-pool"));

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    /**
     * A long-polling fetch woken by an append is answered on the RPC pool: the thread that appended (a partition
     * group's apply thread, which serves every partition of the group) never reads the segment nor writes the answer.
     */
    @Test
    void aLongPollingFetchWokenByAnAppendIsAnsweredOnThePoolNotOnTheAppendingThread() throws Exception {
        LocalPartition partition = LocalPartition.open(new TopicPartition("t", 0), 1, dir, TopicConfig.parse(Map.of()),
                CLOCK);
        Topic topic = new Topic("t", new UUID(1, 1), 1, Map.of(), TopicConfig.parse(Map.of()), List.of(partition));
        BrokerConfig config = BrokerConfig.of(1, dir, new HostPort("127.0.0.1", 0), Optional.empty(), Map.of(),
                "test");
        BrokerServiceAdapter adapter = adapter(topic, config, ClientQuotas.UNLIMITED);
        CompletableFuture<String> answeredOn = new CompletableFuture<>();
        adapter.fetch(FetchRequest.newBuilder().setTopic("t").setPartition(0).setOffset(0).setMaxBytes(1 << 20)
                .setMaxWaitMs(30_000).build(), new StreamObserver<>() {
                    @Override
                    public void onNext(FetchResponse response) {
                        answeredOn.complete(Thread.currentThread().getName() + " " + response.getHighWatermark());
                    }

                    @Override
                    public void onError(Throwable t) {
                        answeredOn.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        partition.append(LogTestUtils.singleRecordBatch(0, LogTestUtils.BASE_MS)).join();
        await().atMost(Duration.ofSeconds(10)).until(answeredOn::isDone);
        assertEquals("test-rpc-pool 1", answeredOn.join());
        partition.close();
    }

    private BrokerServiceAdapter adapter(Topic topic, BrokerConfig config, long fetchBytesPerSecond) {
        return new BrokerServiceAdapter(new OneTopic(topic), config, List::of, new BrokerMetrics(new MetricRegistry()),
                pool, new Authorizer(config.auth(), () -> AclIndex.EMPTY, new MetricRegistry()),
                new ClientQuotas(ClientQuotas.UNLIMITED, fetchBytesPerSecond, Map::of, CLOCK, new MetricRegistry()));
    }

    /**
     * A fetch answer over the principal's fetch quota says by how much it was held back: a second of burst, then
     * the bytes over the rate (the clock stands still, so the second fetch of the same bytes waits their whole time).
     */
    @Test
    void aFetchOverItsQuotaCarriesItsThrottleTime() throws Exception {
        LocalPartition partition = LocalPartition.open(new TopicPartition("t", 0), 1, dir, TopicConfig.parse(Map.of()),
                CLOCK);
        Topic topic = new Topic("t", new UUID(1, 1), 1, Map.of(), TopicConfig.parse(Map.of()), List.of(partition));
        BrokerConfig config = BrokerConfig.of(1, dir, new HostPort("127.0.0.1", 0), Optional.empty(), Map.of(),
                "test");
        partition.append(LogTestUtils.singleRecordBatch(0, LogTestUtils.BASE_MS)).join();
        int bytes = (int) partition.read(0, 1 << 20).batches().remaining();
        BrokerServiceAdapter adapter = adapter(topic, config, bytes * 4L);
        FetchRequest fetch = FetchRequest.newBuilder().setTopic("t").setPartition(0).setOffset(0).setMaxBytes(1 << 20)
                .build();
        List<Long> throttles = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            throttles.add(fetchNow(adapter, fetch).getThrottleTimeMs());
        }
        assertEquals(List.of(0L, 0L, 0L, 0L, 250L, 500L), throttles, "4 fetches of the rate's quarter fit the burst");
        partition.close();
    }

    private static FetchResponse fetchNow(BrokerServiceAdapter adapter, FetchRequest request) {
        AnswerObserver<FetchResponse> observer = new AnswerObserver<>();
        adapter.fetch(request, observer);
        await().atMost(Duration.ofSeconds(10)).until(observer.answer::isDone);
        return observer.answer.join();
    }
}
