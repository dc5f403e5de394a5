package io.tidemark.client.api;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.tidemark.proto.auth.BearerToken;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.BrokerInfo;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatRequest;
import io.tidemark.proto.v1.ConsumerGroupHeartbeatResponse;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataResponse;
import io.tidemark.proto.v1.PartitionInfo;
import io.tidemark.proto.v1.TopicInfo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A cluster of fake brokers on in-process gRPC: node ids 1..n, each serving BrokerService, GroupService and
 * AdminService over one shared in-memory state (topics, {@link FakeLog}s, leaders, group offsets). Records every
 * call, can fail the next N calls of a method with a given error or cut them as a dying broker does, hold Produce
 * calls unanswered, refuse batches holding a given value, store a batch and lose the reply, and corrupt fetched
 * bytes. Deduplicates idempotent producers' batches as the broker does (see {@link FakeLog}). ReceiveTime comes from
 * the test's {@link ManualClock}.
 */
final class FakeCluster implements AutoCloseable {
    final ManualClock clock;
    final Map<String, Integer> topics = new ConcurrentHashMap<>();
    /** Each topic's id: 00000000-0000-0000-0000-00000000000N for the Nth topic created (also again). */
    final Map<String, UUID> topicIds = new ConcurrentHashMap<>();
    final Map<TopicPartition, FakeLog> logs = new ConcurrentHashMap<>();
    /** Each partition's leader ({@link #lead}), and the epoch of its leadership: 1, and one more at each move. */
    final Map<TopicPartition, Integer> leaders = new ConcurrentHashMap<>();
    final Map<TopicPartition, Long> leaderEpochs = new ConcurrentHashMap<>();
    final Map<String, Map<TopicPartition, OffsetAndMetadata>> groups = new ConcurrentHashMap<>();
    /** ConsumerGroupHeartbeat requests, in arrival order. */
    final List<ConsumerGroupHeartbeatRequest> heartbeats = new CopyOnWriteArrayList<>();
    /** How the coordinator answers the next heartbeats, one each (an answer may throw the error to send). */
    final Queue<Function<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse>> heartbeatAnswers =
            new ConcurrentLinkedQueue<>();
    final Map<String, Map<String, String>> topicConfigs = new ConcurrentHashMap<>();
    /** Every ReassignPartition request, in arrival order. */
    final List<io.tidemark.proto.v1.ReassignPartitionRequest> reassignments = new CopyOnWriteArrayList<>();
    /** Every call as "method@node", in arrival order. */
    final List<String> calls = new CopyOnWriteArrayList<>();
    /** The authorization header of every call ("" for none), in arrival order. */
    final List<String> authorizations = new CopyOnWriteArrayList<>();
    /** Produce calls as they arrived, appended or not: "topic-partition:records". */
    final List<String> produceRequests = new CopyOnWriteArrayList<>();
    /** Per ProduceMany call: "node:batches". */
    final List<String> produceManyCalls = new CopyOnWriteArrayList<>();
    /** Values whose record makes the fake refuse its whole batch with the mapped error, as a broker would. */
    final Map<String, ErrorCode> refusedValues = new ConcurrentHashMap<>();
    /** The producer fields of every Produce call's batch, in arrival order, appended or not. */
    final List<ProducerFields> producedHeaders = new CopyOnWriteArrayList<>();
    /** How many of the next Produce calls that store their batch fail with UNAVAILABLE as if the reply was lost. */
    final AtomicInteger repliesToLose = new AtomicInteger();
    /** Produce calls the fake appended (not those answered as duplicates): "node:topic-partition:records". */
    final List<String> appended = new CopyOnWriteArrayList<>();
    /** Messages of the errors the fake answered with, in order. */
    final List<String> errorsSent = new CopyOnWriteArrayList<>();
    final List<StreamObserver<?>> heldProduces = new CopyOnWriteArrayList<>();
    /** Each held Produce call, in the order they came. */
    final Queue<HeldProduce> heldReleases = new ConcurrentLinkedQueue<>();
    /** What ClusterStatus answers as the cluster's name ("" for none). */
    volatile String clusterName = "";
    /** How far each call the fake serves moves the test clock: a slow broker, for deadlines. */
    volatile long callTakesMs;
    volatile boolean holdProduce;
    /** Produce calls store their batch at once but hold the answer (a leader slow to answer what it stored). */
    volatile boolean holdRepliesAfterStore;
    /** Brokers refuse ProduceStream (UNIMPLEMENTED), as one of an older version would. */
    volatile boolean noProduceStream;
    /** ProduceStreams opened, on any node. */
    final AtomicInteger produceStreams = new AtomicInteger();
    volatile boolean corruptFetches;
    /** Nodes cut off from the others: their Metadata names no leader for any partition, as a real one's would. */
    final Set<Integer> cutOff = ConcurrentHashMap.newKeySet();
    /** Nodes that are down: every call to one fails UNAVAILABLE, as a connection refused does. */
    final Set<Integer> down = ConcurrentHashMap.newKeySet();
    /** Whether NOT_LEADER answers name the leader's address (a broker that just lost leadership may not know it). */
    volatile boolean notLeaderNamesLeader = true;

    private final AtomicInteger topicsCreated = new AtomicInteger();
    /** Failures to answer, by method: a Tidemark error, or a gRPC status without one (a cut call). */
    private final Map<String, Queue<RuntimeException>> failures = new ConcurrentHashMap<>();
    private final Map<Integer, String> addresses = new ConcurrentHashMap<>();
    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();
    final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    FakeCluster(int nodes, ManualClock clock) {
        this.clock = clock;
        String prefix = "fake-" + UUID.randomUUID() + "-node";
        for (int id = 1; id <= nodes; id++) {
            String address = prefix + id + ":9092";
            addresses.put(id, address);
            try {
                servers.add(InProcessServerBuilder.forName(address).addService(new FakeBrokerService(this, id))
                        .addService(new FakeGroupService(this, id)).addService(new FakeAdminService(this, id))
                        .intercept(recordingAuthorization()).build().start());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Records each call's authorization header in {@link #authorizations}. */
    ServerInterceptor recordingAuthorization() {
        return new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                               ServerCallHandler<Q, A> next) {
                String authorization = headers.get(BearerToken.AUTHORIZATION);
                authorizations.add(authorization == null ? "" : authorization);
                return next.startCall(call, headers);
            }
        };
    }

    String address(int nodeId) {
        return addresses.get(nodeId);
    }

    /** Node 1's address. */
    String bootstrap() {
        return address(1);
    }

    /** The channel factory clients use: in-process channels, closed with the cluster. */
    ManagedChannel channel(String address) {
        ManagedChannel channel = InProcessChannelBuilder.forName(address).build();
        channels.add(channel);
        return channel;
    }

    /** Creates a topic, or replaces one of the name with a new empty topic of a new id (deleted and created again). */
    void createTopic(String name, int partitions) {
        topicIds.put(name, new UUID(0, topicsCreated.incrementAndGet()));
        topics.put(name, partitions);
        for (int p = 0; p < partitions; p++) {
            logs.put(new TopicPartition(name, p), new FakeLog());
            leaders.put(new TopicPartition(name, p), 1);
            leaderEpochs.put(new TopicPartition(name, p), 1L);
        }
    }

    /** Moves the partition's leadership to {@code node}, in the next epoch. */
    void lead(TopicPartition tp, int node) {
        leaders.put(tp, node);
        leaderEpochs.merge(tp, 1L, Long::sum);
    }

    FakeLog log(TopicPartition tp) {
        return logs.get(tp);
    }

    List<Record> records(TopicPartition tp) {
        return logs.get(tp).records();
    }

    /** Appends a producer-built batch as if produced now. */
    void append(TopicPartition tp, ByteBuffer batch) {
        logs.get(tp).append(batch, clock.millis());
    }

    /** Fails the next {@code count} calls of {@code method} (e.g. "Produce") on any node with {@code error}. */
    void failNext(String method, int count, TidemarkException error) {
        queueFailures(method, count, error);
    }

    /**
     * Fails the next {@code count} calls of {@code method} as grpc-java's Netty transport reports a call whose
     * connection closed under it (a broker that died): UNKNOWN "channel closed", without Tidemark's error detail.
     */
    void cutNext(String method, int count) {
        queueFailures(method, count, Status.UNKNOWN.withDescription("channel closed").asRuntimeException());
    }

    private void queueFailures(String method, int count, RuntimeException failure) {
        Queue<RuntimeException> queue = failures.computeIfAbsent(method, m -> new ConcurrentLinkedQueue<>());
        for (int i = 0; i < count; i++) {
            queue.add(failure);
        }
    }

    /** Drops the failures still queued for {@code method}. */
    void clearFailures(String method) {
        failures.remove(method);
    }

    /** Whether this stored batch's reply is to be lost; counts {@link #repliesToLose} down. */
    boolean takeLostReply() {
        return repliesToLose.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
    }

    long count(String callPrefix) {
        return calls.stream().filter(c -> c.startsWith(callPrefix)).count();
    }

    MetadataResponse metadata(int node, List<String> requested) {
        MetadataResponse.Builder answer = MetadataResponse.newBuilder();
        addresses.forEach((id, address) -> answer.addBrokers(BrokerInfo.newBuilder().setNodeId(id)
                .setAddress(address)));
        topics.forEach((name, partitions) -> {
            if (requested.isEmpty() || requested.contains(name)) {
                TopicInfo.Builder topic = TopicInfo.newBuilder().setName(name)
                        .setTopicId(TopicIds.toBytes(topicIds.get(name)));
                for (int p = 0; p < partitions; p++) {
                    TopicPartition tp = new TopicPartition(name, p);
                    int leader = leaders.get(tp);
                    topic.addPartitions(PartitionInfo.newBuilder().setPartition(p)
                            .setLeaderNodeId(cutOff.contains(node) ? TidemarkException.NO_LEADER : leader)
                            .setLeaderEpoch(leaderEpochs.get(tp)).addReplicaNodeIds(leader));
                }
                answer.addTopics(topic);
            }
        });
        return answer.build();
    }

    /**
     * Runs one call of {@code method} on {@code node}: records it, answers an injected failure if one is queued,
     * else answers what {@code body} returns or the TidemarkException it throws.
     */
    <T> void serve(String method, int node, StreamObserver<T> observer, Supplier<T> body) {
        calls.add(method + "@" + node);
        if (down.contains(node)) {
            observer.onError(Status.UNAVAILABLE.withDescription("node " + node + " is down: connection refused")
                    .asRuntimeException());
            return;
        }
        clock.advance(callTakesMs);
        RuntimeException injected = failures.getOrDefault(method, new ConcurrentLinkedQueue<>()).poll();
        if (injected instanceof StatusRuntimeException cut) {
            errorsSent.add(cut.getMessage());
            observer.onError(cut);
            return;
        }
        answer(observer, () -> {
            if (injected != null) {
                throw injected;
            }
            return body.get();
        });
    }

    /** Answers with what {@code body} returns (nothing when null: it answers later itself) or the error it throws. */
    <T> void answer(StreamObserver<T> observer, Supplier<T> body) {
        try {
            T answer = body.get();
            if (answer != null) {
                observer.onNext(answer);
                observer.onCompleted();
            }
        } catch (TidemarkException e) {
            errorsSent.add(e.getMessage());
            observer.onError(GrpcErrors.toStatusException(e));
        }
    }

    /**
     * Serves the Produce calls held so far ({@link #holdProduce}), in the order they came; not those that come while it
     * serves (a producer's answer may complete on this thread, and its next request be held meanwhile).
     */
    void releaseHeldProduces() {
        for (int held = heldReleases.size(); held > 0; held--) {
            heldReleases.remove().serve().run();
        }
    }

    /** Answers the first Produce call held with {@code error}, then serves the others held, in order. */
    void releaseHeldProducesFailingTheFirst(TidemarkException error) {
        HeldProduce first = heldReleases.poll();
        if (first != null) {
            errorsSent.add(error.getMessage());
            first.fail().accept(error);
        }
        releaseHeldProduces();
    }

    /** A held Produce call: what serves it, and what answers it with an error instead. */
    record HeldProduce(Runnable serve, Consumer<TidemarkException> fail) {
    }

    /** The partition's log, after checking that the topic exists and {@code node} leads the partition. */
    FakeLog ledLog(String topic, int partition, int node) {
        Integer partitions = topics.get(topic);
        if (partitions == null) {
            throw new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic " + topic + " does not exist");
        }
        TopicPartition tp = new TopicPartition(topic, partition);
        int leader = leaders.get(tp);
        if (leader != node) {
            throw TidemarkException.notLeader("node " + node + " does not lead " + tp, leader, leaderEpochs.get(tp),
                    notLeaderNamesLeader ? address(leader) : "");
        }
        return logs.get(tp);
    }

    /** The idempotence fields of a batch's header, and its record count. */
    record ProducerFields(TopicPartition partition, long producerId, short epoch, int baseSequence, int count) {
    }

    @Override
    public void close() throws InterruptedException {
        scheduler.shutdownNow();
        for (ManagedChannel channel : channels) {
            channel.shutdownNow();
        }
        for (Server server : servers) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
