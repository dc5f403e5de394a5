package io.tidemark.core.server;

import io.grpc.stub.StreamObserver;
import io.tidemark.core.metrics.BrokerMetrics;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.UncheckedIOException;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Answers a gRPC call with a value or an error, the same way for every service: a {@link TidemarkException}
 * goes out with its code and message ({@link GrpcErrors}); anything else is an INTERNAL_ERROR, logged with its
 * stack trace, and its message goes out so the user can report it. Every error is counted by code.
 */
final class Responses {
    private static final Logger LOG = LoggerFactory.getLogger(Responses.class);

    private final BrokerMetrics metrics;

    Responses(BrokerMetrics metrics) {
        this.metrics = metrics;
    }

    <T> void respond(StreamObserver<T> observer, Callable<T> call) {
        T response;
        try {
            response = call.call();
        } catch (Throwable t) {
            fail(observer, t);
            return;
        }
        observer.onNext(response);
        observer.onCompleted();
    }

    void fail(StreamObserver<?> observer, Throwable failure) {
        observer.onError(GrpcErrors.toStatusException(refusal(failure)));
    }

    /** The error a call answers for {@code failure}, counted: one outcome of a call that answers several. */
    TidemarkException refusal(Throwable failure) {
        TidemarkException error = asTidemarkException(failure);
        metrics.error(error.code());
        return error;
    }

    private static TidemarkException asTidemarkException(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof TidemarkException e) {
            return e;
        }
        if (cause instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return new TidemarkException(ErrorCode.NOT_AVAILABLE, "the broker is shutting down");
        }
        LOG.error("Unexpected failure answering a request", cause);
        String what = cause instanceof UncheckedIOException io ? "storage error: " + io.getMessage() : cause.toString();
        return new TidemarkException(ErrorCode.INTERNAL_ERROR, what);
    }

    static TidemarkException invalid(String message) {
        return new TidemarkException(ErrorCode.INVALID_REQUEST, message);
    }
}
