package io.tidemark.it;

import org.awaitility.core.ConditionTimeoutException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The end of every chaos test: {@code tidemark replicas verify} over the whole cluster, run as a user runs it, must
 * find every partition's replicas in agreement. A replica that cannot be read yet (a broker restarting, a group
 * catching up) is waited for; a difference fails at once.
 */
final class ReplicaCheck {
    /** Long enough for a restarted broker to start its groups and answer. */
    private static final Duration UNREADABLE_WAIT = Duration.ofSeconds(90);
    private static final int DIFFER = 4;
    private static final int NOT_CHECKED = 3;
    private static final int BEHIND = 5;

    private ReplicaCheck() {
    }

    static void assertReplicasAgree(Path workDir, String bootstrap) {
        AtomicReference<Tidemark.Result> last = new AtomicReference<>();
        try {
            await().atMost(UNREADABLE_WAIT).pollInterval(Duration.ofSeconds(1)).until(() -> {
                Tidemark.Result verified = Tidemark.run(workDir, "replicas", "verify", "--bootstrap", bootstrap);
                last.set(verified);
                if (verified.exitCode() != 0 && verified.exitCode() != NOT_CHECKED) {
                    throw new AssertionError("tidemark replicas verify exited " + verified.exitCode()
                            + (verified.exitCode() == DIFFER ? " (replicas differ)" : verified.exitCode() == BEHIND
                            ? " (a replica stayed behind)" : "") + ":\n" + verified.out()
                            + verified.err());
                }
                return verified.exitCode() == 0;
            });
        } catch (ConditionTimeoutException e) {
            fail("tidemark replicas verify could not read every replica within " + UNREADABLE_WAIT + ":\n"
                    + last.get().out() + last.get().err());
        }
        System.out.println("tidemark replicas verify:\n" + last.get().out());
    }
}
