package io.tidemark.mirror.source;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.TidemarkConsumer;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.mirror.sink.CopyBatch;
import io.tidemark.mirror.sink.PartitionCopier;
import io.tidemark.mirror.sink.SourcePositioner;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The thread that reads the source: owns the {@link TidemarkConsumer} of every partition copied, and each cycle
 * runs the commands other threads queued (a new partition, a copier's seek), pauses the partitions whose copier is
 * resynchronising or has {@code maxBacklogBytes} queued (and resumes them below half of it), polls, and hands each
 * partition's records to its {@link PartitionCopier}, with the source's log end offsets the fetches saw (for the
 * copiers' lag). A seek and the records read after it happen on this thread, in that order, so a copier never gets
 * records from before its position moved. With a byte rate limit, a {@link ReadPacer} spaces the polls out; commands
 * still run while it waits.
 *
 * <p>Each partition is read pinned to its copier's origin topic id ({@link TidemarkConsumer#seek(TopicPartition, long,
 * java.util.UUID)}), so the consumer never hands a copier records of another topic of the name: when the source topic
 * was deleted and created again, the consumer stops the partition (UNKNOWN_TOPIC_ID), the loop logs it and reads the
 * other partitions on, and {@link TopicDiscovery} replaces the topic's copiers at its next round.
 *
 * <p>Not thread-safe except {@link #add}, {@link #seek} and {@link #close}, which queue work for the thread.
 */
public final class SourceLoop implements SourcePositioner, Runnable, Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(SourceLoop.class);
    /** Longest poll: commands wait at most this long. */
    static final Duration POLL_TIMEOUT = Duration.ofMillis(100);
    /**
     * Wait after a failed poll or seek, so a source that is down is not hammered. Not a {@code Retry}: the loop has no
     * deadline to give up at; a mirror reads on, whatever failed, for as long as it runs, and the failure is logged.
     */
    static final long FAILURE_BACKOFF_MS = 1_000;

    private final TidemarkConsumer consumer;
    private final MirrorMetrics metrics;
    private final Clock clock;
    private final long maxBacklogBytes;
    private final ReadPacer pacer;
    private final LinkedBlockingQueue<Runnable> commands = new LinkedBlockingQueue<>();
    private final Map<TopicPartition, PartitionCopier> copiers = new LinkedHashMap<>();
    private final Set<TopicPartition> paused = new HashSet<>();
    private final Thread thread;
    private volatile boolean running = true;

    /** @param maxBytesPerSecond the most bytes of records read from the source per second on average; 0 for no limit */
    public SourceLoop(TidemarkConsumer consumer, MirrorMetrics metrics, Clock clock, long maxBacklogBytes,
                      long maxBytesPerSecond) {
        this.consumer = consumer;
        this.metrics = metrics;
        this.clock = clock;
        this.maxBacklogBytes = maxBacklogBytes;
        this.pacer = new ReadPacer(maxBytesPerSecond);
        this.thread = new Thread(this, "tidemark-mirror-source");
    }

    public void start() {
        thread.start();
    }

    /** Starts reading a copier's partition; it stays paused until the copier's first seek. */
    public void add(PartitionCopier copier) {
        commands.add(() -> {
            copiers.put(copier.source(), copier);
            consumer.assign(copiers.keySet());
            consumer.pause(List.of(copier.source()));
            paused.add(copier.source());
        });
    }

    /** Stops reading the partitions of a source topic (it was deleted) and closes their copiers. */
    public void removeTopic(String topic) {
        commands.add(() -> {
            copiers.values().removeIf(copier -> {
                boolean gone = copier.source().topic().equals(topic);
                if (gone) {
                    copier.close();
                    paused.remove(copier.source());
                }
                return gone;
            });
            consumer.assign(copiers.keySet());
        });
    }

    /**
     * Positions the copier's partition at {@code offset} of its origin topic, pinned to its id; {@link #EARLIEST} is
     * offset 0, which the consumer resets to the log start (auto.offset.reset=earliest) within the same topic when
     * retention removed it. A copier replaced meanwhile (its topic removed or created again) is not positioned.
     */
    @Override
    public void seek(PartitionCopier copier, int generation, long offset) {
        commands.add(() -> {
            if (copiers.get(copier.source()) != copier) {
                return;
            }
            consumer.seek(copier.source(), offset == EARLIEST ? 0 : offset, copier.origin().topicId());
            copier.positioned(generation);
        });
    }

    @Override
    public void run() {
        while (running) {
            try {
                runOnce();
            } catch (TidemarkException e) {
                LOG.warn("reading the source failed; retrying in {} ms: {}", FAILURE_BACKOFF_MS, e.getMessage());
                pause(FAILURE_BACKOFF_MS);
            } catch (RuntimeException e) {
                LOG.error("the source loop failed; carrying on", e);
                pause(FAILURE_BACKOFF_MS);
            }
        }
    }

    private void runOnce() {
        for (Runnable command = commands.poll(); command != null; command = commands.poll()) {
            command.run();
        }

        if (copiers.isEmpty()) {
            waitForCommands(POLL_TIMEOUT.toMillis());
            return;
        }
        long waitMs = pacer.waitMs(clock.millis());
        if (waitMs > 0) {
            long before = clock.millis();
            waitForCommands(Math.min(waitMs, POLL_TIMEOUT.toMillis()));
            metrics.throttled(clock.millis() - before);
            return;
        }
        applyFlowControl();
        List<ConsumerRecord> records;
        try {
            records = consumer.poll(POLL_TIMEOUT);
        } catch (TidemarkException e) {
            if (e.code() != ErrorCode.UNKNOWN_TOPIC_ID) {
                throw e;
            }
            LOG.warn("{}; the other partitions are read on, and topic discovery copies the new topic as a new origin",
                    e.getMessage());
            return;
        }
        if (!records.isEmpty()) {
            pacer.read(records.stream().mapToLong(CopyBatch::sizeBytes).sum(), clock.millis());
            dispatch(records);
        }
        for (PartitionCopier copier : copiers.values()) {
            consumer.highWatermark(copier.source()).ifPresent(copier::sourceLogEndOffset);
        }
    }

    /** Pauses a partition whose copier is resynchronising or full; resumes it once copying and half empty. */
    private void applyFlowControl() {
        List<TopicPartition> pause = new ArrayList<>();
        List<TopicPartition> resume = new ArrayList<>();
        for (PartitionCopier copier : copiers.values()) {
            long backlog = copier.backlogBytes();
            boolean isPaused = paused.contains(copier.source());
            if (!isPaused && (!copier.copying() || backlog >= maxBacklogBytes)) {
                pause.add(copier.source());
            } else if (isPaused && copier.copying() && backlog < maxBacklogBytes / 2) {
                resume.add(copier.source());
            }
        }
        consumer.pause(pause);
        paused.addAll(pause);
        consumer.resume(resume);
        resume.forEach(paused::remove);
    }

    private void dispatch(List<ConsumerRecord> records) {
        Map<TopicPartition, List<ConsumerRecord>> byPartition = new LinkedHashMap<>();
        for (ConsumerRecord record : records) {
            byPartition.computeIfAbsent(record.topicPartition(), tp -> new ArrayList<>()).add(record);
        }
        byPartition.forEach((tp, partitionRecords) -> {
            PartitionCopier copier = copiers.get(tp);
            if (copier != null) {
                copier.offer(partitionRecords);
            }
        });
    }

    /** Waits up to {@code ms} for a command and runs it (the others run at the start of the next cycle). */
    private void waitForCommands(long ms) {
        try {
            Runnable command = commands.poll(ms, TimeUnit.MILLISECONDS);
            if (command != null) {
                command.run();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /** Waits after a failure; commands stay queued for the next cycle. */
    private void pause(long ms) {
        try {
            TimeUnit.MILLISECONDS.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /** Stops the thread and waits for it; the consumer is the caller's to close. */
    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
