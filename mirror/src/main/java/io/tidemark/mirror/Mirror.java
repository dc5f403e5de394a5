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
import io.tidemark.mirror.checkpoint.PartitionStatusAgent;
import io.tidemark.mirror.checkpoint.SourceGroups;
import io.tidemark.mirror.checkpoint.StatusSchedule;
import io.tidemark.mirror.checkpoint.TargetOffsetLookup;
import io.tidemark.mirror.sink.PartitionCopier;
import io.tidemark.mirror.sink.StopReason;
import io.tidemark.mirror.sink.TargetPartitions;
import io.tidemark.mirror.sink.TargetTopicRecovery;
import io.tidemark.mirror.sink.TargetTopics;
import io.tidemark.mirror.source.SourceLoop;
import io.tidemark.mirror.source.TopicDiscovery;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.tls.TlsMaterial;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * A running mirror from one source cluster to one target cluster: the parts and their threads.
 * <ul>
 *   <li>At start, the clusters' names ({@link ClusterNames}): the target must answer its own, and the source's is
 *       checked against {@code --source-name}. A source that does not answer at start is asked again every heartbeat
 *       interval, and nothing below runs until it answered with the right name; a wrong one ends the mirror
 *       ({@link #failure}).</li>
 *   <li>At start, the dead-letter topic, when the mirror has one ({@link TargetTopics#ensureDeadLetterTopic}).</li>
 *   <li>{@link TopicDiscovery} (every discovery interval) finds the topics to copy and creates their target topics;
 *       each partition gets a {@link PartitionCopier}, which resumes from what the target holds (a partition with
 *       no target partition gets one that is stopped, so it is seen). A target topic deleted while the mirror runs
 *       is made again by {@link TargetTopicRecovery}.</li>
 *   <li>{@link SourceLoop} (its own thread) reads every copied partition with one consumer, at read_committed (a
 *       transaction's records are copied once it commits, as plain records; an aborted one's never), and feeds the
 *       copiers;
 *       the copiers write through one {@link PartitionWriter} (its thread), several batches of a partition in
 *       flight.</li>
 *   <li>{@link CheckpointAgent} (every checkpoint interval), {@link HeartbeatAgent} and {@link PartitionStatusAgent}
 *       (every heartbeat interval, the partitions' statuses when due) write to the target's {@code __mirror_state}
 *       through an idempotent producer.</li>
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
    private final ClusterNames names;
    private final Optional<TopicPartition> deadLetters;
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
    private final CompletableFuture<Void> failure = new CompletableFuture<>();
    private final Optional<TlsMaterial> sourceTls;
    private final Optional<TlsMaterial> targetTls;

    private Mirror(MirrorConfig config, ClusterNames names, int largestBatchBytes, Optional<TopicPartition> deadLetters,
                   TidemarkAdmin targetAdmin, Optional<TlsMaterial> sourceTls, Optional<TlsMaterial> targetTls,
                   MetricRegistry registry, Clock clock) {
        this.config = config;
        this.sourceTls = sourceTls;
        this.targetTls = targetTls;
        this.names = names;
        this.deadLetters = deadLetters;
        this.targetAdmin = targetAdmin;
        this.metrics = new MirrorMetrics(registry);
        this.clock = clock;
        this.sourceAdmin = new TidemarkAdmin(admin(config.sourceBootstrap(), sourceTls).build());
        this.sourceProbe = new TidemarkAdmin(admin(config.sourceBootstrap(), sourceTls)
                .requestTimeoutMs(Math.min(Math.max(config.heartbeatIntervalMs(), MIN_PROBE_TIMEOUT_MS),
                        MAX_PROBE_TIMEOUT_MS)).build());
        ConsumerConfig.Builder source = ConsumerConfig.builder(config.sourceBootstrap());
        sourceTls.ifPresent(source::tls);
        this.consumer = new TidemarkConsumer(source.clock(clock)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).maxPollRecords(MAX_POLL_RECORDS)
                .isolationLevel(ConsumerConfig.IsolationLevel.READ_COMMITTED)
                .fetchMaxBytes(fetchMaxBytes(config.maxBytesPerSecond()))
                .fetchRequestMaxBytes(fetchRequestMaxBytes(config.maxBytesPerSecond())).build());
        this.writer = new PartitionWriter(producer(config.targetBootstrap(), targetTls).clock(clock)
                .maxRequestBytes(writerMaxRequestBytes(largestBatchBytes, config.maxBatchBytes())).build());
        this.stateProducer = new TidemarkProducer(producer(config.targetBootstrap(), targetTls).clock(clock)
                .build());
        this.timers = Executors.newScheduledThreadPool(2, daemon("tidemark-mirror-timer"));
        this.heartbeatTimer = Executors.newSingleThreadScheduledExecutor(daemon("tidemark-mirror-heartbeat"));
        this.sourceLoop = new SourceLoop(consumer, metrics, clock, config.maxBacklogBytes(),
                config.maxBytesPerSecond());
    }

    /**
     * Asks the target its name and the largest batch it takes, makes the dead-letter topic, then asks the source its
     * name, and starts copying once the source answered with the right name; returns at once when the source does not
     * answer.
     *
     * @throws IllegalArgumentException when a name is missing, or a cluster's own name is not the one given
     *                                  ({@link ClusterNames})
     * @throws TidemarkException        when the target does not answer (its name is needed first), or refuses the
     *                                  dead-letter topic
     */
    public static Mirror start(MirrorConfig config, MetricRegistry registry, Clock clock) {
        Optional<TlsMaterial> targetTls = TlsMaterial.load(config.targetTls());
        Optional<TlsMaterial> sourceTls;
        try {
            sourceTls = TlsMaterial.load(config.sourceTls());
        } catch (RuntimeException e) {
            targetTls.ifPresent(TlsMaterial::close);
            throw e;
        }
        TidemarkAdmin targetAdmin = new TidemarkAdmin(admin(config.targetBootstrap(), targetTls).build());
        ClusterNames names;
        int largestBatchBytes;
        Optional<TopicPartition> deadLetters;
        try {
            names = ClusterNames.resolve(config, targetAdmin.clusterName());
            largestBatchBytes = targetAdmin.clusterStatus().getLargestBatchBytes();
            deadLetters = config.deadLetterTopic().map(topic -> {
                TargetTopics.ensureDeadLetterTopic(targetAdmin, topic, largestBatchBytes);
                return new TopicPartition(topic, 0);
            });
        } catch (RuntimeException e) {
            targetAdmin.close();
            sourceTls.ifPresent(TlsMaterial::close);
            targetTls.ifPresent(TlsMaterial::close);
            throw e;
        }
        Mirror mirror = new Mirror(config, names, largestBatchBytes, deadLetters, targetAdmin, sourceTls, targetTls,
                registry, clock);
        try {
            mirror.checkSourceAndStart();
        } catch (TidemarkException e) {
            LOG.warn("The source {} did not answer ({}); the mirror asks it its name every {} ms and starts copying "
                    + "once it answered", config.sourceBootstrap(), e.getMessage(), config.heartbeatIntervalMs());
            mirror.checkSourceLater();
        } catch (RuntimeException e) {
            mirror.close();
            throw e;
        }
        return mirror;
    }

    /** An admin client's settings for a cluster, in TLS with {@code tls} when present. */
    private static AdminConfig.Builder admin(String bootstrap, Optional<TlsMaterial> tls) {
        AdminConfig.Builder config = AdminConfig.builder(bootstrap);
        tls.ifPresent(config::tls);
        return config;
    }

    private static ProducerConfig.Builder producer(String bootstrap, Optional<TlsMaterial> tls) {
        ProducerConfig.Builder config = ProducerConfig.builder(bootstrap);
        tls.ifPresent(config::tls);
        return config;
    }

    /** The names of the source and the target, as the mirror writes them. */
    public ClusterNames names() {
        return names;
    }

    /**
     * Completes exceptionally with an {@link IllegalArgumentException} when the mirror stops working on its own: the
     * source, silent at start, answered with another name than {@code --source-name} ({@link
     * ClusterNames#checkSource}). Never completes normally. The mirror copies nothing then; close it.
     */
    public CompletableFuture<Void> failure() {
        return failure.copy();
    }

    /**
     * Asks the source its name, and starts copying when it is the right one.
     *
     * @throws TidemarkException        when the source does not answer
     * @throws IllegalArgumentException when it answers another name
     */
    private void checkSourceAndStart() {
        Optional<String> sourceOwn = sourceAdmin.clusterName();
        names.checkSource(config.sourceBootstrap(), sourceOwn);
        if (sourceOwn.isEmpty()) {
            LOG.warn("The source {} has no name (cluster.name): it is taken to be {} unchecked",
                    config.sourceBootstrap(), names.source());
        }
        startTasks();
    }

    /**
     * Calls {@link #checkSourceAndStart} in a heartbeat interval, and again after each time the source is silent. Not
     * a {@code Retry}: a mirror started against a source that is down waits for it with no deadline.
     */
    private void checkSourceLater() {
        heartbeatTimer.schedule(() -> {
            try {
                checkSourceAndStart();
            } catch (TidemarkException e) {
                LOG.debug("The source did not answer its name: {}", e.getMessage());
                checkSourceLater();
            } catch (IllegalArgumentException e) {
                failure.completeExceptionally(e);
            }
        }, config.heartbeatIntervalMs(), TimeUnit.MILLISECONDS);
    }

    private void startTasks() {
        sourceLoop.start();
        MirrorStatePublisher publisher = new MirrorStatePublisher(stateProducer, clock);
        TargetTopics targetTopics = new TargetTopics(sourceAdmin, targetAdmin);
        TargetTopicRecovery recovery = new TargetTopicRecovery(targetTopics, topic -> copiers.values().stream()
                .filter(copier -> copier.target().topic().equals(topic)).toList(), metrics, timers);
        TargetPartitions targets = TargetPartitions.over(writer, recovery::topicGone);
        TopicDiscovery discovery = new TopicDiscovery(sourceAdmin, targetTopics, config, metrics, clock,
                new TopicDiscovery.Listener() {
                    @Override
                    public void added(TopicPartition source, UUID sourceTopicId, String targetTopic,
                                      int maxBatchBytes) {
                        PartitionCopier copier = copier(source, sourceTopicId, targetTopic, maxBatchBytes, targets);
                        sourceLoop.add(copier);
                        copier.start();
                    }

                    @Override
                    public void uncopyable(TopicPartition source, UUID sourceTopicId, String targetTopic,
                                           StopReason reason) {
                        copier(source, sourceTopicId, targetTopic, config.maxBatchBytes(), targets).stop(reason);
                    }

                    @Override
                    public void removed(String sourceTopic) {
                        sourceLoop.removeTopic(sourceTopic);
                        copiers.values().removeIf(copier -> {
                            boolean gone = copier.source().topic().equals(sourceTopic);
                            if (gone) {
                                copier.close();
                                metrics.removePartition(sourceTopic, copier.source().partition());
                            }
                            return gone;
                        });
                    }
                });
        CheckpointAgent checkpoints = new CheckpointAgent(SourceGroups.over(sourceAdmin),
                new TargetOffsetLookup(targetAdmin), publisher, copiers.values(), config.groups(), names.source(),
                names.target(), metrics, clock);
        HeartbeatAgent heartbeats = new HeartbeatAgent(sourceProbe, publisher, copiers.values(), names.source(),
                names.target(), metrics, clock);
        PartitionStatusAgent statuses = new PartitionStatusAgent(publisher, copiers.values(), names.source(),
                names.target(), new StatusSchedule(config.checkpointIntervalMs()), clock);
        every(timers, "topic discovery", config.discoveryIntervalMs(), discovery::discover);
        every(timers, "checkpoints", config.checkpointIntervalMs(), checkpoints::run);
        every(heartbeatTimer, "heartbeat", config.heartbeatIntervalMs(), heartbeats::run);
        every(heartbeatTimer, "partition status", config.heartbeatIntervalMs(), statuses::run);
        every(timers, "progress", PROGRESS_INTERVAL_MS, new ProgressLog(metrics, copiers.values())::log);
        LOG.info("Mirror {} -> {} started: topics matching {} (target prefix '{}'), groups matching {}",
                names.source(), names.target(), config.topics(), config.topicPrefix(), config.groups());
    }

    /** A copier of {@code source} into the same partition of {@code targetTopic}, in the mirror's copiers. */
    private PartitionCopier copier(TopicPartition source, UUID sourceTopicId, String targetTopic, int maxBatchBytes,
                                   TargetPartitions targets) {
        OriginPartition origin = new OriginPartition(names.source(), source.topic(), sourceTopicId,
                source.partition());
        PartitionCopier copier = new PartitionCopier(origin, new TopicPartition(targetTopic, source.partition()),
                names.target(), maxBatchBytes, deadLetters, targets, sourceLoop, timers, metrics);
        copiers.put(source, copier);
        return copier;
    }

    /**
     * The writer's largest batch: the largest the target takes, so a copy it would refuse is refused at once as
     * RECORD_TOO_LARGE rather than by the target's request size limit (which only says the call failed); twice the
     * mirror's batch size, as before, when the target does not say ({@code largestBatchBytes} 0).
     */
    static int writerMaxRequestBytes(int largestBatchBytes, int maxBatchBytes) {
        if (largestBatchBytes <= 0) {
            return (int) Math.max(ProducerConfig.DEFAULT_MAX_REQUEST_BYTES, 2L * maxBatchBytes);
        }
        return Math.min(largestBatchBytes, ProducerConfig.MAX_REQUEST_BYTES_LIMIT);
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

    /**
     * Bytes one fetch asks of a broker over all its partitions: the consumer's default, or under a rate limit the
     * same tenth of a second's worth as {@link #fetchMaxBytes}, so several partitions do not make a burst together.
     */
    static int fetchRequestMaxBytes(long maxBytesPerSecond) {
        return maxBytesPerSecond == 0 ? ConsumerConfig.DEFAULT_FETCH_REQUEST_MAX_BYTES
                : fetchMaxBytes(maxBytesPerSecond);
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
        copiers.values().forEach(PartitionCopier::close);
        writer.close();
        stateProducer.close(CLOSE_TIMEOUT);
        consumer.close();
        sourceAdmin.close();
        sourceProbe.close();
        targetAdmin.close();
        sourceTls.ifPresent(TlsMaterial::close);
        targetTls.ifPresent(TlsMaterial::close);
        LOG.info("Mirror {} -> {} stopped after copying {} records", names.source(), names.target(),
                metrics.recordsCopied());
    }
}
