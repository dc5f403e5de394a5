package io.tidemark.core.server;

import com.codahale.metrics.MetricRegistry;
import io.grpc.stub.StreamObserver;
import io.tidemark.core.auth.AclIndex;
import io.tidemark.core.auth.Authorizer;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.HostPort;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.LogTestUtils;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.partition.LocalPartition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.FetchResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Collection;
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
                InstantSource.fixed(java.time.Instant.ofEpochMilli(LogTestUtils.BASE_MS)));
        Topic topic = new Topic("t", new UUID(1, 1), 1, Map.of(), TopicConfig.parse(Map.of()), List.of(partition));
        BrokerConfig config = BrokerConfig.of(1, dir, new HostPort("127.0.0.1", 0), Optional.empty(), Map.of(),
                "test");
        BrokerServiceAdapter adapter = new BrokerServiceAdapter(new OneTopic(topic), config, List::of,
                new BrokerMetrics(new MetricRegistry()), pool, new Authorizer(config.auth(), () -> AclIndex.EMPTY,
                new MetricRegistry()));
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

    private record OneTopic(Topic topic) implements Topics {
        @Override
        public Topic create(String name, int partitions, int replicationFactor, Map<String, String> overrides) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void delete(String name) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Topic alterConfig(String name, Map<String, String> set, Collection<String> remove) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Topic topic(String name) {
            if (!name.equals(topic.name())) {
                throw Topic.unknown(name);
            }
            return topic;
        }

        @Override
        public List<Topic> topics() {
            return List.of(topic);
        }
    }
}
