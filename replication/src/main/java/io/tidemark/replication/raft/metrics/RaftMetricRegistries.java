package io.tidemark.replication.raft.metrics;

import com.codahale.metrics.MetricRegistry;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.util.TimeDuration;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Ratis' metrics in Tidemark's Dropwizard, and cheap enough to keep on its per-entry paths. Ratis finds its metrics
 * implementation through {@link java.util.ServiceLoader} ({@code META-INF/services/org.apache.ratis.metrics.
 * MetricRegistries}); its own ({@code ratis-metrics-default}) times every log write, log task and appendEntries with
 * a timer over an exponentially decaying reservoir, a skip-list insert under a lock per measurement: 6-8% of the
 * brokers' sampled Java frames in a fixed-rate profile (docs/benchmarks.md, "Ratis' metrics, and where the brokers'
 * CPU goes, by thread"), and it kept them where nothing read them. Here a timer keeps the last
 * {@link RaftMetricRegistry#TIMER_WINDOW} measurements instead, and every metric of every Ratis registry of the process
 * lands in one Dropwizard registry, {@link #raftMetrics()}, which a broker exports over JMX and Prometheus beside its
 * own, named {@code ratis.COMPONENT.PREFIX.NAME} as Ratis names them (e.g.
 * {@code ratis.log_worker.s1@group-0123456789AB.flushCount}).
 *
 * <p>One instance per process: Ratis loads it once ({@link MetricRegistries#global()}), so the registry it fills is
 * the process's, shared by the brokers of a test that runs several in one JVM (their metric names carry their
 * server ids). As in Ratis' own, a registry is counted: each {@link #create} of an info takes a reference and each
 * {@link #remove} gives one back, and the registry's metrics leave the process's registry with the last.
 */
public final class RaftMetricRegistries extends MetricRegistries {
    private static final MetricRegistry RAFT_METRICS = new MetricRegistry();

    /** Guarded by {@code this}: registries are made and dropped with groups and servers, not per entry. */
    private final Map<MetricRegistryInfo, Counted> registries = new HashMap<>();
    private final List<Consumer<RatisMetricRegistry>> onAdded = new CopyOnWriteArrayList<>();
    private final List<Consumer<RatisMetricRegistry>> onRemoved = new CopyOnWriteArrayList<>();

    /** The Dropwizard registry that holds the metrics of every Ratis registry of this process. */
    public static MetricRegistry raftMetrics() {
        return RAFT_METRICS;
    }

    @Override
    public synchronized RatisMetricRegistry create(MetricRegistryInfo info) {
        Counted counted = registries.get(info);
        if (counted == null) {
            counted = new Counted(new RaftMetricRegistry(info, RAFT_METRICS));
            registries.put(info, counted);
            RaftMetricRegistry added = counted.registry;
            onAdded.forEach(reporter -> reporter.accept(added));
        }
        counted.references++;
        return counted.registry;
    }

    @Override
    public synchronized boolean remove(MetricRegistryInfo info) {
        Counted counted = registries.get(info);
        if (counted == null) {
            return false;
        }
        if (--counted.references == 0) {
            registries.remove(info);
            counted.registry.removeAll();
            onRemoved.forEach(reporter -> reporter.accept(counted.registry));
        }
        return true;
    }

    @Override
    public synchronized void clear() {
        registries.values().forEach(counted -> counted.registry.removeAll());
        registries.clear();
    }

    @Override
    public synchronized Optional<RatisMetricRegistry> get(MetricRegistryInfo info) {
        return Optional.ofNullable(registries.get(info)).map(counted -> counted.registry);
    }

    @Override
    public synchronized Set<MetricRegistryInfo> getMetricRegistryInfos() {
        return Set.copyOf(registries.keySet());
    }

    @Override
    public synchronized Collection<RatisMetricRegistry> getMetricRegistries() {
        return registries.values().stream().map(counted -> (RatisMetricRegistry) counted.registry).toList();
    }

    @Override
    public void addReporterRegistration(Consumer<RatisMetricRegistry> added, Consumer<RatisMetricRegistry> removed) {
        onAdded.add(added);
        onRemoved.add(removed);
    }

    @Override
    public void removeReporterRegistration(Consumer<RatisMetricRegistry> added,
                                           Consumer<RatisMetricRegistry> removed) {
        onAdded.remove(added);
        onRemoved.remove(removed);
    }

    /** Not used: the broker's {@code MetricsEndpoint} reports {@link #raftMetrics()} over JMX. */
    @Override
    public void enableJmxReporter() {
        throw new UnsupportedOperationException("Ratis' metrics are reported over JMX by the broker's MetricsEndpoint");
    }

    /** Not used: the broker reports its metrics over JMX and Prometheus, not to a console. */
    @Override
    public void enableConsoleReporter(TimeDuration period) {
        throw new UnsupportedOperationException("Ratis' metrics are reported over JMX and Prometheus, not to a console");
    }

    /** A registry and the creations of its info not yet removed. */
    private static final class Counted {
        private final RaftMetricRegistry registry;
        private int references;

        private Counted(RaftMetricRegistry registry) {
            this.registry = registry;
        }
    }
}
