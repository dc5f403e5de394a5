package io.tidemark.core.server;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tidemark.proto.v1.ProduceManyRequest;
import io.tidemark.proto.v1.ProduceManyResponse;
import io.tidemark.proto.v1.ProduceStreamRequest;
import io.tidemark.proto.v1.ProduceStreamResponse;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * One client's ProduceStream: each request is handed to the partitions as it arrives (gRPC delivers a call's messages
 * one at a time, in order, so the batches of a partition reach its log in the order the client sent them), and each
 * answer goes back with the request's correlation id as soon as it is ready, whatever the order. The client closing
 * its side ends the stream once every request it sent is answered; a cancelled stream (the client went away) drops the
 * answers still to come, whose batches are stored or refused all the same.
 *
 * <p>Back-pressure: the call takes at most {@value #MAX_UNANSWERED} requests not answered yet; gRPC reads the next
 * message only once one is answered, so a client sending faster than its partitions store waits on HTTP/2 flow control
 * instead of growing this broker's heap (each request holds up to {@code max.request.bytes} until it is answered). A
 * producer has a handful unanswered per broker (one request per send cycle, {@code max.in.flight.requests.per.partition}
 * batches per partition), so the window binds only a client that outruns the broker.
 *
 * <p>Thread-safe: requests come on the call's serialized executor, answers on whichever thread completes a batch;
 * writes to the response stream, and requests for the next messages, are serialized on this object.
 */
final class ProduceStreamCall implements StreamObserver<ProduceStreamRequest> {
    /** Requests of one stream taken and not answered yet, at most. */
    static final int MAX_UNANSWERED = 16;

    private final Function<ProduceManyRequest, CompletableFuture<ProduceManyResponse>> store;
    private final ServerCallStreamObserver<ProduceStreamResponse> responses;
    private int unanswered;
    private boolean halfClosed;
    private boolean ended;

    /** @param store hands a request's batches to their partitions before it returns; completes with their outcomes */
    ProduceStreamCall(Function<ProduceManyRequest, CompletableFuture<ProduceManyResponse>> store,
                      ServerCallStreamObserver<ProduceStreamResponse> responses) {
        this.store = store;
        this.responses = responses;
        responses.setOnCancelHandler(this::cancelled);
        responses.disableAutoRequest();
        responses.request(MAX_UNANSWERED);
    }

    @Override
    public void onNext(ProduceStreamRequest request) {
        synchronized (this) {
            unanswered++;
        }
        long correlationId = request.getCorrelationId();
        store.apply(request.getRequest()).thenAccept(answer -> answer(ProduceStreamResponse.newBuilder()
                .setCorrelationId(correlationId).setResponse(answer).build()));
    }

    private synchronized void answer(ProduceStreamResponse response) {
        unanswered--;
        if (ended) {
            return;
        }
        responses.onNext(response);
        responses.request(1);
        if (halfClosed && unanswered == 0) {
            end();
        }
    }

    @Override
    public synchronized void onCompleted() {
        halfClosed = true;
        if (!ended && unanswered == 0) {
            end();
        }
    }

    @Override
    public synchronized void onError(Throwable error) {
        ended = true;
    }

    private synchronized void cancelled() {
        ended = true;
    }

    private void end() {
        ended = true;
        responses.onCompleted();
    }
}
