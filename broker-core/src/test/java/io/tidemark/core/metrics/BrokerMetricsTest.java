package io.tidemark.core.metrics;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.log.file.CachedFile;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The open-file gauges follow the process's cache; a partition's offset gauges never fail a scrape. */
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

    /** A partition whose log is not there yet (its group is adding it) reads -1 instead of failing every scrape. */
    @Test
    void anOffsetGaugeOfAPartitionWithoutItsLogYetReadsMinusOne() {
        MetricRegistry registry = new MetricRegistry();
        Partition adding = (Partition) Proxy.newProxyInstance(Partition.class.getClassLoader(),
                new Class<?>[] {Partition.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "id" -> new TopicPartition("orders", 3);
                    case "logStartOffset" -> 7L;
                    case "logEndOffset" -> throw new TidemarkException(ErrorCode.NOT_AVAILABLE,
                            "orders-3 is being added to its Raft group; retry");
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        new BrokerMetrics(registry, new OpenFileCache(2)).holding(adding);
        Map<String, Gauge> gauges = registry.getGauges();
        assertEquals(List.of(-1L, 7L), List.of(gauges.get("partition.log-end-offset.orders.3").getValue(),
                gauges.get("partition.log-start-offset.orders.3").getValue()));
    }
}
