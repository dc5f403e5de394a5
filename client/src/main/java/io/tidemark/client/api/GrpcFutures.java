package io.tidemark.client.api;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Bridges gRPC's future stubs to {@link CompletableFuture}s that fail only with {@link TidemarkException}: every
 * call failure passes through {@link GrpcErrors#fromThrowable} here, in one place.
 *
 * <p>Stateless; safe from any thread. Callbacks run on the gRPC executor thread that completed the call.
 */
final class GrpcFutures {
    private GrpcFutures() {
    }

    static <T> CompletableFuture<T> toCompletable(ListenableFuture<T> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Futures.addCallback(call, new FutureCallback<>() {
            @Override
            public void onSuccess(T value) {
                result.complete(value);
            }

            @Override
            public void onFailure(Throwable t) {
                result.completeExceptionally(asTidemark(t));
            }
        }, MoreExecutors.directExecutor());
        return result;
    }

    /** Starts a call; a call that throws before it starts (a closed client) gives a failed future too. */
    static <T> CompletableFuture<T> start(java.util.function.Supplier<ListenableFuture<T>> call) {
        try {
            return toCompletable(call.get());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * {@code future}'s outcome, failing with what {@link #rethrowable} makes of its failure: the TidemarkException
     * itself, not the CompletionException a composed stage ({@code thenCompose}) wraps it in, so callbacks can test it.
     */
    static <T> CompletableFuture<T> unwrapped(CompletableFuture<T> future) {
        CompletableFuture<T> result = new CompletableFuture<>();
        future.whenComplete((value, error) -> {
            if (error == null) {
                result.complete(value);
            } else {
                result.completeExceptionally(rethrowable(error));
            }
        });
        return result;
    }

    /**
     * Waits for a call; a failure is rethrown as the TidemarkException it carries. Every call has a deadline, so
     * the wait is bounded.
     */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.join();
        } catch (CompletionException | CancellationException e) {
            throw rethrowable(e);
        }
    }

    /** Unwraps completion wrappers; a TidemarkException or programmer error stays what it is. */
    static RuntimeException rethrowable(Throwable t) {
        Throwable cause = unwrap(t);
        if (cause instanceof TidemarkException || cause instanceof IllegalStateException
                || cause instanceof IllegalArgumentException) {
            return (RuntimeException) cause;
        }
        return asTidemark(cause);
    }

    static TidemarkException asTidemark(Throwable t) {
        Throwable cause = unwrap(t);
        return cause instanceof TidemarkException e ? e : GrpcErrors.fromThrowable(cause);
    }

    private static Throwable unwrap(Throwable t) {
        Throwable cause = t;
        for (int depth = 0; depth < 8 && (cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null; depth++) {
            cause = cause.getCause();
        }
        return cause;
    }
}
