package io.tidemark.it;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.FetchResponse;
import io.tidemark.proto.v1.ListOffsetsRequest;
import io.tidemark.proto.v1.ProduceManyRequest;
import io.tidemark.proto.v1.ProduceManyResponse;
import io.tidemark.proto.v1.ProduceOutcome;
import io.tidemark.proto.v1.ProduceRequest;
import io.tidemark.proto.v1.ProduceResponse;
import io.tidemark.proto.v1.TopicSummary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Clients that try to take a broker down, against a real broker process with a small heap: many connections each
 * fetching 16 MiB answers they never read, and one client inventing 100,000 producer ids. The broker stays up and
 * answers; what it holds is bounded by its config, not by what clients ask.
 */
class ClientBoundsIT {
    private static final int MIB = 1 << 20;
    /** The broker's heap: far less than the 40 answers of 16 MiB the slow readers ask for. */
    private static final List<String> SMALL_HEAP = List.of("-Xmx192m");
    private static final int SLOW_READERS = 40;
    private static final int PRODUCER_IDS = 100_000;
    private static final int BATCHES_PER_REQUEST = 1_000;

    @TempDir
    Path dir;
    @RegisterExtension
    final StartedInTest running = new StartedInTest();

    private BrokerProcess broker(String... configLines) throws Exception {
        Path config = dir.resolve("broker.properties");
        Files.writeString(config, String.join("\n", configLines));
        BrokerProcess broker = BrokerProcess.startWithJvmOptions(SMALL_HEAP, FreePorts.freeBasePort(),
                dir.resolve("data"), dir, "--config", config.toString());
        running.add(broker::stop);
        return broker;
    }

    private ManagedChannel channel(String bootstrap) {
        ManagedChannel channel = NettyChannelBuilder.forTarget(bootstrap).usePlaintext()
                .maxInboundMessageSize(64 * MIB).build();
        running.add(() -> channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS));
        return channel;
    }

    private TidemarkAdmin admin(String bootstrap) {
        TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.builder(bootstrap).build());
        running.add(admin);
        return admin;
    }

    /** Creates a topic of one partition and waits until its partition has a leader. */
    private void createTopic(String bootstrap, String topic) {
        admin(bootstrap).createTopic(topic, 1, 1, Map.of());
        awaitLeader(bootstrap, topic);
    }

    private void awaitLeader(String bootstrap, String topic) {
        TidemarkAdmin admin = admin(bootstrap);
        await().atMost(Duration.ofSeconds(60)).until(() ->
                admin.describeTopics(List.of(topic)).get(0).getPartitions(0).getLeaderNodeId() > 0);
    }

    /**
     * 40 connections each ask for an answer of 15 batches of just under 1 MiB and never read it (the client asks gRPC
     * for no message, so HTTP/2 flow control leaves the answer in the broker's buffers): 600 MiB against a 192 MiB
     * heap. fetch.memory.max.bytes has room for exactly three such answers, so the broker holds three, whichever
     * order the calls arrive in (an answer of exactly the room it took gives none back), and refuses the others
     * NOT_AVAILABLE naming the bound; it answers a metadata call all along, and once the readers are gone a fetch
     * reads its 15 batches again.
     */
    @Test
    void manyConnectionsFetchingHugeAnswersTheyNeverReadCannotTakeTheBrokersMemory() throws Exception {
        byte[] value = new byte[MIB - 1024];
        new Random(1).nextBytes(value);
        ByteString stored = ByteString.copyFrom(new RecordBatchBuilder(MIB).append(Instant.now().toEpochMilli(), null,
                value).build());
        int answerBytes = 15 * stored.size();
        long fetchMemory = 3L * answerBytes;
        BrokerProcess broker = broker("fetch.memory.max.bytes=" + fetchMemory);
        String b = broker.bootstrap();
        createTopic(b, "big");
        ManagedChannel producer = channel(b);
        ProduceRequest batch = ProduceRequest.newBuilder().setTopic("big").setPartition(0).setBatch(stored).build();
        BrokerServiceGrpc.BrokerServiceBlockingStub stub = BrokerServiceGrpc.newBlockingStub(producer);
        for (int i = 0; i < 20; i++) {
            assertEquals(i, stub.withDeadlineAfter(30, TimeUnit.SECONDS).produce(batch).getBaseOffset());
        }
        FetchRequest huge = FetchRequest.newBuilder().setTopic("big").setPartition(0).setOffset(0)
                .setMaxBytes(answerBytes).build();

        ConcurrentLinkedQueue<Status> closed = new ConcurrentLinkedQueue<>();
        AtomicInteger answered = new AtomicInteger();
        List<ClientCall<FetchRequest, FetchResponse>> slow = new ArrayList<>();
        for (int i = 0; i < SLOW_READERS; i++) {
            ClientCall<FetchRequest, FetchResponse> call = channel(b).newCall(BrokerServiceGrpc.getFetchMethod(),
                    CallOptions.DEFAULT);
            call.start(new ClientCall.Listener<>() {
                @Override
                public void onHeaders(Metadata headers) {
                    answered.incrementAndGet();
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    closed.add(status);
                }
            }, new Metadata());
            call.sendMessage(huge);
            call.halfClose();
            slow.add(call);
        }
        await("every call answered (its answer held by the broker) or refused").atMost(Duration.ofSeconds(60))
                .until(() -> answered.get() + closed.size() == SLOW_READERS);
        assertEquals(3, answered.get(), "the answers fetch.memory.max.bytes has room for");
        for (Status status : closed) {
            TidemarkException refused = GrpcErrors.fromThrowable(status.asRuntimeException());
            assertEquals(ErrorCode.NOT_AVAILABLE, refused.code(), refused.toString());
            assertTrue(refused.getMessage().contains("bytes of fetch answers not sent yet, all of "
                    + "fetch.memory.max.bytes " + fetchMemory), refused.getMessage());
        }
        assertEquals(List.of("big"), admin(b).listTopics(false).stream().map(TopicSummary::getName).toList(),
                "the broker answers while the slow readers hold their answers");

        slow.forEach(call -> call.cancel("the slow reader leaves", null));
        ManagedChannel reader = channel(b);
        // The cancellations reach the broker one by one: a fetch meanwhile gets what room is back (at least a batch).
        await("the room given back once the readers left: the whole answer of 15 batches")
                .atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> BrokerServiceGrpc.newBlockingStub(reader)
                        .withDeadlineAfter(30, TimeUnit.SECONDS).fetch(huge).getBatches().size(), n -> n == answerBytes);
        assertFalse(broker.stderr().contains("OutOfMemoryError"), broker.stderr());
    }

    /**
     * One client invents 100,000 idempotent producers on one partition (a batch each, in requests of 1,000 batches):
     * every batch is stored, the broker keeps answering, and it still tells each producer's resend from a new batch,
     * also after a restart, which loads the table of 100,000 producers again.
     */
    @Test
    void aHundredThousandProducerIdsAreKeptAndTheBrokerAnswers() throws Exception {
        BrokerProcess broker = broker();
        String b = broker.bootstrap();
        createTopic(b, "ids");
        ManagedChannel channel = channel(b);
        long now = Instant.now().toEpochMilli();
        for (int first = 0; first < PRODUCER_IDS; first += BATCHES_PER_REQUEST) {
            ProduceManyRequest.Builder request = ProduceManyRequest.newBuilder();
            for (int id = first; id < first + BATCHES_PER_REQUEST; id++) {
                request.addBatches(batchOf(id, 0, now));
            }
            ProduceManyResponse response = BrokerServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, TimeUnit.SECONDS).produceMany(request.build());
            for (int i = 0; i < BATCHES_PER_REQUEST; i++) {
                ProduceOutcome outcome = response.getOutcomes(i);
                assertTrue(outcome.hasStored(), outcome.toString());
                assertEquals(first + i, outcome.getStored().getBaseOffset());
            }
        }
        assertProducersKnown(channel, now);

        assertEquals(143, broker.stop());
        broker.restart();
        awaitLeader(broker.bootstrap(), "ids");
        assertProducersKnown(channel(broker.bootstrap()), now);
    }

    /** A resend of producer 7's batch answers its first offset; producer 99,999's next batch is stored after all. */
    private static void assertProducersKnown(ManagedChannel channel, long now) {
        BrokerServiceGrpc.BrokerServiceBlockingStub stub = BrokerServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        ProduceResponse resend = stub.produce(batchOf(7, 0, now));
        assertEquals(7, resend.getBaseOffset(), "a duplicate answers the offset its batch was stored at");
        long end = stub.listOffsets(ListOffsetsRequest.newBuilder().setTopic("ids")
                .setPartition(0).setLatest(true).build()).getOffset();
        ProduceResponse next = stub.produce(batchOf(PRODUCER_IDS - 1, (int) (end - PRODUCER_IDS + 1), now));
        assertEquals(end, next.getBaseOffset(), "producer " + (PRODUCER_IDS - 1) + "'s next batch");
    }

    private static ProduceRequest batchOf(long producerId, int sequence, long sendTimeMs) {
        RecordBatchBuilder batch = new RecordBatchBuilder(128).producer(producerId, (short) 0, sequence)
                .append(sendTimeMs, null, ("p" + producerId + "#" + sequence).getBytes());
        return ProduceRequest.newBuilder().setTopic("ids").setPartition(0).setBatch(ByteString.copyFrom(batch.build()))
                .build();
    }
}
