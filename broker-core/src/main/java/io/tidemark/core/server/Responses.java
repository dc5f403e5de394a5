package io.tidemark.core.server;

import com.codahale.metrics.Timer;
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
 * goes out with its code and message ({@link GrpcErrors}); a failed read or write of the broker's disk is a
 * STORAGE_ERROR naming the file and the error; anything else is an INTERNAL_ERROR, logged with its stack trace, and its
 * message goes out so the user can report it. Every error is counted by code.
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

    /** Answers as {@link #respond} does, timing the call from here to its answer in {@code timer}. */
    <T> void respondTimed(Timer timer, StreamObserver<T> observer, Callable<T> call) {
        Timer.Context context = timer.time();
        respond(observer, () -> {
            try {
                return call.call();
            } finally {
                context.stop();
            }
        });
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
        if (cause instanceof UncheckedIOException io) {
            LOG.error("Storage failure answering a request", io);
            return new TidemarkException(ErrorCode.STORAGE_ERROR, io.getMessage() + ": " + io.getCause());
        }
        LOG.error("Unexpected failure answering a request", cause);
        return new TidemarkException(ErrorCode.INTERNAL_ERROR, cause.toString());
    }

    /** The longest timeout a request may ask for: an operator waiting an hour has asked for something else. */
    static final long TIMEOUT_MS_MAX = 3_600_000;

    /**
     * A request's timeout: {@code defaultMs} for 0.
     *
     * @throws TidemarkException INVALID_REQUEST for a negative one or one above {@value #TIMEOUT_MS_MAX} ms
     */
    static long timeoutMs(String field, long requestedMs, long defaultMs) {
        if (requestedMs < 0 || requestedMs > TIMEOUT_MS_MAX) {
            throw invalid(field + " " + requestedMs + " is not allowed: 1 to " + TIMEOUT_MS_MAX + " ms, or 0 for the "
                    + "default " + defaultMs + " ms");
        }
        return requestedMs == 0 ? defaultMs : requestedMs;
    }

    static TidemarkException invalid(String message) {
        return new TidemarkException(ErrorCode.INVALID_REQUEST, message);
    }
}
