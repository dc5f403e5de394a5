package io.tidemark.core.server;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.tidemark.core.config.BrokerConfig;
import io.tidemark.core.config.ConfigKey;
import io.tidemark.core.group.GroupCoordinator;
import io.tidemark.core.txn.TransactionCoordinator;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.topic.Topic;
import io.tidemark.core.topic.Topics;
import io.tidemark.proto.error.TidemarkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.InstantSource;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The broker's periodic duties on two threads: retention and compaction ({@link LogCompactor}) every
 * {@code retention.check.interval.ms}, due flushes and write-backs ({@code log.writeback.bytes}) every
 * {@code flush.check.interval.ms}, over every partition; a failure of one partition is logged and does not stop the
 * others. A duty that found its partition or group not ready or led elsewhere (a retriable error: a broker starting,
 * a leader moving) is logged at INFO without a stack, since the next check runs it again; any other failure is an
 * ERROR. With retention, the consumer groups idle for {@code offsets.retention.minutes} are deleted
 * ({@link GroupCoordinator#expireOffsets}, on the coordinator). A cluster node also runs its own one-off jobs here.
 */
public final class MaintenanceScheduler {
    private static final Logger LOG = LoggerFactory.getLogger(MaintenanceScheduler.class);
    /** Two, so a long compaction pass (held to its I/O rate) does not hold up flushes and retention. */
    private static final int THREADS = 2;
    /** How often the coordinator looks for transactions past their timeout (Kafka's default is 10 s). */
    private static final long TRANSACTION_CHECK_MS = 1_000;

    private MaintenanceScheduler() {
    }

    public static ScheduledExecutorService start(Topics topics, GroupCoordinator groups,
                                                 TransactionCoordinator transactions, BrokerConfig config,
                                                 InstantSource clock, MetricRegistry registry) {
        AtomicInteger threads = new AtomicInteger();
        ScheduledExecutorService executor = Executors.newScheduledThreadPool(THREADS, r -> {
            Thread thread = new Thread(r, "tidemark-maintenance-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        executor.scheduleWithFixedDelay(() -> forEachPartition(topics, "Retention",
                p -> p.applyRetention(clock.millis())), config.retentionCheckIntervalMs(),
                config.retentionCheckIntervalMs(), TimeUnit.MILLISECONDS);
        LogCompactor compactor = new LogCompactor(config.logCompactionIoMaxBytesPerSecond(), registry);
        executor.scheduleWithFixedDelay(() -> forEachPartition(topics, "Compaction",
                p -> compact(p, compactor, clock.millis())), config.retentionCheckIntervalMs(),
                config.retentionCheckIntervalMs(), TimeUnit.MILLISECONDS);
        executor.scheduleWithFixedDelay(() -> expireGroups(groups), config.retentionCheckIntervalMs(),
                config.retentionCheckIntervalMs(), TimeUnit.MILLISECONDS);
        executor.scheduleWithFixedDelay(() -> abortExpiredTransactions(transactions), TRANSACTION_CHECK_MS,
                TRANSACTION_CHECK_MS, TimeUnit.MILLISECONDS);
        executor.scheduleWithFixedDelay(() -> forEachPartition(topics, "Flush", p -> p.flushIfDue(clock.millis())),
                config.flushCheckIntervalMs(), config.flushCheckIntervalMs(), TimeUnit.MILLISECONDS);
        if (config.logWriteBackBytes() != ConfigKey.UNLIMITED) {
            Timer writeBacks = registry.timer("log.writeback");
            executor.scheduleWithFixedDelay(() -> forEachPartition(topics, "Write-back",
                    p -> writeBack(p, config.logWriteBackBytes(), writeBacks)), config.flushCheckIntervalMs(),
                    config.flushCheckIntervalMs(), TimeUnit.MILLISECONDS);
        }
        return executor;
    }

    private static void compact(Partition partition, LogCompactor compactor, long nowMs) {
        try {
            partition.compact(nowMs, compactor);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A write-back, timed ({@code log.writeback}: its fsyncs' durations, which also tell the disk's latency). */
    private static void writeBack(Partition partition, long minBytes, Timer writeBacks) {
        long start = System.nanoTime();
        if (partition.writeBack(minBytes)) {
            writeBacks.update(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        }
    }

    private static void abortExpiredTransactions(TransactionCoordinator transactions) {
        try {
            transactions.abortExpired();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            failed("Aborting the transactions open past their timeout", e);
        }
    }

    private static void expireGroups(GroupCoordinator groups) {
        try {
            groups.expireOffsets();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | RuntimeException e) {
            failed("Deleting the consumer groups idle for offsets.retention.minutes", e);
        }
    }

    private static void forEachPartition(Topics topics, String duty, Consumer<Partition> action) {
        for (Topic topic : topics.topics()) {
            for (Partition partition : topic.partitions()) {
                try {
                    action.accept(partition);
                } catch (RuntimeException e) {
                    failed(duty + " of " + partition.id(), e);
                }
            }
        }
    }

    private static void failed(String duty, Exception e) {
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof TidemarkException t && t.retriable()) {
            LOG.info("{} waits for the next check: {}", duty, t.getMessage());
        } else {
            LOG.error("{} failed", duty, e);
        }
    }
}
