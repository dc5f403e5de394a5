package io.tidemark.replication.raft.metrics;

import com.codahale.metrics.Clock;
import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.SlidingWindowReservoir;
import com.codahale.metrics.Timer;
import org.apache.ratis.metrics.LongCounter;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.Timekeeper;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One Ratis metric registry (a server's, a group's log worker's, a leader's appenders'...): its metrics live in the
 * process's Dropwizard registry of Ratis metrics under {@code APPLICATION.COMPONENT.PREFIX.NAME}. A timer keeps the
 * durations of its last {@value #TIMER_WINDOW} measurements (a synchronized array write per measurement; most of
 * Ratis' timers are timed by one thread, a log worker or an appender), and counts them and their rate as a Dropwizard
 * timer does.
 */
final class RaftMetricRegistry implements RatisMetricRegistry {
    /** Measurements a timer's quantiles are taken over: Dropwizard's default reservoir size. */
    static final int TIMER_WINDOW = 1028;
    /** The timers' clock, Dropwizard's: a measurement is one object (its start), not a timer context and a stop. */
    private static final Clock CLOCK = Clock.defaultClock();

    private final MetricRegistryInfo info;
    private final MetricRegistry metrics;
    private final String namePrefix;
    /** Short name to full name, so that a metric's name is built once, not at every lookup Ratis makes. */
    private final Map<String, String> names = new ConcurrentHashMap<>();

    RaftMetricRegistry(MetricRegistryInfo info, MetricRegistry metrics) {
        this.info = info;
        this.metrics = metrics;
        this.namePrefix = MetricRegistry.name(info.getApplicationName(), info.getMetricsComponentName(),
                info.getPrefix());
    }

    @Override
    public Timekeeper timer(String name) {
        Timer timer = metrics.timer(fullName(name), () -> new Timer(new SlidingWindowReservoir(TIMER_WINDOW), CLOCK));
        return () -> {
            long startNanos = CLOCK.getTick();
            return () -> {
                long elapsedNanos = CLOCK.getTick() - startNanos;
                timer.update(elapsedNanos, TimeUnit.NANOSECONDS);
                return elapsedNanos;
            };
        };
    }

    @Override
    public LongCounter counter(String name) {
        Counter counter = metrics.counter(fullName(name));
        return new LongCounter() {
            @Override
            public void inc(long n) {
                counter.inc(n);
            }

            @Override
            public void dec(long n) {
                counter.dec(n);
            }

            @Override
            public long getCount() {
                return counter.getCount();
            }
        };
    }

    @Override
    public boolean remove(String name) {
        return metrics.remove(fullName(name));
    }

    @Override
    public <T> void gauge(String name, Supplier<Supplier<T>> gaugeSupplier) {
        Supplier<T> value = gaugeSupplier.get();
        metrics.gauge(fullName(name), () -> (Gauge<T>) value::get);
    }

    @Override
    public MetricRegistryInfo getMetricRegistryInfo() {
        return info;
    }

    /** Removes every metric this registry made (the group or server it measured is gone). */
    void removeAll() {
        names.values().forEach(metrics::remove);
        names.clear();
    }

    private String fullName(String name) {
        return names.computeIfAbsent(name, n -> MetricRegistry.name(namePrefix, n));
    }
}
