package io.tidemark.core.metrics;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.log.file.CachedFile;
import io.tidemark.core.log.file.OpenFileCache;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The open-file gauges follow the process's cache. */
class BrokerMetricsTest {
    private static final class Idle extends CachedFile {
        Idle(OpenFileCache cache) {
            super(cache);
        }

        @Override
        protected void closeFiles() {
        }
    }

    private static List<Object> gauges(MetricRegistry registry) {
        return List.of("log.open-files", "log.open-files.max", "log.open-files.evictions", "log.open-files.waits")
                .stream().map(name -> (Object) ((Gauge<?>) registry.getGauges().get(name)).getValue()).toList();
    }

    @Test
    void openFilesTheirBudgetAndEvictionsAreGauges() throws IOException {
        OpenFileCache files = new OpenFileCache(2);
        MetricRegistry registry = new MetricRegistry();
        new BrokerMetrics(registry, files);
        assertEquals(List.of(0, 2, 0L, 0L), gauges(registry));
        for (int i = 0; i < 3; i++) {
            files.open(() -> new Idle(files)).close();
        }
        assertEquals(List.of(2, 2, 1L, 0L), gauges(registry));
    }
}
