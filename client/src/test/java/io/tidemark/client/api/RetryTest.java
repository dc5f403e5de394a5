package io.tidemark.client.api;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every rule of {@link Retry}, on a scripted clock: sleeping and scheduling only move the clock. */
class RetryTest {
    private static final long START_MS = 1_000_000;

    private final ManualClock clock = new ManualClock(START_MS);
    /** When each attempt started, ms after the start. */
    private final List<Long> attemptsAtMs = new ArrayList<>();
    /** Every wait asked of the sleeper or scheduler, ms. */
    private final List<Long> waitsMs = new ArrayList<>();

    private final Retry.Sleeper sleeper = ms -> {
        waitsMs.add(ms);
        clock.advance(ms);
    };

    /** Scheduled tasks, run by {@link #runScheduled} after moving the clock by their delay. */
    private final Deque<Runnable> scheduled = new ArrayDeque<>();
    private final Retry.Scheduler scheduler = (task, delayMs) -> {
        waitsMs.add(delayMs);
        scheduled.add(() -> {
            clock.advance(delayMs);
            task.run();
        });
    };

    private static TidemarkException notAvailable(String message) {
        return new TidemarkException(ErrorCode.NOT_AVAILABLE, message);
    }

    /** An attempt that fails with each of {@code failures} in turn (taking {@code tookMs} each), then answers "ok". */
    private Supplier<String> failing(long tookMs, RuntimeException... failures) {
        Deque<RuntimeException> left = new ArrayDeque<>(List.of(failures));
        return () -> {
            attemptsAtMs.add(clock.millis() - START_MS);
            clock.advance(tookMs);
            RuntimeException next = left.poll();
            if (next != null) {
                throw next;
            }
            return "ok";
        };
    }

    /** An attempt that always fails retriably, each failure naming when its attempt started. */
    private Supplier<String> neverAnswers() {
        return () -> {
            long atMs = clock.millis() - START_MS;
            attemptsAtMs.add(atMs);
            throw notAvailable("down at " + atMs);
        };
    }

    private void runScheduled() {
        for (Runnable task = scheduled.poll(); task != null; task = scheduled.poll()) {
            task.run();
        }
    }

    @Test
    void retriableFailuresAreRetriedABackoffApartUntilAnAnswer() {
        Retry retry = Retry.within(clock, 10_000, 100);
        assertEquals("ok", retry.call(failing(0, notAvailable("a"), TidemarkException.notLeader("b", 2, "h:1")),
                sleeper));
        assertEquals(List.of(0L, 100L, 200L), attemptsAtMs);
        assertEquals(List.of(100L, 100L), waitsMs);
    }

    @Test
    void aFailureThatIsNotRetriableEndsTheCallAtOnceAsItIs() {
        TidemarkException refused = new TidemarkException(ErrorCode.UNKNOWN_TOPIC, "topic t does not exist");
        Retry retry = Retry.within(clock, 10_000, 100).onDeadline((last, attempts) -> notAvailable("reworded"));
        assertSame(refused, assertThrows(TidemarkException.class, () -> retry.call(failing(0, refused), sleeper)));
        IllegalStateException bug = new IllegalStateException("a bug");
        assertSame(bug, assertThrows(IllegalStateException.class, () -> retry.call(failing(0, bug), sleeper)));
        assertEquals(List.of(0L, 0L), attemptsAtMs);
        assertEquals(List.of(), waitsMs);
    }

    @Test
    void theLastFailureEndsTheCallWhenTheNextAttemptWouldStartAtOrAfterTheDeadline() {
        TidemarkException last = assertThrows(TidemarkException.class,
                () -> Retry.within(clock, 1_000, 300).call(neverAnswers(), sleeper));
        assertEquals("down at 900", last.getMessage(), "1200 is past the deadline: no fifth attempt, no wait for it");
        assertEquals(List.of(0L, 300L, 600L, 900L), attemptsAtMs);
        assertEquals(List.of(300L, 300L, 300L), waitsMs);
    }

    @Test
    void noAttemptStartsAtTheDeadline() {
        assertThrows(TidemarkException.class, () -> Retry.within(clock, 1_000, 250).call(neverAnswers(), sleeper));
        assertEquals(List.of(0L, 250L, 500L, 750L), attemptsAtMs);
    }

    @Test
    void slowAttemptsSpendTheDeadlineToo() {
        TidemarkException last = assertThrows(TidemarkException.class, () -> Retry.within(clock, 1_000, 100)
                .call(failing(400, notAvailable("1"), notAvailable("2"), notAvailable("3")), sleeper));
        assertEquals("2", last.getMessage());
        assertEquals(List.of(0L, 500L), attemptsAtMs);
    }

    @Test
    void aZeroTimeoutMakesOneAttempt() {
        assertThrows(TidemarkException.class, () -> Retry.within(clock, 0, 0).call(neverAnswers(), sleeper));
        assertEquals(List.of(0L), attemptsAtMs);
    }

    @Test
    void onDeadlineRewordsTheLastFailureWithTheAttemptsMade() {
        Retry retry = Retry.within(clock, 1_000, 300).onDeadline((last, attempts) ->
                new TidemarkException(last.code(), "gave up after " + attempts + " attempts; the last: "
                        + last.getMessage()));
        assertEquals("gave up after 4 attempts; the last: down at 900",
                assertThrows(TidemarkException.class, () -> retry.call(neverAnswers(), sleeper)).getMessage());
    }

    @Test
    void anInterruptWhileWaitingEndsTheCallWithTheLastFailureAsItIsAndKeepsTheFlag() {
        TidemarkException last = assertThrows(TidemarkException.class, () -> Retry.within(clock, 10_000, 100)
                .onDeadline((failure, attempts) -> notAvailable("the deadline did not come"))
                .call(neverAnswers(), ms -> {
                    throw new InterruptedException();
                }));
        assertTrue(Thread.interrupted());
        assertEquals("down at 0", last.getMessage());
    }

    @Test
    void runIsCallWithoutAnAnswer() {
        List<String> ran = new ArrayList<>();
        Retry.within(clock, 0, 0).run(() -> ran.add("once"));
        assertEquals(List.of("once"), ran);
    }

    @Test
    void asyncRetriesOnTheSchedulerUntilAnAnswer() {
        Deque<CompletableFuture<String>> answers = new ArrayDeque<>(List.of(
                CompletableFuture.failedFuture(notAvailable("a")),
                // a failure passed through thenCompose arrives wrapped: it is unwrapped before the test
                CompletableFuture.<String>completedFuture("x").thenCompose(x -> CompletableFuture.failedFuture(
                        TidemarkException.notLeader("b", 2, "h:1"))),
                CompletableFuture.completedFuture("ok")));
        CompletableFuture<String> result = Retry.within(clock, 10_000, 100).callAsync(() -> {
            attemptsAtMs.add(clock.millis() - START_MS);
            return answers.poll();
        }, scheduler);
        assertFalse(result.isDone());
        runScheduled();
        assertEquals("ok", result.join());
        assertEquals(List.of(0L, 100L, 200L), attemptsAtMs);
    }

    @Test
    void asyncEndsWithTheLastFailureAtTheDeadlineReworded() {
        CompletableFuture<String> result = Retry.within(clock, 1_000, 300)
                .onDeadline((last, attempts) -> notAvailable(attempts + " attempts; the last: " + last.getMessage()))
                .callAsync(() -> CompletableFuture.supplyAsync(neverAnswers(), Runnable::run), scheduler);
        runScheduled();
        assertEquals("4 attempts; the last: down at 900", failure(result).getMessage());
        assertEquals(List.of(300L, 300L, 300L), waitsMs);
    }

    @Test
    void asyncEndsAtOnceWithAFailureThatIsNotRetriableOrAnAttemptThatThrows() {
        TidemarkException refused = new TidemarkException(ErrorCode.ORIGIN_OFFSET_HELD, "held");
        assertSame(refused, failure(Retry.within(clock, 10_000, 100)
                .callAsync(() -> CompletableFuture.failedFuture(refused), scheduler)));
        IllegalStateException bug = new IllegalStateException("a bug");
        assertSame(bug, failure(Retry.within(clock, 10_000, 100).callAsync(() -> {
            throw bug;
        }, scheduler)));
        assertTrue(scheduled.isEmpty());
    }

    @Test
    void asyncEndsLikeTheDeadlineWhenTheSchedulerIsShutDown() {
        CompletableFuture<String> result = Retry.within(clock, 10_000, 100)
                .onDeadline((last, attempts) -> notAvailable("closed after " + attempts + ": " + last.getMessage()))
                .callAsync(() -> CompletableFuture.failedFuture(notAvailable("down")), (task, delayMs) -> {
                    throw new RejectedExecutionException("shut down");
                });
        assertEquals("closed after 1: down", failure(result).getMessage());
    }

    private static RuntimeException failure(CompletableFuture<String> result) {
        CompletionException e = assertThrows(CompletionException.class, result::join);
        return (RuntimeException) e.getCause();
    }
}
