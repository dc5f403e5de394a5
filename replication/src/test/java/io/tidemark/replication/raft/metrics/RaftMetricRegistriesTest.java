package io.tidemark.replication.raft.metrics;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import org.apache.ratis.metrics.LongCounter;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.Timekeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RaftMetricRegistriesTest {
    private static final MetricRegistryInfo WORKER = new MetricRegistryInfo("s1@group-0123456789AB", "ratis",
            "log_worker", "a log worker's metrics");
    private static final String PREFIX = "ratis.log_worker.s1@group-0123456789AB.";

    private final MetricRegistries registries = new RaftMetricRegistries();
    private final MetricRegistry raftMetrics = RaftMetricRegistries.raftMetrics();

    @AfterEach
    void clear() {
        registries.clear();
    }

    @Test
    void ratisLoadsTidemarksImplementation() {
        assertInstanceOf(RaftMetricRegistries.class, MetricRegistries.global());
    }

    @Test
    void aTimerCountsItsMeasurementsAndKeepsTheLastWindowOfThem() {
        Timekeeper flush = registries.create(WORKER).timer("flushTimer");
        int measured = RaftMetricRegistry.TIMER_WINDOW + 72;
        for (int i = 0; i < measured; i++) {
            Timekeeper.Context context = flush.time();
            assertTrue(context.stop() >= 0);
        }
        Timer timer = raftMetrics.getTimers().get(PREFIX + "flushTimer");
        assertEquals(measured, timer.getCount());
        assertEquals(RaftMetricRegistry.TIMER_WINDOW, timer.getSnapshot().size());
    }

    @Test
    void aCounterIsTheProcessRegistrysCounter() {
        LongCounter appends = registries.create(WORKER).counter("appendEntryCount");
        appends.inc();
        appends.inc(4);
        appends.dec();
        assertEquals(4, appends.getCount());
        assertEquals(4, raftMetrics.getCounters().get(PREFIX + "appendEntryCount").getCount());
    }

    @Test
    void aGaugeReadsItsSupplierWhenReported() {
        AtomicLong cached = new AtomicLong(3);
        registries.create(WORKER).gauge("cacheSize", () -> cached::get);
        cached.set(17);
        assertEquals(17L, raftMetrics.getGauges().get(PREFIX + "cacheSize").getValue());
    }

    @Test
    void aRegistrysMetricsLeaveWithItsLastReference() {
        RatisMetricRegistry first = registries.create(WORKER);
        RatisMetricRegistry second = registries.create(WORKER);
        assertSame(first, second, "one registry per info");
        first.counter("flushCount").inc();

        assertTrue(registries.remove(WORKER));
        assertEquals(Optional.of(first), registries.get(WORKER), "one reference is left");
        assertTrue(raftMetrics.getCounters().containsKey(PREFIX + "flushCount"));

        assertTrue(registries.remove(WORKER));
        assertEquals(Optional.empty(), registries.get(WORKER));
        assertEquals(Set.of(), registries.getMetricRegistryInfos());
        assertFalse(raftMetrics.getCounters().containsKey(PREFIX + "flushCount"));
        assertFalse(registries.remove(WORKER), "nothing left to remove");
    }

    @Test
    void reportersHearOfRegistriesMadeAndDropped() {
        List<RatisMetricRegistry> added = new ArrayList<>();
        List<RatisMetricRegistry> removed = new ArrayList<>();
        registries.addReporterRegistration(added::add, removed::add);
        RatisMetricRegistry worker = registries.create(WORKER);
        registries.create(WORKER);
        registries.remove(WORKER);
        assertEquals(List.of(worker), added);
        assertEquals(List.of(), removed);
        registries.remove(WORKER);
        assertEquals(List.of(worker), removed);
    }
}
