package io.tidemark.client.api;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;

import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * A {@link ConsumerRuntime}'s metrics in the application's {@link MetricRegistry}, named
 * {@code tidemark.runtime.<group>.<name>}: a gauge per count of {@link ConsumerRuntime.Counts} (delivered, skipped,
 * acked, dropped, retried.in.place, retry.copies, dead.lettered, delay.moves, exhausted, retries.refused,
 * handler.errors, windows.aborted: totals since the start), and {@code partitions.assigned}. Removed when the runtime closes.
 */
final class RuntimeMetrics {
    private final MetricRegistry registry;
    private final String prefix;

    RuntimeMetrics(MetricRegistry registry, String group, RuntimeCounts counts,
                   Supplier<Set<TopicPartition>> assigned) {
        this.registry = registry;
        this.prefix = MetricRegistry.name("tidemark.runtime", group);
        total("delivered", counts.delivered);
        total("skipped", counts.skipped);
        total("acked", counts.acked);
        total("dropped", counts.dropped);
        total("retried.in.place", counts.retriedInPlace);
        total("retry.copies", counts.retryCopies);
        total("dead.lettered", counts.deadLettered);
        total("delay.moves", counts.delayMoves);
        total("exhausted", counts.exhausted);
        total("windows.aborted", counts.windowsAborted);
        total("retries.refused", counts.retriesRefused);
        total("handler.errors", counts.handlerErrors);
        registry.register(MetricRegistry.name(prefix, "partitions.assigned"),
                (Gauge<Integer>) () -> assigned.get().size());
    }

    private void total(String name, LongAdder adder) {
        registry.register(MetricRegistry.name(prefix, name), (Gauge<Long>) adder::sum);
    }

    /** Removes this runtime's metrics. */
    void remove() {
        registry.removeMatching((name, metric) -> name.startsWith(prefix + "."));
    }
}
