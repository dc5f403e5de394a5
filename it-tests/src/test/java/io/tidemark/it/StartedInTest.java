package io.tidemark.it;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;

/**
 * What a test started (processes, clients, clusters), closed in the reverse order when the test ends, passed or not:
 * a field {@code @RegisterExtension final StartedInTest running = new StartedInTest();}.
 */
final class StartedInTest implements AfterEachCallback {
    private final List<AutoCloseable> started = new ArrayList<>();

    /** Closes {@code resource} when the test ends, before what was added earlier. */
    void add(AutoCloseable resource) {
        started.add(resource);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        try {
            for (int i = started.size() - 1; i >= 0; i--) {
                started.get(i).close();
            }
        } finally {
            started.clear();
        }
    }
}
