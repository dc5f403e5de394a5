package io.tidemark.core.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.core.partition.Partition;
import io.tidemark.core.topic.ReplicaListener;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.EnumMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The broker's metrics, in one Dropwizard {@link MetricRegistry} per process ({@link MetricsEndpoint} serves
 * it to Prometheus and JMX). Names, as Prometheus shows them with dots turned to underscores:
 * <ul>
 *   <li>{@code produce.latency}, {@code fetch.latency}, {@code list-offsets.latency}: timers (rate and
 *       latency quantiles) of the requests, from arrival to response, errors included;</li>
 *   <li>{@code group.CALL.latency}: the same for each call of the consumer groups' service ({@link GroupCall}:
 *       {@code group.commit-offsets.latency}, {@code group.heartbeat.latency}, ...);</li>
 *   <li>{@code transaction.CALL.latency}: the same for the transaction service ({@link TransactionCall}:
 *       {@code transaction.end-txn.latency}, ...);</li>
 *   <li>{@code produce.bytes}, {@code produce.records}, {@code fetch.bytes}: bytes in and out, records in;</li>
 *   <li>{@code errors.CODE}: responses that failed with each error code;</li>
 *   <li>{@code connections.refused}: connections closed as they were accepted because their address held
 *       {@code max.connections.per.ip} already; {@code authorization.denied} and {@code authorization.denied.TYPE}:
 *       calls refused by the authorizer (io.tidemark.core.auth.Authorizer);</li>
 *   <li>{@code group-offsets.records-skipped}: records of {@code __group_offsets} the offset store skipped because
 *       they are not offset commits (each logged as an error);</li>
 *   <li>{@code partition.log-end-offset.TOPIC.PARTITION} and {@code partition.log-start-offset...}: gauges of the
 *       partitions whose log this broker holds (a {@link ReplicaListener}: they follow creations, deletions and
 *       reassignments);</li>
 *   <li>{@code log.open-files}, {@code log.open-files.max}: segment files open now in the process and its budget
 *       ({@code log.open.files.max}); {@code log.open-files.evictions}: files closed to make room since the process
 *       started (a rate that stays high means the budget is below the segments in use: every read or append of them
 *       opens a file again); {@code log.open-files.waits}: times a read or append waited because every open file was
 *       in use. These count the whole process ({@link OpenFileCache}), even with several brokers in it;</li>
 *   <li>on a cluster node, {@code leader-balance.transfers} and {@code leader-balance.partitions-led-away}
 *       (the replication module's preferred-leader balancer).</li>
 * </ul>
 *
 * <p>Thread-safe (Dropwizard metrics are).
 */
public final class BrokerMetrics implements ReplicaListener {
    private final MetricRegistry registry;
    private final Timer produceLatency;
    private final Timer fetchLatency;
    private final Timer listOffsetsLatency;
    private final Map<GroupCall, Timer> groupLatency = new EnumMap<>(GroupCall.class);
    private final Map<TransactionCall, Timer> transactionLatency = new EnumMap<>(TransactionCall.class);
    private final Meter produceBytes;
    private final Meter produceRecords;
    private final Meter fetchBytes;
    private final Meter connectionsRefused;

    /** The broker's metrics, with those of the process's open-file cache ({@link OpenFileCache#shared()}). */
    public BrokerMetrics(MetricRegistry registry) {
        this(registry, OpenFileCache.shared());
    }

    public BrokerMetrics(MetricRegistry registry, OpenFileCache files) {
        this.registry = registry;
        this.produceLatency = registry.timer("produce.latency");
        this.fetchLatency = registry.timer("fetch.latency");
        this.listOffsetsLatency = registry.timer("list-offsets.latency");
        for (TransactionCall call : TransactionCall.values()) {
            transactionLatency.put(call, registry.timer(call.metricName));
        }
        for (GroupCall call : GroupCall.values()) {
            groupLatency.put(call, registry.timer(call.metricName));
        }
        this.produceBytes = registry.meter("produce.bytes");
        this.produceRecords = registry.meter("produce.records");
        this.fetchBytes = registry.meter("fetch.bytes");
        this.connectionsRefused = registry.meter("connections.refused");
        registry.gauge("log.open-files", () -> (Gauge<Integer>) files::openFiles);
        registry.gauge("log.open-files.max", () -> (Gauge<Integer>) files::capacity);
        registry.gauge("log.open-files.evictions", () -> (Gauge<Long>) files::evictions);
        registry.gauge("log.open-files.waits", () -> (Gauge<Long>) files::waits);
    }

    public MetricRegistry registry() {
        return registry;
    }

    /** Connections closed as they were accepted: their address held max.connections.per.ip already. */
    public Meter connectionsRefused() {
        return connectionsRefused;
    }

    public Timer produceLatency() {
        return produceLatency;
    }

    public Timer fetchLatency() {
        return fetchLatency;
    }

    public Timer listOffsetsLatency() {
        return listOffsetsLatency;
    }

    /** The calls of the consumer groups' service, each timed as {@code group.NAME.latency}. */
    public enum GroupCall {
        COMMIT_OFFSETS("commit-offsets"), HEARTBEAT("heartbeat"), FETCH_OFFSETS("fetch-offsets"),
        LIST_GROUPS("list-groups"), DESCRIBE_GROUP("describe-group"), DELETE_GROUP("delete-group"),
        DELETE_OFFSETS("delete-offsets");

        private final String metricName;

        GroupCall(String name) {
            this.metricName = "group." + name + ".latency";
        }
    }

    public Timer groupLatency(GroupCall call) {
        return groupLatency.get(call);
    }

    /** The calls of the transaction service, each timed as {@code transaction.NAME.latency}. */
    public enum TransactionCall {
        INIT_PRODUCER_ID("init-producer-id"), ADD_PARTITIONS("add-partitions"), TXN_OFFSET_COMMIT("txn-offset-commit"),
        END_TXN("end-txn"), WRITE_MARKER("write-marker");

        private final String metricName;

        TransactionCall(String name) {
            this.metricName = "transaction." + name + ".latency";
        }
    }

    public Timer transactionLatency(TransactionCall call) {
        return transactionLatency.get(call);
    }

    public void produced(int bytes, long records) {
        produceBytes.mark(bytes);
        produceRecords.mark(records);
    }

    public void fetched(int bytes) {
        fetchBytes.mark(bytes);
    }

    /** Counts the records of {@code __group_offsets} skipped because they do not parse. */
    public Counter groupOffsetsSkipped() {
        return registry.counter("group-offsets.records-skipped");
    }

    public void error(ErrorCode code) {
        registry.meter("errors." + code.name()).mark();
    }

    /**
     * Adds the offset gauges of a partition held here, replacing those of an earlier object of it. A gauge reads -1
     * while its partition has no log to read yet (its Raft group is adding it): one that threw would fail the whole
     * Prometheus scrape (HTTP 500) each time a topic is created.
     */
    @Override
    public void holding(Partition partition) {
        released(partition);
        registry.gauge(name("partition.log-end-offset", partition), () -> offset(partition::logEndOffset));
        registry.gauge(name("partition.log-start-offset", partition), () -> offset(partition::logStartOffset));
    }

    private static Gauge<Long> offset(LongSupplier read) {
        return () -> {
            try {
                return read.getAsLong();
            } catch (TidemarkException e) {
                return -1L;
            }
        };
    }

    /** Removes the gauges of a partition no longer held here. */
    @Override
    public void released(Partition partition) {
        registry.remove(name("partition.log-end-offset", partition));
        registry.remove(name("partition.log-start-offset", partition));
    }

    private static String name(String metric, Partition partition) {
        return metric + "." + partition.id().topic() + "." + partition.id().partition();
    }
}
