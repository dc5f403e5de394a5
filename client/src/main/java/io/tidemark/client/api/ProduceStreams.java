package io.tidemark.client.api;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ProduceManyRequest;
import io.tidemark.proto.v1.ProduceManyResponse;
import io.tidemark.proto.v1.ProduceOutcome;
import io.tidemark.proto.v1.ProduceResponse;
import io.tidemark.proto.v1.ProduceStreamRequest;
import io.tidemark.proto.v1.ProduceStreamResponse;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The producer's transport: one ProduceStream per broker, opened on the first request to it and again after it broke.
 * The broker takes a stream's requests in the order they were sent, so the batches of a partition reach its log in
 * send order, which several batches of a partition in flight need (separate unary calls are separate HTTP/2 streams,
 * and a small request sent after a large one can overtake it). Each request gets a correlation id and a deadline
 * ({@code request.timeout.ms}):
 * <ul>
 *   <li>an answer completes the request with its id;</li>
 *   <li>a stream that breaks (the broker went away, the connection was reset) fails every request it had not answered
 *       with the stream's status, whose outcome is unknown, as a call cut would be;</li>
 *   <li>a request without an answer at its deadline fails with DEADLINE_EXCEEDED, and its stream is reset (its other
 *       requests fail with UNAVAILABLE): a stream that stopped answering is not trusted with more.</li>
 * </ul>
 * A broker that does not know ProduceStream (UNIMPLEMENTED: an older version, during a rolling upgrade) is sent unary
 * ProduceMany calls for {@value #UNARY_MS} ms, the stream's requests resent that way (the broker took none of them),
 * and {@link #ordered} says so: its partitions get one batch in flight at a time. Then the stream is tried again, so a
 * producer picks it up once the broker was upgraded.
 *
 * <p>Thread-safe: {@link #send}, {@link #expire} and {@link #close} take the object's lock (one caller in the producer,
 * its sender thread; a {@link PartitionWriter}'s thread in the mirror), once per request, not per record. Answers and
 * stream failures arrive on gRPC threads (the transport thread or the channel's executor, as the caller chose) and
 * only complete futures.
 */
final class ProduceStreams {
    /** How long a broker that refused the stream (UNIMPLEMENTED) gets unary calls before the stream is tried again. */
    static final long UNARY_MS = 60_000;

    private final BrokerChannels channels;
    private final LeaderCaller.Callbacks callbacks;
    private final long requestTimeoutMs;
    private final Clock clock;
    private final Map<String, Stream> streams = new HashMap<>();
    /** Brokers without the stream, until when they are sent unary calls. */
    private final Map<String, Long> unary = new ConcurrentHashMap<>();
    private long nextCorrelationId;

    /**
     * @param callbacks where answers complete the futures {@link #send} gives: the transport thread for a caller that
     *                  only hands them to a thread of its own (the producer's sender)
     */
    ProduceStreams(BrokerChannels channels, long requestTimeoutMs, Clock clock, LeaderCaller.Callbacks callbacks) {
        this.callbacks = callbacks;
        this.channels = channels;
        this.requestTimeoutMs = requestTimeoutMs;
        this.clock = clock;
    }

    /** Sends a request to the broker at {@code address}; completes with its answer, or fails as a call would. */
    synchronized CompletableFuture<ProduceManyResponse> send(String address, ProduceManyRequest request, long nowMs) {
        Long unaryUntilMs = unary.get(address);
        if (unaryUntilMs != null && nowMs < unaryUntilMs) {
            return callUnary(address, request);
        }
        unary.remove(address);
        Stream stream = streams.get(address);
        if (stream == null || stream.broken()) {
            stream = new Stream(address);
            streams.put(address, stream);
        }
        return stream.send(nextCorrelationId++, request, nowMs + requestTimeoutMs);
    }

    /**
     * What became of batch {@code i} of a request of {@code batches} batches: its stored answer, or a failure with the
     * TidemarkException it was refused with (INTERNAL_ERROR when the broker answered fewer outcomes than batches).
     * Completed at once.
     */
    static CompletableFuture<ProduceResponse> outcome(ProduceManyResponse response, int i, int batches,
                                                      String address) {
        if (i >= response.getOutcomesCount()) {
            return CompletableFuture.failedFuture(new TidemarkException(ErrorCode.INTERNAL_ERROR, "broker " + address
                    + " answered " + response.getOutcomesCount() + " outcomes to " + batches + " batches"));
        }
        ProduceOutcome outcome = response.getOutcomes(i);
        return outcome.hasStored() ? CompletableFuture.completedFuture(outcome.getStored())
                : CompletableFuture.failedFuture(GrpcErrors.fromDetail(outcome.getRefused()));
    }

    /** Whether the broker at {@code address} takes requests in send order (it has ProduceStream). */
    boolean ordered(String address) {
        return !unary.containsKey(address);
    }

    /** Fails the requests past their deadline, resetting their streams. */
    synchronized void expire(long nowMs) {
        for (Stream stream : streams.values()) {
            stream.expire(nowMs);
        }
    }

    /** Ends every stream; their unanswered requests fail. */
    synchronized void close() {
        for (Stream stream : streams.values()) {
            stream.reset(Status.UNAVAILABLE.withDescription("the producer closed its stream to the broker"));
        }
        streams.clear();
    }

    private CompletableFuture<ProduceManyResponse> callUnary(String address, ProduceManyRequest request) {
        return GrpcFutures.start(() -> callbacks.on(BrokerServiceGrpc.newFutureStub(channels.get(address))
                .withDeadlineAfter(requestTimeoutMs, TimeUnit.MILLISECONDS)).produceMany(request));
    }

    private record Pending(ProduceManyRequest request, CompletableFuture<ProduceManyResponse> answer,
                           long deadlineMs) {
    }

    /** One ProduceStream to a broker, and its requests not answered yet. */
    private final class Stream implements StreamObserver<ProduceStreamResponse> {
        private final String address;
        private final ConcurrentHashMap<Long, Pending> pending = new ConcurrentHashMap<>();
        private final ClientCallStreamObserver<ProduceStreamRequest> requests;
        private volatile boolean broken;

        Stream(String address) {
            this.address = address;
            this.requests = (ClientCallStreamObserver<ProduceStreamRequest>) callbacks.on(BrokerServiceGrpc
                    .newStub(channels.get(address))).produceStream(this);
        }

        boolean broken() {
            return broken;
        }

        CompletableFuture<ProduceManyResponse> send(long correlationId, ProduceManyRequest request, long deadlineMs) {
            CompletableFuture<ProduceManyResponse> answer = new CompletableFuture<>();
            pending.put(correlationId, new Pending(request, answer, deadlineMs));
            if (!broken) {
                requests.onNext(ProduceStreamRequest.newBuilder().setCorrelationId(correlationId)
                        .setRequest(request).build());
            }
            if (broken) {
                // it broke meanwhile: its failure may have missed this request (set broken, then failed the rest)
                failAll(Status.UNAVAILABLE.withDescription("the stream to " + address + " broke"));
            }
            return answer;
        }

        void expire(long nowMs) {
            for (Pending request : pending.values()) {
                if (nowMs >= request.deadlineMs()) {
                    request.answer().completeExceptionally(Status.DEADLINE_EXCEEDED.withDescription(
                            "no answer from " + address + " within request.timeout.ms=" + requestTimeoutMs + " ms")
                            .asRuntimeException());
                    reset(Status.UNAVAILABLE.withDescription("the stream to " + address
                            + " was reset: a request of it got no answer within request.timeout.ms"));
                    return;
                }
            }
        }

        /** Marks the stream broken, fails its requests with {@code why} and cancels it. */
        void reset(Status why) {
            broken = true;
            failAll(why);
            requests.cancel(why.getDescription(), null);
        }

        @Override
        public void onNext(ProduceStreamResponse response) {
            Pending request = pending.remove(response.getCorrelationId());
            if (request != null) {
                request.answer().complete(response.getResponse());
            }
        }

        @Override
        public void onError(Throwable error) {
            broken = true;
            Status status = Status.fromThrowable(error);
            if (status.getCode() == Status.Code.UNIMPLEMENTED) {
                unary.put(address, clock.millis() + UNARY_MS);
                resendUnary();
                return;
            }
            failAll(status);
        }

        @Override
        public void onCompleted() {
            broken = true;
            failAll(Status.UNAVAILABLE.withDescription(address + " ended the produce stream"));
        }

        private void failAll(Status why) {
            for (Pending request : takeAll()) {
                request.answer().completeExceptionally(why.asRuntimeException());
            }
        }

        /** The broker refused the stream before taking any of its requests: each goes as a call of its own. */
        private void resendUnary() {
            for (Pending request : takeAll()) {
                callUnary(address, request.request()).whenComplete((answer, failure) -> {
                    if (failure != null) {
                        request.answer().completeExceptionally(failure);
                    } else {
                        request.answer().complete(answer);
                    }
                });
            }
        }

        /** Removes and returns the requests not answered yet, in the order they were sent. */
        private List<Pending> takeAll() {
            List<Pending> taken = new ArrayList<>();
            for (Long id : pending.keySet().stream().sorted().toList()) {
                Pending request = pending.remove(id);
                if (request != null) {
                    taken.add(request);
                }
            }
            return taken;
        }
    }
}
