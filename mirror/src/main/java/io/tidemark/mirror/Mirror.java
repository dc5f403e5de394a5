package io.tidemark.mirror;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.client.api.AdminConfig;
import io.tidemark.client.api.ConsumerConfig;
import io.tidemark.client.api.PartitionWriter;
import io.tidemark.client.api.ProducerConfig;
import io.tidemark.client.api.TidemarkAdmin;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TidemarkProducer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.checkpoint.CheckpointAgent;
import io.tidemark.mirror.checkpoint.HeartbeatAgent;
import io.tidemark.mirror.checkpoint.MirrorStatePublisher;
import io.tidemark.mirror.checkpoint.TargetOffsetLookup;
import io.tidemark.mirror.sink.PartitionCopier;
import io.tidemark.mirror.sink.TargetPartitions;
import io.tidemark.mirror.source.SourceLoop;
import io.tidemark.mirror.source.TopicDiscovery;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * A running mirror from one source cluster to one target cluster: the parts and their threads.
 * <ul>
 *   <li>{@link TopicDiscovery} (every discovery interval) finds the topics to copy and creates their target topics;
 *       each partition gets a {@link PartitionCopier}, which resumes from what the target holds.</li>
 *   <li>{@link SourceLoop} (its own thread) reads every copied partition with one consumer and feeds the copiers;
 *       the copiers write through one {@link PartitionWriter} (gRPC threads).</li>
 *   <li>{@link CheckpointAgent} (every checkpoint interval) and {@link HeartbeatAgent} (every heartbeat interval) write
 *       to the target's {@code __mirror_state} through an idempotent producer.</li>
 *   <li>Progress (records copied, rate, lag) is logged every {@value #PROGRESS_INTERVAL_MS} ms.</li>
 * </ul>
 * The periodic tasks share a scheduler of two threads, heartbeats have their own; a task that fails is logged and
 * runs again at its next time.
 * Several mirrors may write into one target (from different sources); two mirrors of the same source and target
 * by mistake store each record once (see {@link PartitionCopier}).
 *
 * <p>Thread-safe: start, then close once.
 */
public final class Mirror implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(Mirror.class);
    static final long PROGRESS_INTERVAL_MS = 10_000;
    /** Records one poll hands out: enough to fill several batches of several partitions per cycle. */
    private static final int MAX_POLL_RECORDS = 10_000;
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final int MIN_LIMITED_FETCH_BYTES = 1024;
    /**
     * Deadline of the heartbeat's status call to the source: the heartbeat interval, within 200 ms to 5 s, so a
     * source that does not answer delays the next heartbeat by at most that (heartbeats have their own thread,
     * so discovery and checkpoints waiting on a silent source do not hold them up).
     */
    private static final long MIN_PROBE_TIMEOUT_MS = 200;
    private static final long MAX_PROBE_TIMEOUT_MS = 5_000;

    private final MirrorConfig config;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final TidemarkAdmin sourceAdmin;
    private final TidemarkAdmin sourceProbe;
    private final TidemarkAdmin targetAdmin;
    private final TidemarkConsumer consumer;
    private final PartitionWriter writer;
    private final TidemarkProducer stateProducer;
    private final ScheduledExecutorService timers;
    private final ScheduledExecutorService heartbeatTimer;
    private final SourceLoop sourceLoop;
    private final Map<TopicPartition, PartitionCopier> copiers = new ConcurrentHashMap<>();

    private Mirror(MirrorConfig config, MetricRegistry registry, Clock clock) {
        this.config = config;
        this.metrics = new MirrorMetrics(registry);
        this.clock = clock;
        this.sourceAdmin = new TidemarkAdmin(AdminConfig.builder(config.sourceBootstrap()).build());
        this.sourceProbe = new TidemarkAdmin(AdminConfig.builder(config.sourceBootstrap())
                .requestTimeoutMs(Math.min(Math.max(config.heartbeatIntervalMs(), MIN_PROBE_TIMEOUT_MS),
                        MAX_PROBE_TIMEOUT_MS)).build());
        this.targetAdmin = new TidemarkAdmin(AdminConfig.builder(config.targetBootstrap()).build());
        this.consumer = new TidemarkConsumer(ConsumerConfig.builder(config.sourceBootstrap()).clock(clock)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).maxPollRecords(MAX_POLL_RECORDS)
                .fetchMaxBytes(fetchMaxBytes(config.maxBytesPerSecond())).build());
        this.writer = new PartitionWriter(ProducerConfig.builder(config.targetBootstrap()).clock(clock)
                .maxRequestBytes(Math.max(ProducerConfig.DEFAULT_MAX_REQUEST_BYTES, 2L * config.maxBatchBytes()))
                .build());
        this.stateProducer = new TidemarkProducer(ProducerConfig.builder(config.targetBootstrap()).clock(clock)
                .build());
        this.timers = Executors.newScheduledThreadPool(2, daemon("tidemark-mirror-timer"));
        this.heartbeatTimer = Executors.newSingleThreadScheduledExecutor(daemon("tidemark-mirror-heartbeat"));
        this.sourceLoop = new SourceLoop(consumer, metrics, clock, timers, config.maxBacklogBytes(),
                config.maxBytesPerSecond());
    }

    /** Starts copying; returns at once. */
    public static Mirror start(MirrorConfig config, MetricRegistry registry, Clock clock) {
        Mirror mirror = new Mirror(config, registry, clock);
        mirror.startTasks();
        return mirror;
    }

    private void startTasks() {
        sourceLoop.start();
        MirrorStatePublisher publisher = new MirrorStatePublisher(stateProducer, clock);
        TopicDiscovery discovery = new TopicDiscovery(sourceAdmin, targetAdmin, config, metrics, clock,
                new TopicDiscovery.Listener() {
                    @Override
                    public void added(TopicPartition source, String targetTopic) {
                        addPartition(source, targetTopic);
                    }

                    @Override
                    public void removed(String sourceTopic) {
                        sourceLoop.removeTopic(sourceTopic);
                        copiers.keySet().removeIf(tp -> tp.topic().equals(sourceTopic));
                    }
                });
        CheckpointAgent checkpoints = new CheckpointAgent(sourceAdmin, new TargetOffsetLookup(targetAdmin), publisher,
                tp -> Optional.ofNullable(copiers.get(tp)), copiers.values(), config.groups(), config.sourceName(),
                config.targetName(), metrics, clock);
        HeartbeatAgent heartbeats = new HeartbeatAgent(sourceProbe, publisher, copiers.values(), config.sourceName(),
                config.targetName(), metrics, clock);
        every(timers, "topic discovery", config.discoveryIntervalMs(), discovery::discover);
        every(timers, "checkpoints", config.checkpointIntervalMs(), checkpoints::run);
        every(heartbeatTimer, "heartbeat", config.heartbeatIntervalMs(), heartbeats::run);
        every(timers, "progress", PROGRESS_INTERVAL_MS, new ProgressLog(metrics, copiers.values())::log);
        LOG.info("Mirror {} -> {} started: topics matching {} (target prefix '{}'), groups matching {}",
                config.sourceName(), config.targetName(), config.topics(), config.topicPrefix(), config.groups());
    }

    private void addPartition(TopicPartition source, String targetTopic) {
        PartitionCopier copier = new PartitionCopier(source, new TopicPartition(targetTopic, source.partition()),
                config.sourceName(), config.targetName(), config.maxBatchBytes(), TargetPartitions.over(writer),
                sourceLoop, timers, metrics);
        copiers.put(source, copier);
        sourceLoop.add(copier);
        copier.start();
    }

    /**
     * Bytes one fetch asks of a partition: the consumer's default, or under a rate limit a tenth of a second's worth
     * (at least {@value #MIN_LIMITED_FETCH_BYTES}), so polls come in small steps rather than bursts the rate then
     * pays off for seconds, with the source's log end unseen meanwhile.
     */
    static int fetchMaxBytes(long maxBytesPerSecond) {
        if (maxBytesPerSecond == 0) {
            return ConsumerConfig.DEFAULT_FETCH_MAX_BYTES;
        }
        return (int) Math.min(ConsumerConfig.DEFAULT_FETCH_MAX_BYTES,
                Math.max(MIN_LIMITED_FETCH_BYTES, maxBytesPerSecond / 10));
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread thread = new Thread(r, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    private static void every(ScheduledExecutorService scheduler, String what, long intervalMs, Runnable task) {
        scheduler.scheduleWithFixedDelay(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.warn("Mirror {} failed; it runs again in {} ms: {}", what, intervalMs, e.toString());
            }
        }, 0, intervalMs, TimeUnit.MILLISECONDS);
    }

    /** Stops reading, lets nothing new be written, and closes every client. */
    @Override
    public void close() {
        heartbeatTimer.shutdownNow();
        timers.shutdownNow();
        sourceLoop.close();
        copiers.values().forEach(PartitionCopier::stop);
        writer.close();
        stateProducer.close(CLOSE_TIMEOUT);
        consumer.close();
        sourceAdmin.close();
        sourceProbe.close();
        targetAdmin.close();
        LOG.info("Mirror {} -> {} stopped after copying {} records", config.sourceName(), config.targetName(),
                metrics.recordsCopied());
    }
}
