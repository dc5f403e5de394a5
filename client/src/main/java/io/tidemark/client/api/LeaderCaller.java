package io.tidemark.client.api;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Channel;
import io.grpc.stub.AbstractStub;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchManyRequest;
import io.tidemark.proto.v1.FetchManyResponse;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.FetchResponse;
import io.tidemark.proto.v1.GroupServiceGrpc;
import io.tidemark.proto.v1.TransactionServiceGrpc;
import io.tidemark.proto.v1.ListOffsetsRequest;
import io.tidemark.proto.v1.ListOffsetsResponse;
import io.tidemark.proto.v1.OriginOffsetRequest;
import io.tidemark.proto.v1.OriginOffsetResponse;
import io.tidemark.proto.v1.OriginPartitionRef;
import io.tidemark.proto.v1.ProduceManyRequest;
import io.tidemark.proto.v1.ProduceManyResponse;
import io.tidemark.proto.v1.ProduceRequest;
import io.tidemark.proto.v1.ProduceResponse;

import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Makes the calls only a partition's leader answers (ListOffsets, Fetch, OriginOffset, and Produce for a
 * {@link PartitionWriter}) on the broker the cluster metadata
 * names, refreshing the metadata and trying again when the answer shows the metadata may be stale
 * ({@link ClusterMetadata#mayBeStale}: NOT_LEADER, NOT_AVAILABLE, UNKNOWN_TOPIC or UNKNOWN_PARTITION).
 *
 * <p>Not a {@link Retry}, on purpose: it mends a stale route, it does not wait out an outage. It makes a fixed number
 * of attempts with no backoff, each after a refresh (the refresh's round trip paces them), so a call answers within
 * a few round trips; callers that must outlast an election or a dead broker retry the whole call on their deadline
 * (the producer's sender, a {@link PartitionWriter}'s {@link Retry}, the consumer's poll).
 *
 * <p>Thread-safe. Callbacks run on gRPC executor threads, or on the transport thread that read the answer
 * ({@link Callbacks#TRANSPORT_THREAD}).
 */
final class LeaderCaller {
    /** Where a call's answer completes its future, and so where the callbacks chained on it run. */
    enum Callbacks {
        /** The channel's executor (gRPC's default: a pool), where callers' own callbacks may take their time. */
        CHANNEL_EXECUTOR,
        /**
         * The Netty event loop that read the answer, with no hop to an executor thread first: for callers that only
         * wait for the answer and chain no callback of their own that could block (a thread waiting in
         * {@link GrpcFutures#await}). gRPC hands each event of a call (headers, message, close) to the executor, and
         * waking a pool thread for each cost 3 to 4 context switches per lookup in the client, each of which may
         * wait for a core on a busy machine; LeaderCaller's own callbacks only route a retry.
         */
        TRANSPORT_THREAD;

        /** {@code stub}, its answers completed where this says. */
        <S extends AbstractStub<S>> S on(S stub) {
            return this == TRANSPORT_THREAD ? stub.withExecutor(MoreExecutors.directExecutor()) : stub;
        }
    }

    /**
     * Attempts per call: one on the cached leader, one after a refresh, and one more for a leader that moved
     * during the refresh.
     */
    static final int ATTEMPTS = 3;
    /** The partition whose leader coordinates every consumer group: the one of the group offsets' topic. */
    static final TopicPartition COORDINATOR_PARTITION = new TopicPartition("__group_offsets", 0);

    private final ClusterMetadata metadata;
    private final BrokerChannels channels;
    private final long requestTimeoutMs;
    private final Callbacks callbacks;

    LeaderCaller(ClusterMetadata metadata, BrokerChannels channels, long requestTimeoutMs, Callbacks callbacks) {
        this.metadata = metadata;
        this.channels = channels;
        this.requestTimeoutMs = requestTimeoutMs;
        this.callbacks = callbacks;
    }

    CompletableFuture<ListOffsetsResponse> listOffsets(TopicPartition tp, OffsetSpec spec) {
        ListOffsetsRequest request = spec.toRequest(tp);
        return call(tp, channel -> stub(channel, requestTimeoutMs).listOffsets(request));
    }

    /** A Fetch whose deadline leaves the broker {@code max_wait_ms} to wait plus {@code request.timeout.ms}. */
    CompletableFuture<FetchResponse> fetch(FetchRequest request) {
        long timeoutMs = request.getMaxWaitMs() + requestTimeoutMs;
        return call(new TopicPartition(request.getTopic(), request.getPartition()),
                channel -> stub(channel, timeoutMs).fetch(request));
    }

    /** Where the metadata says {@code tp}'s leader is; empty when it names none. */
    Optional<String> leaderAddress(TopicPartition tp) {
        return metadata.leaderAddress(tp);
    }

    /**
     * One FetchMany to the broker at {@code address}, with a deadline that leaves it {@code max_wait_ms} to wait plus
     * {@code request.timeout.ms}; no retry (the consumer fetches again). A failure that may mean stale metadata
     * refreshes it, as a partition's refusal does ({@link #refused}).
     */
    CompletableFuture<FetchManyResponse> fetchMany(String address, FetchManyRequest request) {
        long timeoutMs = request.getMaxWaitMs() + requestTimeoutMs;
        return GrpcFutures.unwrapped(GrpcFutures.start(() -> stub(channels.get(address), timeoutMs)
                .fetchMany(request))).whenComplete((answer, error) -> {
                    if (error != null && GrpcFutures.rethrowable(error) instanceof TidemarkException e
                            && ClusterMetadata.mayBeStale(e)) {
                        metadata.refresh();
                    }
                });
    }

    /**
     * A partition's call on {@code address} was refused: a NOT_LEADER's hint goes into the metadata, and an error that
     * may mean stale metadata refreshes it, so the partition's next fetch goes where its leader is.
     */
    void refused(TopicPartition tp, String address, TidemarkException e) {
        if (e.code() == ErrorCode.NOT_LEADER) {
            metadata.notLeader(tp, address, e);
        }
        if (ClusterMetadata.mayBeStale(e)) {
            metadata.refresh();
        }
    }

    /**
     * A Produce of one batch, on the leader's produce stream ({@link ProduceStreams}), so that batches of a partition
     * sent one after another reach its log in that order; a retry after NOT_AVAILABLE resends the same bytes
     * (idempotence drops a duplicate). The batch's refusal fails the future with the broker's TidemarkException.
     */
    CompletableFuture<ProduceResponse> produce(ProduceRequest request, ProduceStreams streams, Clock clock) {
        ProduceManyRequest one = ProduceManyRequest.newBuilder().addBatches(request).build();
        return callAt(new TopicPartition(request.getTopic(), request.getPartition()),
                address -> sendOn(streams, address, one, clock)
                        .thenCompose(answer -> ProduceStreams.outcome(answer, 0, 1, address)));
    }

    /** Sends on the stream; a send that throws (a closed client) gives a failed future, as {@link GrpcFutures#start}. */
    private static CompletableFuture<ProduceManyResponse> sendOn(ProduceStreams streams, String address,
                                                                  ProduceManyRequest request, Clock clock) {
        try {
            return streams.send(address, request, clock.millis());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The last origin offset of {@code origin} that {@code tp} holds through mirrored batches. */
    CompletableFuture<OriginOffsetResponse> originOffset(TopicPartition tp, OriginPartition origin) {
        OriginOffsetRequest request = OriginOffsetRequest.newBuilder().setTopic(tp.topic()).setPartition(tp.partition())
                .setOrigin(OriginPartitionRef.newBuilder().setCluster(origin.cluster()).setTopic(origin.topic())
                        .setTopicId(TopicIds.toBytes(origin.topicId())).setPartition(origin.partition())).build();
        return call(tp, channel -> stub(channel, requestTimeoutMs).originOffset(request));
    }

    /**
     * Calls the consumer groups' coordinator: the leader of {@code __group_offsets} (a broker that is not answers
     * NOT_LEADER naming it, and the call follows).
     */
    <T> CompletableFuture<T> coordinator(Function<GroupServiceGrpc.GroupServiceFutureStub, ListenableFuture<T>> rpc) {
        return coordinatorCall(GroupServiceGrpc::newFutureStub, rpc);
    }

    /**
     * Calls the transaction coordinator: the same broker as the groups' ({@link #coordinator}), since transaction
     * states are kept in {@code __group_offsets} too.
     */
    <T> CompletableFuture<T> transactionCoordinator(
            Function<TransactionServiceGrpc.TransactionServiceFutureStub, ListenableFuture<T>> rpc) {
        return coordinatorCall(TransactionServiceGrpc::newFutureStub, rpc);
    }

    private <S extends AbstractStub<S>, T> CompletableFuture<T> coordinatorCall(Function<Channel, S> newStub,
                                                                               Function<S, ListenableFuture<T>> rpc) {
        return call(COORDINATOR_PARTITION, channel -> {
            return rpc.apply(callbacks.on(newStub.apply(channel).withDeadlineAfter(requestTimeoutMs,
                    TimeUnit.MILLISECONDS)));
        });
    }

    private BrokerServiceGrpc.BrokerServiceFutureStub stub(Channel channel, long timeoutMs) {
        return callbacks.on(BrokerServiceGrpc.newFutureStub(channel)
                .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS));
    }

    /**
     * Calls {@code rpc} on {@code tp}'s leader, {@link #ATTEMPTS} times at most; the future fails with the last
     * failure itself (a TidemarkException), not the CompletionException the composed attempts wrap it in.
     */
    private <T> CompletableFuture<T> call(TopicPartition tp, Function<Channel, ListenableFuture<T>> rpc) {
        return callAt(tp, address -> GrpcFutures.start(() -> rpc.apply(channels.get(address))));
    }

    /** {@link #call} for an rpc that takes the leader's address. */
    private <T> CompletableFuture<T> callAt(TopicPartition tp, Function<String, CompletableFuture<T>> rpc) {
        return GrpcFutures.unwrapped(attempt(tp, rpc, ATTEMPTS));
    }

    private <T> CompletableFuture<T> attempt(TopicPartition tp, Function<String, CompletableFuture<T>> rpc,
                                             int attemptsLeft) {
        Optional<String> leader = metadata.leaderAddress(tp);
        if (leader.isEmpty()) {
            return attemptsLeft > 1 ? refreshThen(() -> attempt(tp, rpc, attemptsLeft - 1))
                    : CompletableFuture.failedFuture(metadata.noLeader(tp));
        }
        String address = leader.get();
        return rpc.apply(address)
                .handle((value, error) -> {
                    if (error == null) {
                        return CompletableFuture.completedFuture(value);
                    }
                    RuntimeException failure = GrpcFutures.rethrowable(error);
                    if (!(failure instanceof TidemarkException e) || !ClusterMetadata.mayBeStale(e)
                            || attemptsLeft <= 1) {
                        return CompletableFuture.<T>failedFuture(failure);
                    }
                    if (e.code() == ErrorCode.NOT_LEADER) {
                        metadata.notLeader(tp, address, e);
                    }
                    return refreshThen(() -> attempt(tp, rpc, attemptsLeft - 1));
                })
                .thenCompose(Function.identity());
    }

    /** Refreshes the metadata, then runs {@code next} whether or not the refresh worked (next finds out). */
    private <T> CompletableFuture<T> refreshThen(java.util.function.Supplier<CompletableFuture<T>> next) {
        return metadata.refresh().handle((ignored, error) -> next.get()).thenCompose(Function.identity());
    }
}
