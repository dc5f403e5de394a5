package io.tidemark.core.server;

import io.grpc.stub.StreamObserver;

import java.util.concurrent.CompletableFuture;

/** A unary call's observer for a service test: its answer, or its error, as a future. */
final class AnswerObserver<T> implements StreamObserver<T> {
    final CompletableFuture<T> answer = new CompletableFuture<>();

    @Override
    public void onNext(T response) {
        answer.complete(response);
    }

    @Override
    public void onError(Throwable t) {
        answer.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
    }
}
