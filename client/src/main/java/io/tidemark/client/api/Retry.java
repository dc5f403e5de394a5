package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Runs an operation again while it fails with a retriable {@link TidemarkException}, a fixed backoff apart, until a
 * deadline: the retry loop of the clients and the tools. "Retriable" is {@link TidemarkException#retriable()}, the
 * one definition.
 * <ul>
 *   <li>The first attempt always runs. The deadline is {@code timeoutMs} after the call began, on the clock given.</li>
 *   <li>A TidemarkException that is not retriable ends the call at once, as it is; so does any other exception (a
 *       programmer error is not retried).</li>
 *   <li>After a retriable failure the next attempt starts {@code backoffMs} later, unless that is at or past the
 *       deadline: then the call ends with the last failure, as it is or as {@link #onDeadline} rewords it. No attempt
 *       starts after the deadline, and no wait is spent on one that could not run.</li>
 *   <li>To wait for a condition, an attempt throws a retriable error saying what it waits for (NOT_AVAILABLE) until
 *       the condition holds; at the deadline that is the error, unless a call failed last.</li>
 * </ul>
 * {@link #call} waits between attempts on the calling thread, {@link #callAsync} on a scheduler. Time is read only
 * from the clock, and waits go through a {@link Sleeper} or {@link Scheduler}, so tests script both.
 *
 * <p>Immutable and thread-safe; each call has its own deadline.
 */
public final class Retry {
    /** Waits between the attempts of {@link #call}. */
    @FunctionalInterface
    interface Sleeper {
        void sleep(long ms) throws InterruptedException;
    }

    /** Runs the next attempt of {@link #callAsync} after a delay; throws RejectedExecutionException once shut down. */
    @FunctionalInterface
    interface Scheduler {
        void schedule(Runnable task, long delayMs);
    }

    /** What a call ends with at its deadline: made from the last (retriable) failure and the attempts made. */
    @FunctionalInterface
    public interface GiveUp {
        TidemarkException error(TidemarkException last, int attempts);
    }

    private static final Logger LOG = LoggerFactory.getLogger(Retry.class);
    private static final Sleeper THREAD = TimeUnit.MILLISECONDS::sleep;

    private final InstantSource clock;
    private final long timeoutMs;
    private final long backoffMs;
    private final GiveUp giveUp;

    private Retry(InstantSource clock, long timeoutMs, long backoffMs, GiveUp giveUp) {
        this.clock = clock;
        this.timeoutMs = timeoutMs;
        this.backoffMs = backoffMs;
        this.giveUp = giveUp;
    }

    /**
     * Attempts for up to {@code timeoutMs} on {@code clock}, {@code backoffMs} apart, ending with the last failure
     * as it is.
     */
    public static Retry within(InstantSource clock, long timeoutMs, long backoffMs) {
        if (clock == null || timeoutMs < 0 || backoffMs < 0) {
            throw new IllegalArgumentException("a retry needs a clock and a timeout and backoff of 0 ms or more, not "
                    + clock + ", " + timeoutMs + " ms, " + backoffMs + " ms");
        }
        return new Retry(clock, timeoutMs, backoffMs, (last, attempts) -> last);
    }

    /** The same retry, ending at the deadline with what {@code giveUp} makes of the last failure. */
    public Retry onDeadline(GiveUp giveUp) {
        return new Retry(clock, timeoutMs, backoffMs, giveUp);
    }

    /**
     * Runs {@code attempt} until it returns, waiting on this thread between attempts. An interrupt while waiting ends
     * the call with the last failure as it is (the deadline did not come), the thread's interrupt flag kept.
     *
     * @throws TidemarkException the first failure that is not retriable, or the last one at the deadline
     */
    public <T> T call(Supplier<T> attempt) {
        return call(attempt, THREAD);
    }

    /** {@link #call} for an attempt that returns nothing. */
    public void run(Runnable attempt) {
        call(() -> {
            attempt.run();
            return null;
        });
    }

    <T> T call(Supplier<T> attempt, Sleeper sleeper) {
        long deadlineMs = deadlineMs();
        for (int attempts = 1; ; attempts++) {
            try {
                return attempt.get();
            } catch (TidemarkException e) {
                if (!mayRetry(e, deadlineMs)) {
                    throw ending(e, attempts);
                }
                LOG.debug("attempt {} failed, retrying in {} ms: {}", attempts, backoffMs, e);
                try {
                    sleeper.sleep(backoffMs);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /**
     * Runs {@code attempt} until its future succeeds, the next attempt {@code backoffMs} after a failure on
     * {@code scheduler}. A scheduler that refuses the task (shut down) ends the call like the deadline.
     *
     * @return completes with the first answer; fails with the first failure that is not retriable, or the last one
     *         at the deadline
     */
    <T> CompletableFuture<T> callAsync(Supplier<CompletableFuture<T>> attempt, Scheduler scheduler) {
        CompletableFuture<T> result = new CompletableFuture<>();
        attemptAsync(attempt, scheduler, deadlineMs(), 1, result);
        return result;
    }

    private <T> void attemptAsync(Supplier<CompletableFuture<T>> attempt, Scheduler scheduler, long deadlineMs,
                                  int attempts, CompletableFuture<T> result) {
        CompletableFuture<T> call;
        try {
            call = attempt.get();
        } catch (RuntimeException e) {
            call = CompletableFuture.failedFuture(e);
        }
        call.whenComplete((value, error) -> {
            if (error == null) {
                result.complete(value);
                return;
            }
            RuntimeException failure = GrpcFutures.rethrowable(error);
            if (!(failure instanceof TidemarkException e)) {
                result.completeExceptionally(failure);
            } else if (!mayRetry(e, deadlineMs)) {
                result.completeExceptionally(ending(e, attempts));
            } else {
                LOG.debug("attempt {} failed, retrying in {} ms: {}", attempts, backoffMs, e);
                try {
                    scheduler.schedule(() -> attemptAsync(attempt, scheduler, deadlineMs, attempts + 1, result),
                            backoffMs);
                } catch (RejectedExecutionException shutDown) {
                    result.completeExceptionally(giveUp.error(e, attempts));
                }
            }
        });
    }

    private long deadlineMs() {
        long nowMs = clock.millis();
        return timeoutMs > Long.MAX_VALUE - nowMs ? Long.MAX_VALUE : nowMs + timeoutMs;
    }

    /** Whether the failure is retriable and the next attempt, a backoff from now, starts before the deadline. */
    private boolean mayRetry(TidemarkException e, long deadlineMs) {
        return e.retriable() && backoffMs < deadlineMs - clock.millis();
    }

    /** What a call ends with: a retriable failure means the deadline came; any other ends the call as it is. */
    private TidemarkException ending(TidemarkException e, int attempts) {
        return e.retriable() ? giveUp.error(e, attempts) : e;
    }
}
