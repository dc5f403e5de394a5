package io.tidemark.core.server;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Timer;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tidemark.core.auth.Authorizer;
import io.tidemark.core.auth.CallAccess;
import io.tidemark.core.auth.Caller;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.log.HeldOrigin;
import io.tidemark.core.log.TimeLookup;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.core.partition.AppendWaiters;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.PartitionStatus;
import io.tidemark.core.quota.ClientQuotas;
import io.tidemark.core.topic.InternalTopicWrites;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.v1.BrokerInfo;
import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.FetchManyRequest;
import io.tidemark.proto.v1.FetchManyResponse;
import io.tidemark.proto.v1.FetchPartition;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.v1.FetchResponse;
import io.tidemark.proto.v1.IsolationLevel;
import io.tidemark.proto.v1.ListOffsetsRequest;
import io.tidemark.proto.v1.ListOffsetsResponse;
import io.tidemark.proto.v1.MetadataRequest;
import io.tidemark.proto.v1.MetadataResponse;
import io.tidemark.proto.v1.OriginOffsetRequest;
import io.tidemark.proto.v1.OriginOffsetResponse;
import io.tidemark.proto.v1.OriginPartitionRef;
import io.tidemark.proto.v1.PartitionInfo;
import io.tidemark.proto.v1.ProduceManyRequest;
import io.tidemark.proto.v1.ProduceManyResponse;
import io.tidemark.proto.v1.ProduceOutcome;
import io.tidemark.proto.v1.ProduceRequest;
import io.tidemark.proto.v1.ProduceResponse;
import io.tidemark.proto.v1.ProduceStreamRequest;
import io.tidemark.proto.v1.ProduceStreamResponse;
import io.tidemark.proto.v1.TopicInfo;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchValidator;
import io.tidemark.proto.record.RecordBatchValidator.SendTimeWindow;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The data path's gRPC service: decodes requests, checks them against the broker's limits, and hands them to
 * the {@link Partition} they name. Produce (one batch, or a ProduceMany of several, each answered on its own, also
 * over a client's ProduceStream, {@link ProduceStreamCall}) and long-polling Fetch complete asynchronously, so no
 * gRPC thread waits for a disk or for data. A Fetch pinned to a topic id reads only the topic of that id: a topic of
 * the same name with another id (the one asked for was deleted and the name created again) is UNKNOWN_TOPIC_ID,
 * checked on the topic the partition is taken from.
 */
final class BrokerServiceAdapter extends BrokerServiceGrpc.BrokerServiceImplBase {
    private final Topics topics;
    private final BrokerConfig config;
    private final ClusterView cluster;
    private final BrokerMetrics metrics;
    private final Responses responses;
    private final Executor pool;
    private final Authorizer authorizer;
    private final ClientQuotas quotas;
    private final FetchMemory fetchMemory;

    /**
     * @param pool answers the long-polling fetches that waited: the append that wakes them completes on a partition
     *             group's apply thread, which must never read a segment or write an answer for a client
     * @param authorizer decides whether the caller may write each batch's topic (AccessRules leaves that to the
     *                   service, so that a refused batch fails alone)
     * @param quotas     holds back the answers of principals over their produce or fetch quota
     */
    BrokerServiceAdapter(Topics topics, BrokerConfig config, ClusterView cluster, BrokerMetrics metrics,
                         Executor pool, Authorizer authorizer, ClientQuotas quotas) {
        this.topics = topics;
        this.config = config;
        this.cluster = cluster;
        this.metrics = metrics;
        this.responses = new Responses(metrics);
        this.pool = pool;
        this.authorizer = authorizer;
        this.quotas = quotas;
        this.fetchMemory = new FetchMemory(config.fetchMemoryMaxBytes());
        metrics.registry().gauge("fetch.memory.bytes", () -> (Gauge<Long>) fetchMemory::heldBytes);
    }

    @Override
    public void produce(ProduceRequest request, StreamObserver<ProduceResponse> observer) {
        long throttleMs = quotas.produced(Caller.current(), request.getBatch().size());
        store(request).thenCompose(response -> throttleMs == 0 ? CompletableFuture.completedFuture(response)
                : held(response.toBuilder().setThrottleTimeMs(throttleMs).build(), throttleMs))
                .whenComplete((response, failure) -> {
            if (failure != null) {
                responses.fail(observer, failure);
                return;
            }
            observer.onNext(response);
            observer.onCompleted();
        });
    }

    @Override
    public void produceMany(ProduceManyRequest request, StreamObserver<ProduceManyResponse> observer) {
        storeAllWithinQuota(request).thenAccept(answer -> {
            observer.onNext(answer);
            observer.onCompleted();
        });
    }

    @Override
    public StreamObserver<ProduceStreamRequest> produceStream(StreamObserver<ProduceStreamResponse> observer) {
        return new ProduceStreamCall(this::storeAllWithinQuota,
                (ServerCallStreamObserver<ProduceStreamResponse>) observer);
    }

    /**
     * {@link #storeAll}, the request's bytes counted against the caller's produce quota: an answer over it goes out
     * late, by the throttle time it carries ({@link ClientQuotas}).
     */
    private CompletableFuture<ProduceManyResponse> storeAllWithinQuota(ProduceManyRequest request) {
        long bytes = 0;
        for (ProduceRequest batch : request.getBatchesList()) {
            bytes += batch.getBatch().size();
        }
        long throttleMs = quotas.produced(Caller.current(), bytes);
        CompletableFuture<ProduceManyResponse> stored = storeAll(request);
        return throttleMs == 0 ? stored : stored.thenCompose(answer -> held(answer.toBuilder()
                .setThrottleTimeMs(throttleMs).build(), throttleMs));
    }

    /** Completes with {@code answer} once {@code throttleMs} passed, on the pool. */
    private <T> CompletableFuture<T> held(T answer, long throttleMs) {
        return CompletableFuture.supplyAsync(() -> answer, CompletableFuture.delayedExecutor(throttleMs,
                TimeUnit.MILLISECONDS, pool));
    }

    /**
     * Hands every batch of the request to its partition, in request order, before it returns; completes with each
     * batch's outcome once all have one.
     */
    private CompletableFuture<ProduceManyResponse> storeAll(ProduceManyRequest request) {
        List<CompletableFuture<ProduceOutcome>> outcomes = new ArrayList<>(request.getBatchesCount());
        for (ProduceRequest batch : request.getBatchesList()) {
            outcomes.add(store(batch).handle((stored, failure) -> failure == null
                    ? ProduceOutcome.newBuilder().setStored(stored).build()
                    : ProduceOutcome.newBuilder().setRefused(GrpcErrors.toDetail(responses.refusal(failure))).build()));
        }
        return CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new)).thenApply(all -> {
            ProduceManyResponse.Builder answer = ProduceManyResponse.newBuilder();
            outcomes.forEach(outcome -> answer.addOutcomes(outcome.join()));
            return answer.build();
        });
    }

    /** Appends one batch to its partition; completes with the answer, or fails with why it was not stored. */
    private CompletableFuture<ProduceResponse> store(ProduceRequest request) {
        Timer.Context timer = metrics.produceLatency().time();
        Partition partition;
        ByteBuffer batch;
        try {
            CallAccess.current(authorizer).requireTopic(AclOperation.WRITE, request.getTopic());
            partition = topics.partition(request.getTopic(), request.getPartition());
            batch = request.getBatch().asReadOnlyByteBuffer();
            InternalTopicWrites.checkProduce(request.getTopic(), batch);
            checkNotMarker(batch);
        } catch (RuntimeException e) {
            timer.stop();
            return CompletableFuture.failedFuture(e);
        }
        int bytes = batch.remaining();
        return partition.append(batch).thenApply(result -> {
            metrics.produced(bytes, result.lastOffset() - result.baseOffset() + 1);
            return ProduceResponse.newBuilder().setBaseOffset(result.baseOffset())
                    .setLastOffset(result.lastOffset()).setReceiveTimeMs(result.receiveTimeMs())
                    .setLogStartOffset(partition.logStartOffset()).build();
        }).whenComplete((response, failure) -> timer.stop());
    }

    @Override
    public void fetch(FetchRequest request, StreamObserver<FetchResponse> observer) {
        FetchAnswer<FetchResponse> answer = fetchAnswer(observer);
        Topic topic;
        Partition partition;
        boolean waitForData;
        try {
            checkFetchLimits(request);
            topic = topics.topic(request.getTopic());
            pinnedId(request).ifPresent(topic::checkId);
            partition = topic.partition(request.getPartition());
            partition.checkClientReadable();
            waitForData = request.getMaxWaitMs() > 0 && atEnd(request, partition);
        } catch (RuntimeException e) {
            answer.fail(responses, e);
            return;
        }
        Runnable read = () -> answerFetch(request, topic.id(), partition, answer);
        if (!waitForData) {
            read.run();
            return;
        }
        CompletableFuture<Void> appended = new CompletableFuture<>();
        List<AppendWaiters.Waiter> waiters = List.of();
        try {
            waiters = List.of(partition.awaitAppend(() -> appended.complete(null)));
            if (!atEnd(request, partition)) {
                appended.complete(null);
            }
        } catch (RuntimeException e) {
            appended.complete(null); // the read fails as the partition does, and says why
        }
        answerAfterAppend(appended, request.getMaxWaitMs(), waiters, read);
    }

    /** Whether nothing is at or after the fetch's offset yet: it is at the high watermark (or the LSO it reads to). */
    private static boolean atEnd(FetchRequest request, Partition partition) {
        return request.getOffset() == (readCommitted(request) ? partition.lastStableOffset()
                : partition.highWatermark());
    }

    /**
     * Where a fetch's answer goes, timed from now: the observer, a lease on the broker's fetch memory that gRPC gives
     * back once the answer is sent or the call cancelled, and the caller, for the fetch quota.
     */
    private <T> FetchAnswer<T> fetchAnswer(StreamObserver<T> observer) {
        FetchMemory.Lease memory = fetchMemory.lease();
        if (observer instanceof ServerCallStreamObserver<T> call) {
            call.setOnCloseHandler(memory::close);
            call.setOnCancelHandler(memory::close);
        }
        return new FetchAnswer<>(observer, memory, metrics.fetchLatency().time(), Caller.current());
    }

    /**
     * Runs {@code answer} on the pool (never on the appending thread, a group's apply thread) once {@code appended}
     * completes or {@code maxWaitMs} passed, after forgetting the waiters.
     */
    private void answerAfterAppend(CompletableFuture<Void> appended, long maxWaitMs,
                                   List<AppendWaiters.Waiter> waiters, Runnable answer) {
        appended.completeOnTimeout(null, maxWaitMs, TimeUnit.MILLISECONDS).whenCompleteAsync((v, t) -> {
            waiters.forEach(AppendWaiters.Waiter::close);
            answer.run();
        }, pool);
    }

    /**
     * Reads several partitions at once ({@link FetchManyCall}); when none has anything to answer, waits for the first
     * append to any of them, up to max_wait_ms, as a Fetch does for its one partition. The answer takes room in the
     * broker's fetch memory and counts against the caller's fetch quota as a Fetch's does.
     */
    @Override
    public void fetchMany(FetchManyRequest request, StreamObserver<FetchManyResponse> observer) {
        FetchAnswer<FetchManyResponse> answer = fetchAnswer(observer);
        FetchManyCall fetch;
        try {
            checkFetchManyLimits(request);
            fetch = new FetchManyCall(request, topics, CallAccess.current(authorizer));
        } catch (RuntimeException e) {
            answer.fail(responses, e);
            return;
        }
        Runnable read = () -> answerFetchMany(request, fetch, answer);
        if (request.getMaxWaitMs() == 0 || fetch.anyReady()) {
            read.run();
            return;
        }
        CompletableFuture<Void> appended = new CompletableFuture<>();
        List<AppendWaiters.Waiter> waiters = fetch.awaitAnyAppend(() -> appended.complete(null));
        if (fetch.anyReady()) {
            appended.complete(null);
        }
        answerAfterAppend(appended, request.getMaxWaitMs(), waiters, read);
    }

    private void checkFetchManyLimits(FetchManyRequest request) {
        if (request.getMaxBytes() < 1) {
            throw Responses.invalid("max_bytes " + request.getMaxBytes() + " is not allowed: at least 1 (the broker "
                    + "answers at most " + config.maxFetchBytes() + ", max.fetch.bytes)");
        }
        if (request.getMaxWaitMs() < 0 || request.getMaxWaitMs() > config.maxFetchWaitMs()) {
            throw Responses.invalid("max_wait_ms " + request.getMaxWaitMs() + " is not allowed: 0 to "
                    + config.maxFetchWaitMs() + " (max.fetch.wait.ms)");
        }
        for (FetchPartition partition : request.getPartitionsList()) {
            if (partition.getMaxBytes() < 1 || partition.getMaxBytes() > config.maxFetchBytes()) {
                throw Responses.invalid("max_bytes " + partition.getMaxBytes() + " of " + partition.getTopic() + "-"
                        + partition.getPartition() + " is not allowed: 1 to " + config.maxFetchBytes()
                        + " (max.fetch.bytes)");
            }
        }
    }

    /** Reads and answers a FetchMany within the room the broker's fetch memory grants it, as {@link #answerFetch}. */
    private void answerFetchMany(FetchManyRequest request, FetchManyCall fetch,
                                 FetchAnswer<FetchManyResponse> answer) {
        FetchManyCall.Read read;
        try {
            int room = answer.memory().take(Math.min(request.getMaxBytes(), config.maxFetchBytes()));
            read = fetch.read(room, responses::refusal);
            answer.memory().settle(read.bytes());
            metrics.fetched(read.bytes());
        } catch (RuntimeException e) {
            answer.fail(responses, e);
            return;
        }
        answer.timer().stop();
        long throttleMs = quotas.fetched(answer.caller(), read.bytes());
        if (throttleMs == 0) {
            answer.send(read.answer().build());
            return;
        }
        held(read.answer().setThrottleTimeMs(throttleMs).build(), throttleMs).thenAccept(answer::send);
    }

    /**
     * Refuses a client's transaction marker: only the transaction coordinator ends a transaction in a partition
     * ({@code WriteTxnMarker}). Bytes whose control bit is set but that are no valid batch are refused as the
     * damaged batch they are (CORRUPT_BATCH), as the partition would.
     */
    private static void checkNotMarker(ByteBuffer batch) {
        if (batch.remaining() >= RecordBatchFormat.HEADER_SIZE_BYTES
                && RecordBatchFormat.control(batch, batch.position())) {
            new RecordBatchValidator().validate(batch, batch.position(), batch.remaining(), SendTimeWindow.UNBOUNDED);
            throw new TidemarkException(ErrorCode.INVALID_TXN_STATE, "a transaction marker is written by the "
                    + "transaction coordinator, never produced");
        }
    }

    private static boolean readCommitted(FetchRequest request) {
        return request.getIsolationLevel() == IsolationLevel.READ_COMMITTED;
    }

    private static Optional<UUID> pinnedId(FetchRequest request) {
        try {
            return TopicIds.optional(request.getTopicId());
        } catch (IllegalArgumentException e) {
            throw Responses.invalid("Fetch topic_id: " + e.getMessage() + "; empty reads whichever topic has the "
                    + "name");
        }
    }

    private void checkFetchLimits(FetchRequest request) {
        if (request.getMaxBytes() < 1 || request.getMaxBytes() > config.maxFetchBytes()) {
            throw Responses.invalid("max_bytes " + request.getMaxBytes() + " is not allowed: 1 to "
                    + config.maxFetchBytes() + " (max.fetch.bytes)");
        }
        if (request.getMaxWaitMs() < 0 || request.getMaxWaitMs() > config.maxFetchWaitMs()) {
            throw Responses.invalid("max_wait_ms " + request.getMaxWaitMs() + " is not allowed: 0 to "
                    + config.maxFetchWaitMs() + " (max.fetch.wait.ms)");
        }
    }

    /**
     * Where a fetch's answer goes and what it holds: the caller's observer, the answer's hold on the broker's fetch
     * memory (given back by gRPC once the answer is sent or the call cancelled, or here for an observer that is not a
     * gRPC call's), the latency timer, and the caller, whose fetch quota the answer counts against.
     */
    private record FetchAnswer<T>(StreamObserver<T> observer, FetchMemory.Lease memory, Timer.Context timer,
                                  Caller caller) {
        void fail(Responses responses, RuntimeException e) {
            timer.stop();
            memory.close();
            responses.fail(observer, e);
        }

        void send(T response) {
            observer.onNext(response);
            observer.onCompleted();
            if (!(observer instanceof ServerCallStreamObserver<?>)) {
                memory.close();
            }
        }
    }

    /**
     * Reads and answers a fetch, reading no more than the broker's fetch memory has room for ({@link FetchMemory});
     * an answer over the caller's fetch quota goes out late, by the throttle time it carries ({@link ClientQuotas}).
     */
    private void answerFetch(FetchRequest request, UUID topicId, Partition partition,
                             FetchAnswer<FetchResponse> answer) {
        FetchResponse.Builder response;
        try {
            int maxBytes = answer.memory().take(request.getMaxBytes());
            response = PartitionReads.read(partition, topicId, request.getOffset(), maxBytes, readCommitted(request));
            answer.memory().settle(response.getBatches().size());
            metrics.fetched(response.getBatches().size());
        } catch (RuntimeException e) {
            answer.fail(responses, e);
            return;
        }
        answer.timer().stop();
        long throttleMs = quotas.fetched(answer.caller(), response.getBatches().size());
        if (throttleMs == 0) {
            answer.send(response.build());
            return;
        }
        held(response.setThrottleTimeMs(throttleMs).build(), throttleMs).thenAccept(answer::send);
    }

    @Override
    public void listOffsets(ListOffsetsRequest request, StreamObserver<ListOffsetsResponse> observer) {
        Timer.Context timer = metrics.listOffsetsLatency().time();
        responses.respond(observer, () -> {
            try {
                Partition partition = topics.partition(request.getTopic(), request.getPartition());
                partition.checkClientReadable();
                return listOffsets(request, partition);
            } finally {
                timer.stop();
            }
        });
    }

    private static ListOffsetsResponse listOffsets(ListOffsetsRequest request, Partition partition) {
        long start = partition.logStartOffset();
        long end = partition.highWatermark();
        ListOffsetsResponse.Builder response = ListOffsetsResponse.newBuilder().setLogStartOffset(start)
                .setLogEndOffset(end);
        TimeLookup lookup = switch (request.getSpecCase()) {
            case EARLIEST -> start == end ? new TimeLookup.NotFound(end) : partition.lookupByReceiveTime(Long.MIN_VALUE);
            case LATEST -> new TimeLookup.NotFound(end);
            case RECEIVE_TIME_MS -> partition.lookupByReceiveTime(request.getReceiveTimeMs());
            case SEND_TIME_MS -> partition.lookupBySendTime(request.getSendTimeMs());
            case SPEC_NOT_SET -> throw Responses.invalid("ListOffsets needs a spec: earliest, latest, receive_time_ms "
                    + "or send_time_ms");
        };
        if (lookup instanceof TimeLookup.Found found) {
            return response.setFound(true).setOffset(found.offset()).setReceiveTimeMs(found.receiveTimeMs())
                    .setSendTimeMs(found.sendTimeMs()).build();
        }
        return response.setFound(false).setOffset(((TimeLookup.NotFound) lookup).logEndOffset()).build();
    }

    @Override
    public void originOffset(OriginOffsetRequest request, StreamObserver<OriginOffsetResponse> observer) {
        responses.respond(observer, () -> {
            Partition partition = topics.partition(request.getTopic(), request.getPartition());
            Optional<HeldOrigin> held = partition.heldOrigin(origin(request.getOrigin()));
            OriginOffsetResponse.Builder response = OriginOffsetResponse.newBuilder().setHeld(held.isPresent());
            held.ifPresent(h -> response.setOriginOffset(h.originOffset()).setOffset(h.offset()));
            return response.build();
        });
    }

    private static OriginPartition origin(OriginPartitionRef ref) {
        try {
            return new OriginPartition(ref.getCluster(), ref.getTopic(), TopicIds.fromBytes(ref.getTopicId()),
                    ref.getPartition());
        } catch (IllegalArgumentException e) {
            throw Responses.invalid("OriginOffset origin: " + e.getMessage());
        }
    }

    @Override
    public void metadata(MetadataRequest request, StreamObserver<MetadataResponse> observer) {
        responses.respond(observer, () -> {
            if (request.getTopicsCount() > config.maxTopicsPerRequest()) {
                throw Responses.invalid("a Metadata request may name at most " + config.maxTopicsPerRequest()
                        + " topics (max.topics.per.request), not " + request.getTopicsCount());
            }
            List<Topic> wanted = request.getTopicsCount() == 0
                    ? topics.topics().stream().filter(t -> request.getIncludeInternal() || !t.internal()).toList()
                    : request.getTopicsList().stream().map(topics::topic).toList();
            MetadataResponse.Builder response = MetadataResponse.newBuilder();
            cluster.brokers().forEach(b -> response.addBrokers(BrokerInfo.newBuilder().setNodeId(b.getNodeId())
                    .setAddress(b.getAddress())));
            for (Topic topic : wanted) {
                TopicInfo.Builder info = TopicInfo.newBuilder().setName(topic.name())
                        .setTopicId(TopicIds.toBytes(topic.id()));
                for (Partition partition : topic.partitions()) {
                    PartitionStatus status = partition.status();
                    info.addPartitions(PartitionInfo.newBuilder().setPartition(partition.id().partition())
                            .setLeaderNodeId(status.leaderNodeId()).setLeaderEpoch(status.leader().epoch())
                            .addAllReplicaNodeIds(status.replicaNodeIds()));
                }
                response.addTopics(info);
            }
            return response.build();
        });
    }
}
