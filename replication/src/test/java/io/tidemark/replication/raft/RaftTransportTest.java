package io.tidemark.replication.raft;

import org.apache.ratis.retry.RetryPolicy;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RaftTransportTest {
    private static RetryPolicy.Action afterAttempt(int attempt) {
        return RaftTransport.CLIENT_RETRIES.handleAttemptFailure(new RetryPolicy.Event() {
            @Override
            public int getAttemptCount() {
                return attempt;
            }

            @Override
            public Throwable getCause() {
                return new ConnectException("Connection refused");
            }
        });
    }

    private static long sleepMs(int attempt) {
        return afterAttempt(attempt).getSleepTime().toLong(TimeUnit.MILLISECONDS);
    }

    @Test
    void aFailedCallIsTriedAgainAfterAWaitThatDoublesUpToOneSecond() {
        for (int attempt = 1; attempt < 40; attempt++) {
            long nominal = Math.min(25L << attempt, 1_000);
            for (int draw = 0; draw < 20; draw++) {
                RetryPolicy.Action action = afterAttempt(attempt);
                assertTrue(action.shouldRetry(), "attempt " + attempt + " is followed by another");
                long sleep = action.getSleepTime().toLong(TimeUnit.MILLISECONDS);
                assertTrue(sleep >= nominal / 2 && sleep <= nominal * 3 / 2, "after attempt " + attempt
                        + " the wait is " + sleep + " ms, within 50-150% of " + nominal + " ms");
            }
        }
    }

    @Test
    void theFortiethFailedAttemptEndsTheCallAfterAboutThirtyFiveSecondsOfWaiting() {
        assertFalse(afterAttempt(40).shouldRetry());
        assertFalse(afterAttempt(41).shouldRetry());
        long waited = 0;
        for (int attempt = 1; attempt < 40; attempt++) {
            waited += sleepMs(attempt);
        }
        assertTrue(waited >= 17_000 && waited < 54_000, "the waits add up to " + waited + " ms");
    }
}
