package io.tidemark.client.api;

import com.codahale.metrics.MetricRegistry;
import com.google.common.util.concurrent.ThreadFactoryBuilder;
import io.tidemark.proto.error.TidemarkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Runs a {@link RecordHandler} over a consumer group's share of topics, on a pool of workers, and turns each outcome
 * into a committed position by one of seed 002's commit modes ({@link CommitMode}); retries go through a topic with
 * an attempt header ({@link RetryHeaders}) and end in a dead-letter topic where one is declared ({@link Outcome}).
 *
 * <p>Threads: one polling thread owns the {@link TidemarkConsumer}. It polls every {@value #POLL_MS} ms whatever
 * the handlers do, so the member heartbeats from it and keeps its partitions however slow a handler is (Kafka's
 * consumer heartbeats from a background thread for the same reason); it hands records to the workers, applies their
 * completions to the positions and commits them every {@code auto.commit.interval.ms} (whatever
 * {@code enable.auto.commit} says: the runtime commits, never the consumer). Work in flight is bounded per partition:
 * a partition with {@code maxInFlightPerPartition} records handed out and not completed is paused until one
 * completes. Records of a partition are handled one at a time in offset order ({@link Ordering#PARTITION}), or one
 * at a time per key ({@link Ordering#KEY}); partitions in parallel.
 *
 * <p>A rebalance that takes a partition away commits its position (its last chance), forgets its tracked state and
 * drops its records not yet handled; a delivery of it already with a handler completes into nothing, and the next
 * owner starts at the committed position. A {@link #seek} does the same without the commit. Records are delivered
 * at least once: a crash redelivers what was not committed.
 *
 * <p>A handler that throws counts as {@link Outcome#retry()} where a retry path is declared, else as
 * {@link HandlerErrors} says. When the runtime stops on a failure ({@link #failure}: a handler's with
 * {@link HandlerErrors#STOP}, a copy the producer could not store, a consumer error that is not retriable), it
 * commits the positions it stored, which never pass the record that failed, and closes.
 */
public final class ConsumerRuntime implements Closeable {
    /** How a handler's outcome becomes a committed position (seed 002). */
    public enum CommitMode {
        /**
         * The position is stored when a record is handed out to the workers (queued for its lane); ack and drop
         * change nothing, and {@link Outcome#retry()} without a retry path is refused (logged, counted). A crash
         * redelivers what was handed out since the last commit and loses what was handed out, committed and not
         * yet handled (at most {@code maxInFlightPerPartition} records per partition).
         */
        AUTO,
        /**
         * Every delivered offset is tracked; a completion stores the position just below the earliest delivery still
         * in progress, or after the highest delivered when none is, so it never passes unfinished work; offsets never
         * delivered (compacted away, markers) do not hold it back. {@link Outcome#retry()} without a retry path
         * delivers the record again before anything of its partition fetched later. A commit also keeps which
         * offsets above the position were completed ({@link TrackedCommitFormat}), so a restart redelivers only the
         * unfinished ones.
         */
        TRACKED,
        /**
         * The consumer commits nothing itself: every {@code commitInterval} (100 ms) the runtime waits for the
         * records handed out to complete, adds their positions to its producer's transaction and commits it
         * ({@link TransactionWindow}), so the positions and everything the handlers sent meanwhile (their outputs,
         * retry and dead-letter copies) become visible to read_committed readers together, exactly once.
         * {@link Outcome#retry()} without a retry path aborts the open window, whose records are read again. Needs a
         * producer with {@code transactional.id}.
         */
        TRANSACTIONAL
    }

    /** What runs in order. */
    public enum Ordering {
        /** A partition's records one at a time, in offset order. */
        PARTITION,
        /** A partition's records of one key one at a time, in offset order; keys in parallel (null is one key). */
        KEY
    }

    /** What a handler that throws means where no retry path is declared. */
    public enum HandlerErrors {
        /**
         * The runtime stops: the record stays unfinished (Tracked mode commits below it) and {@link #failure} says
         * why.
         */
        STOP,
        /** Logged, and the record completes as if acknowledged. */
        LOG_AND_ACK
    }

    /**
     * The counts at one moment.
     *
     * @param delivered      records handed out to the workers (a retry in place is not counted again)
     * @param skipped        records not handed out because the commit resumed from says they were completed
     * @param acked          {@link Outcome#ack()} answers
     * @param dropped        {@link Outcome#drop()} answers
     * @param retriedInPlace retries in place (no retry path): delivered again in Tracked mode, their window aborted in
     *                       Transactional mode
     * @param retryCopies    copies stored in the retry topic or a delay tier
     * @param deadLettered   copies stored in the dead-letter topic
     * @param delayMoves     delayed copies moved to the tier of their remaining time
     * @param exhausted      records that failed their last attempt with no dead-letter topic: completed, no copy
     * @param retriesRefused retries refused (Auto mode, no retry path)
     * @param handlerErrors  handler calls that threw
     * @param windowsAborted Transactional mode's windows aborted (their records read again)
     */
    public record Counts(long delivered, long skipped, long acked, long dropped, long retriedInPlace,
                         long retryCopies, long deadLettered, long delayMoves, long exhausted, long retriesRefused,
                         long handlerErrors, long windowsAborted) {
    }

    /** The attempts a record gets when a dead-letter topic is declared without {@code maxAttempts}. */
    public static final int DEFAULT_MAX_ATTEMPTS_WITH_DEAD_LETTERS = 3;
    /** How long a closing runtime waits for handlers it interrupted to return. */
    private static final long INTERRUPTED_WAIT_MS = 1_000;
    /** How long the polling thread waits in one poll: the longest a completion waits to be applied. */
    static final long POLL_MS = 50;

    private static final Logger LOG = LoggerFactory.getLogger(ConsumerRuntime.class);

    private final Builder settings;
    private final String group;
    private final TidemarkConsumer consumer;
    private final TidemarkProducer producer;
    /** The open transaction in Transactional mode; null in the others. */
    private final TransactionWindow window;
    private final RetryCopies retryCopies;
    /** The delay tiers, when declared; null otherwise. */
    private final DelayTiers tiers;
    private final ExecutorService workers;
    private final WorkLanes<Delivery> lanes;
    private final Retry.Sleeper sleeper;
    private final RuntimeCounts counts = new RuntimeCounts();
    /** What workers, the producer's callbacks and other threads tell the polling thread. */
    private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
    /** The partitions the group gave this runtime; the polling thread's. */
    private final Map<TopicPartition, PartitionWork> partitions = new HashMap<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    /**
     * A record completed by a copy (a retry, a dead letter, a delayed retry moved): until its position is committed, a
     * crash reads it again and copies it twice, so the polling thread commits at its next turn instead of waiting for
     * the timer. The polling thread's.
     */
    private boolean commitSoon;
    /** {@link #partitions}' keys, for other threads. */
    private volatile Set<TopicPartition> assigned = Set.of();
    /** With explicit partitions, what the runtime reads (found at start); null for a subscription. */
    private Set<TopicPartition> explicitAssignment;
    private final Thread loop;
    /** The runtime's metrics in the application's registry; null without one. */
    private RuntimeMetrics metrics;
    private volatile boolean stopping;

    private ConsumerRuntime(Builder settings, Retry.Sleeper sleeper) {
        this.settings = settings;
        this.sleeper = sleeper;
        this.group = settings.consumer.group().orElseThrow(() -> new IllegalArgumentException(
                "the consumer config has no group; the runtime commits positions for a group"));
        this.retryCopies = retryPath(settings);
        this.tiers = settings.delayTiers == null ? null : new DelayTiers(retryTopicOf(settings), settings.delayTiers);
        if (tiers != null && settings.pattern != null) {
            tiers.topics().stream().filter(topic -> !settings.pattern.matcher(topic).matches()).findFirst()
                    .ifPresent(topic -> {
                        throw new IllegalArgumentException("delay tier " + topic + " does not match the subscribed "
                                + "pattern " + settings.pattern.pattern() + "; the runtime reads its tiers through "
                                + "the subscription");
                    });
        }
        if (retryCopies != null && settings.producer == null) {
            throw new IllegalArgumentException("a retry path is declared (maxAttempts, retryTopic, deadLetterTopic "
                    + "or delayTiers) but no producer config to write the copies with; set producer(...)");
        }
        if (settings.mode == CommitMode.TRANSACTIONAL && (settings.producer == null
                || settings.producer.transactionalId().isEmpty())) {
            throw new IllegalArgumentException("Transactional mode needs a producer config with transactional.id; "
                    + "set producer(...)");
        }
        this.consumer = new TidemarkConsumer(settings.consumer, false);
        this.producer = settings.producer == null ? null : new TidemarkProducer(settings.producer);
        this.window = settings.mode == CommitMode.TRANSACTIONAL ? new TransactionWindow(producer) : null;
        this.workers = Executors.newFixedThreadPool(settings.workers, new ThreadFactoryBuilder()
                .setNameFormat("tidemark-runtime-" + group + "-worker-%d").setDaemon(true).build());
        this.lanes = new WorkLanes<>(workers, this::handle);
        this.loop = new Thread(this::runLoop, "tidemark-runtime-" + group);
        this.loop.setDaemon(true);
    }

    /**
     * A runtime that reads with {@code consumer} (which must name a group) and hands each record to
     * {@code handler}.
     */
    public static Builder builder(ConsumerConfig consumer, RecordHandler handler) {
        Objects.requireNonNull(handler, "handler");
        return new Builder(consumer, (record, output) -> handler.handle(record));
    }

    /**
     * A runtime whose handler also sends records ({@link PipelineHandler}): in Transactional mode they are written in
     * the same transactions as the positions of the records they came from. Needs {@link Builder#producer}.
     */
    public static Builder pipeline(ConsumerConfig consumer, PipelineHandler handler) {
        return new Builder(consumer, handler);
    }

    /**
     * The copies' settings when a retry path is declared, else null.
     *
     * @throws IllegalArgumentException when the subscription cannot tell where copies go
     */
    private static RetryCopies retryPath(Builder b) {
        if (b.maxAttempts == null && b.retryTopic == null && b.deadLetterTopic == null && b.delayTiers == null) {
            return null;
        }
        String retryTopic = retryTopicOf(b);
        if (b.pattern != null && !b.pattern.matcher(retryTopic).matches()) {
            throw new IllegalArgumentException("retry topic " + retryTopic + " does not match the subscribed pattern "
                    + b.pattern.pattern() + "; the runtime reads its retry topic through the subscription");
        }
        int maxAttempts = b.maxAttempts != null ? b.maxAttempts
                : b.deadLetterTopic != null ? DEFAULT_MAX_ATTEMPTS_WITH_DEAD_LETTERS : Integer.MAX_VALUE;
        return new RetryCopies(maxAttempts, retryTopic, Optional.ofNullable(b.deadLetterTopic));
    }

    /**
     * How many offsets above a Tracked-mode commit its metadata says were completed (or are not in the log), which a
     * restart skips; empty for metadata that is not a Tracked commit's or says nothing above the offset is complete.
     */
    public static OptionalLong completedAbove(String commitMetadata) {
        return TrackedCommitFormat.decode(commitMetadata)
                .map(above -> OptionalLong.of(above.end() - 1 - above.pending().length)).orElse(OptionalLong.empty());
    }

    /** The retry topic named, else the one topic subscribed. */
    private static String retryTopicOf(Builder b) {
        if (b.retryTopic != null) {
            return b.retryTopic;
        }
        if (b.pattern != null || b.partitions != null || b.topics.size() != 1) {
            throw new IllegalArgumentException("a subscription to " + (b.pattern != null ? "pattern "
                    + b.pattern.pattern() : b.partitions != null ? "partitions " + b.partitions : "topics "
                    + b.topics) + " must name its retry topic (retryTopic): only a subscription to one topic retries "
                    + "through that topic");
        }
        return b.topics.iterator().next();
    }

    /** Moves {@code tp} to {@code offset}: its tracked state is forgotten and its records not yet handled dropped. */
    public void seek(TopicPartition tp, long offset) {
        events.add(new Seek(tp, offset));
    }

    /** Why the runtime stopped by itself; empty while it runs or when it was closed. */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure.get());
    }

    /** Whether the polling thread still runs (false once closed or stopped on a failure). */
    public boolean running() {
        return loop.isAlive();
    }

    /** What the runtime did so far. */
    public Counts counts() {
        return counts.snapshot();
    }

    /** The partitions the group gives this runtime now (read on the polling thread, so at most one poll old). */
    public Set<TopicPartition> assignment() {
        return assigned;
    }

    /**
     * Stops: no more records are handed out, those queued and not started are dropped, handlers running get up to
     * {@code closeTimeout} to finish, copies in flight are stored, the positions are committed and the group left.
     * Waits for all of it. Later calls do nothing.
     */
    @Override
    public void close() {
        stopping = true;
        try {
            loop.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Makes missing delay tiers, finds the partitions of explicit assignments (the given ones, and every partition of
     * the retry topic and the tiers) and starts polling; on a failure, releases what the constructor opened.
     */
    private void start() {
        try {
            if (window != null) {
                producer.initTransactions();
            }
            if (tiers != null || settings.partitions != null) {
                try (TidemarkAdmin admin = new TidemarkAdmin(AdminConfig.of(settings.consumer.connection()))) {
                    if (tiers != null) {
                        DelayTierTopics.ensure(admin, retryTopicOf(settings), tiers);
                    }
                    if (settings.partitions != null) {
                        explicitAssignment = explicitAssignment(admin);
                    }
                }
            }
        } catch (RuntimeException e) {
            workers.shutdown();
            if (producer != null) {
                producer.close();
            }
            consumer.close();
            throw e;
        }
        if (settings.metrics != null) {
            metrics = new RuntimeMetrics(settings.metrics, group, counts, () -> assigned);
        }
        loop.start();
    }

    /** The partitions given, and every partition of the retry topic and the tiers. */
    private Set<TopicPartition> explicitAssignment(TidemarkAdmin admin) {
        Set<TopicPartition> all = new LinkedHashSet<>(settings.partitions);
        Set<String> whole = new LinkedHashSet<>();
        if (retryCopies != null) {
            whole.add(retryTopicOf(settings));
        }
        if (tiers != null) {
            whole.addAll(tiers.topics());
        }
        if (!whole.isEmpty()) {
            Map<String, Integer> counts = new HashMap<>();
            admin.listTopics(false).forEach(t -> counts.put(t.getName(), t.getPartitions()));
            for (String topic : whole) {
                Integer count = counts.get(topic);
                if (count == null) {
                    throw new IllegalArgumentException("retry topic " + topic + " does not exist");
                }
                for (int p = 0; p < count; p++) {
                    all.add(new TopicPartition(topic, p));
                }
            }
        }
        return Set.copyOf(all);
    }

    private void runLoop() {
        try {
            subscribe();
            long intervalMs = window != null ? settings.commitInterval.toMillis()
                    : settings.consumer.autoCommitIntervalMs();
            long nextCommitMs = clock().millis() + intervalMs;
            while (!stopping && failure.get() == null) {
                applyEvents();
                long nowMs = clock().millis();
                releaseRipe(nowMs);
                if (window != null && nowMs >= nextCommitMs) {
                    endWindow(WindowWait.POLL);
                    nextCommitMs = clock().millis() + intervalMs;
                } else if (window == null && (nowMs >= nextCommitMs || commitSoon)) {
                    commitSoon = false;
                    commitAsync();
                    nextCommitMs = nowMs + intervalMs;
                }
                List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(POLL_MS));
                long polledMs = clock().millis();
                for (ConsumerRecord record : records) {
                    dispatch(record, polledMs);
                }
            }
        } catch (RuntimeException e) {
            fail(e);
        } finally {
            shutDown();
        }
    }

    private Clock clock() {
        return settings.consumer.connection().clock();
    }

    private void subscribe() {
        RebalanceListener listener = new Rebalances();
        if (explicitAssignment != null) {
            consumer.assign(explicitAssignment);
            listener.onPartitionsAssigned(explicitAssignment);
            return;
        }
        if (settings.pattern != null) {
            consumer.subscribe(settings.pattern, listener);
            return;
        }
        Set<String> topics = new LinkedHashSet<>(settings.topics);
        if (settings.retryTopic != null) {
            topics.add(settings.retryTopic);
        }
        if (tiers != null) {
            topics.addAll(tiers.topics());
        }
        consumer.subscribe(topics, listener);
    }

    /**
     * Hands {@code record} to the workers, unless a resumed commit says it was completed or it is a delayed retry not
     * due yet ({@link DelayTiers}); on the polling thread.
     */
    private void dispatch(ConsumerRecord record, long nowMs) {
        PartitionWork work = partitions.get(record.topicPartition());
        if (work == null || work.heldUntilMs != 0) {
            return;
        }
        DelayTiers.Decision decision = tiers != null && tiers.isTier(record.topic()) ? decide(record, nowMs)
                : new DelayTiers.Deliver();
        if (decision instanceof DelayTiers.WaitUntil wait) {
            work.heldUntilMs = wait.timeMs();
            consumer.seek(record.topicPartition(), record.offset(), consumer.topicId(record.topicPartition())
                    .orElseThrow());
            updatePause(work);
            return;
        }
        if (work.tracks()) {
            if (!work.tracked(record.offset()).arrived(record.offset())) {
                counts.skipped.increment();
                return;
            }
        } else {
            work.autoStored = record.offset() + 1;
        }
        if (window != null) {
            window.handingOut(record.topicPartition(), record.offset());
        }
        work.inFlight++;
        updatePause(work);
        Delivery delivery = new Delivery(record, work);
        if (decision instanceof DelayTiers.MoveTo move) {
            send(delivery, RetryCopies.moved(record, move.topic(), RetryHeaders.due(record.headers()).orElseThrow()),
                    counts.delayMoves);
            return;
        }
        counts.delivered.increment();
        lanes.add(laneOf(record), delivery);
    }

    /** Where a delayed copy at the head of its tier partition stands; one without a due time is due. */
    private DelayTiers.Decision decide(ConsumerRecord record, long nowMs) {
        var due = RetryHeaders.due(record.headers());
        if (due.isEmpty()) {
            LOG.warn("{} at offset {} is in a delay tier without a valid {} header: delivered now",
                    record.topicPartition(), record.offset(), RetryHeaders.DUE);
            return new DelayTiers.Deliver();
        }
        return tiers.decide(record.topic(), record.receiveTimeMs(), due.getAsLong(), nowMs);
    }

    /** Fetches again the held partitions whose head is ripe; only delay tiers are ever held. */
    private void releaseRipe(long nowMs) {
        if (tiers == null) {
            return;
        }
        for (PartitionWork work : partitions.values()) {
            if (work.heldUntilMs != 0 && nowMs >= work.heldUntilMs) {
                work.heldUntilMs = 0;
                updatePause(work);
            }
        }
    }

    /** Pauses a partition that is full or held, resumes it when neither. */
    private void updatePause(PartitionWork work) {
        boolean pause = work.heldUntilMs != 0 || work.inFlight >= settings.maxInFlightPerPartition;
        if (pause != work.paused) {
            if (pause) {
                consumer.pause(List.of(work.tp));
            } else {
                consumer.resume(List.of(work.tp));
            }
            work.paused = pause;
        }
    }

    /**
     * Whether {@code tp}'s position is tracked: in Tracked mode, and always in a delay tier, whose records are the
     * runtime's own scheduled retries: storing their position before they are handled would lose them in a crash.
     */
    private boolean tracks(TopicPartition tp) {
        return settings.mode != CommitMode.AUTO || tiers != null && tiers.isTier(tp.topic());
    }

    private Object laneOf(ConsumerRecord record) {
        if (settings.ordering == Ordering.PARTITION) {
            return record.topicPartition();
        }
        return List.of(record.topicPartition(), record.key() == null ? "" : ByteBuffer.wrap(record.key()));
    }

    /** Runs the handler on {@code delivery} and sends its outcome where it goes; on a worker. */
    private void handle(Delivery delivery) {
        if (delivery.owner.forgotten || failure.get() != null) {
            return;
        }
        ConsumerRecord record = delivery.record;
        Outcome outcome;
        HandlerOutput output = new HandlerOutput(record);
        try {
            outcome = Objects.requireNonNull(settings.handler.handle(record, output), "the handler returned null");
        } catch (Exception e) {
            output.close();
            handlerFailed(delivery, e);
            return;
        } catch (Error e) {
            output.close();
            fail(new IllegalStateException("the handler failed on " + record.topicPartition() + " at offset "
                    + record.offset() + " with an error the runtime does not go on after", e));
            return;
        }
        CompletableFuture<Void> sent = output.close();
        switch (outcome.kind()) {
            case ACK -> {
                counts.acked.increment();
                completeAfter(sent, delivery);
            }
            case DROP -> {
                counts.dropped.increment();
                completeAfter(sent, delivery);
            }
            case RETRY -> retry(delivery, "the handler asked for a retry");
            case RETRY_AFTER -> retryAfter(delivery, outcome.delay());
        }
    }

    /** Completes the delivery once what its handler sent is stored; a send that failed fails it as its outcome. */
    private void completeAfter(CompletableFuture<Void> sent, Delivery delivery) {
        if (sent == HandlerOutput.NOTHING_SENT) {
            events.add(new Completed(delivery, false));
            return;
        }
        sent.whenComplete((ignored, error) -> {
            if (error == null) {
                events.add(new Completed(delivery, false));
            } else if (window != null) {
                window.requestAbort("a record sent for " + delivery.record.topicPartition() + " at offset "
                        + delivery.record.offset() + " was not stored: " + error.getMessage());
                events.add(new Completed(delivery, false));
            } else {
                fail(new IllegalStateException("a record the handler sent for " + delivery.record.topicPartition()
                        + " at offset " + delivery.record.offset() + " was not stored", error));
            }
        });
    }

    private void handlerFailed(Delivery delivery, Exception e) {
        if (stopping) {
            LOG.info("The handler of {} at offset {} ended with {} while the runtime closed: left unfinished",
                    delivery.record.topicPartition(), delivery.record.offset(), e.toString());
            return;
        }
        counts.handlerErrors.increment();
        if (retryCopies != null) {
            retry(delivery, e.toString());
        } else if (settings.handlerErrors == HandlerErrors.LOG_AND_ACK) {
            LOG.error("The handler failed on {} at offset {}; acknowledged (handler errors: LOG_AND_ACK)",
                    delivery.record.topicPartition(), delivery.record.offset(), e);
            events.add(new Completed(delivery, false));
        } else {
            fail(new IllegalStateException("the handler failed on " + delivery.record.topicPartition()
                    + " at offset " + delivery.record.offset() + " (handler errors: STOP)", e));
        }
    }

    private void retry(Delivery delivery, String reason) {
        ConsumerRecord record = delivery.record;
        if (retryCopies != null) {
            copy(delivery, reason);
        } else if (window != null) {
            counts.retriedInPlace.increment();
            window.requestAbort("the handler asked to retry " + record.topicPartition() + " at offset "
                    + record.offset());
            events.add(new Completed(delivery, false));
        } else if (settings.mode == CommitMode.TRACKED) {
            counts.retriedInPlace.increment();
            try {
                sleeper.sleep(settings.consumer.retryBackoffMs());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            lanes.putBack(laneOf(record), delivery);
        } else {
            counts.retriesRefused.increment();
            LOG.error("UNSUPPORTED: retry() of {} at offset {} in Auto mode without a retry path: nothing would "
                    + "deliver it again (its position was stored when it was handed out); declare maxAttempts, "
                    + "retryTopic or deadLetterTopic, or use Tracked mode", record.topicPartition(), record.offset());
            events.add(new Completed(delivery, false));
        }
    }

    /** Writes the copy {@link RetryCopies} decides on; the record completes once it is stored. */
    private void copy(Delivery delivery, String reason) {
        finishWith(delivery, retryCopies.copyOf(delivery.record, reason), reason);
    }

    /** A durable delayed retry ({@link DelayTiers}); a runtime without delay tiers stops, as it cannot keep it. */
    private void retryAfter(Delivery delivery, Duration delay) {
        ConsumerRecord record = delivery.record;
        if (tiers == null) {
            fail(new IllegalStateException("the handler answered " + Outcome.retryAfter(delay) + " for "
                    + record.topicPartition() + " at offset " + record.offset() + ", but no delay tiers are "
                    + "declared (delayTiers) to keep it in"));
            return;
        }
        String reason = "the handler asked for a retry after " + delay;
        finishWith(delivery, retryCopies.delayedCopyOf(record, tiers, delay.toMillis(), clock().millis(), reason),
                reason);
    }

    private void finishWith(Delivery delivery, Optional<RetryCopies.Copy> copy, String reason) {
        ConsumerRecord record = delivery.record;
        if (copy.isEmpty()) {
            counts.exhausted.increment();
            LOG.warn("{} at offset {} failed its last attempt ({}) and no dead-letter topic is declared: it completes "
                    + "with no copy", record.topicPartition(), record.offset(), reason);
            events.add(new Completed(delivery, false));
            return;
        }
        send(delivery, copy.get().record(), copy.get().deadLetter() ? counts.deadLettered : counts.retryCopies);
    }

    /** Sends {@code copy} of the delivery's record, which completes once it is stored, counted in {@code stored}. */
    private void send(Delivery delivery, ProducerRecord copy, LongAdder stored) {
        ConsumerRecord record = delivery.record;
        try {
            producer.send(copy).whenComplete((metadata, error) -> {
                if (error != null && window != null) {
                    window.requestAbort("the copy of " + record.topicPartition() + " at offset " + record.offset()
                            + " to " + copy.topic() + " was not stored: " + error.getMessage());
                    events.add(new Completed(delivery, false));
                    return;
                }
                if (error != null) {
                    fail(new IllegalStateException("the copy of " + record.topicPartition() + " at offset "
                            + record.offset() + " to " + copy.topic() + " was not stored", error));
                    return;
                }
                stored.increment();
                events.add(new Completed(delivery, true));
            });
        } catch (RuntimeException e) {
            fail(new IllegalStateException("the copy of " + record.topicPartition() + " at offset "
                    + record.offset() + " to " + copy.topic() + " could not be sent", e));
        }
    }

    /** Applies what the other threads said; on the polling thread. */
    private void applyEvents() {
        Event event;
        while ((event = events.poll()) != null) {
            if (event instanceof Completed completed) {
                complete(completed.delivery);
                commitSoon |= completed.copied;
            } else if (event instanceof CommitFailed commitFailed) {
                commitFailed.offsets.forEach((tp, offset) -> {
                    PartitionWork work = partitions.get(tp);
                    if (work != null && offset.equals(work.lastCommitted)) {
                        work.lastCommitted = null;
                    }
                });
            } else if (event instanceof Seek seek) {
                seek(seek);
            }
        }
    }

    private void seek(Seek seek) {
        if (!partitions.containsKey(seek.tp)) {
            LOG.warn("Seek of {} ignored: the group does not give it to this runtime", seek.tp);
            return;
        }
        forget(List.of(seek.tp));
        consumer.seek(seek.tp, seek.offset);
        partitions.put(seek.tp, new PartitionWork(seek.tp, Optional.empty()));
        publishAssignment();
    }

    private void complete(Delivery delivery) {
        PartitionWork work = partitions.get(delivery.record.topicPartition());
        if (work != delivery.owner) {
            return;
        }
        work.inFlight--;
        if (work.tracks()) {
            work.tracked.completed(delivery.record.offset());
        }
        updatePause(work);
    }

    /** How {@link #endWindow} waits for the records handed out in the window to complete. */
    private enum WindowWait {
        /** Polling, so the member keeps heartbeating: from the polling loop. */
        POLL,
        /** Without polling: from inside a rebalance callback, which runs within a poll. */
        PARK,
        /** Not at all: at close, when the workers have stopped; unfinished work aborts the window. */
        NONE
    }

    /**
     * Ends the open window (Transactional mode): stops handing out records, waits for those handed out to complete,
     * then commits the window with their positions, or aborts it and reads its partitions again from where it began.
     * A runtime that stopped on a failure, or work left unfinished, aborts it.
     */
    private void endWindow(WindowWait wait) {
        if (!window.open()) {
            return;
        }
        List<TopicPartition> held = partitions.values().stream().filter(w -> !w.paused).map(w -> w.tp).toList();
        consumer.pause(held);
        try {
            while (wait != WindowWait.NONE && failure.get() == null && unfinished()) {
                if (wait == WindowWait.POLL) {
                    unread(consumer.poll(Duration.ofMillis(POLL_MS)));
                } else {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
                applyEvents();
            }
            if (!window.open()) {
                return;
            }
            if (failure.get() != null) {
                window.requestAbort("the runtime stopped: " + failure.get());
            } else if (unfinished()) {
                window.requestAbort("the runtime closed with records unfinished");
            }
            Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
            partitions.forEach((tp, work) -> work.position().ifPresent(p -> positions.put(tp, p)));
            Map<TopicPartition, Long> rewind = window.end(positions, consumer.groupMetadata());
            if (!rewind.isEmpty()) {
                counts.windowsAborted.increment();
                rewind.forEach((tp, offset) -> seek(new Seek(tp, offset)));
            }
        } finally {
            List<TopicPartition> stillHeld = held.stream().filter(partitions::containsKey).toList();
            consumer.resume(stillHeld);
        }
    }

    /**
     * Puts back what a poll returned while the window ends (a partition the group gave meanwhile is not paused): each
     * partition is sought to its first record returned, so nothing is skipped.
     */
    private void unread(List<ConsumerRecord> records) {
        Map<TopicPartition, Long> first = new HashMap<>();
        for (ConsumerRecord record : records) {
            first.merge(record.topicPartition(), record.offset(), Math::min);
        }
        first.forEach((tp, offset) -> consumer.seek(tp, offset, consumer.topicId(tp).orElseThrow()));
    }

    private boolean unfinished() {
        return partitions.values().stream().anyMatch(w -> w.inFlight > 0);
    }

    /** Stops the runtime: no record is handed to a handler from now on; any thread. */
    private void fail(Throwable cause) {
        if (failure.compareAndSet(null, cause)) {
            LOG.error("The consumer runtime of group {} stops", group, cause);
        }
    }

    private void commitAsync() {
        if (window != null) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = changedPositions(partitions.keySet());
        if (offsets.isEmpty()) {
            return;
        }
        consumer.commitAsync(offsets).whenComplete((ignored, error) -> {
            if (error != null) {
                LOG.warn("Commit of {} for group {} failed: {}", offsets, group, error.getMessage());
                events.add(new CommitFailed(offsets));
            }
        });
    }

    private void commitSync(Collection<TopicPartition> tps) {
        if (window != null) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = changedPositions(tps);
        if (offsets.isEmpty()) {
            return;
        }
        try {
            consumer.commitSync(offsets);
        } catch (TidemarkException e) {
            LOG.warn("Commit of {} for group {} failed: {}", offsets, group, e.getMessage());
        }
    }

    /** The stored positions of {@code tps} not committed yet, each marked as committed. */
    private Map<TopicPartition, OffsetAndMetadata> changedPositions(Collection<TopicPartition> tps) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : tps) {
            PartitionWork work = partitions.get(tp);
            Optional<OffsetAndMetadata> position = work == null ? Optional.empty() : work.position();
            if (position.isPresent() && !position.get().equals(work.lastCommitted)) {
                offsets.put(tp, position.get());
                work.lastCommitted = position.get();
            }
        }
        return offsets;
    }

    /** Publishes {@link #partitions}' keys to other threads ({@link #assignment}). */
    private void publishAssignment() {
        assigned = Set.copyOf(partitions.keySet());
    }

    /** Forgets the state of {@code tps}: their deliveries queued are dropped, those running complete into nothing. */
    private void forget(Collection<TopicPartition> tps) {
        for (TopicPartition tp : tps) {
            PartitionWork work = partitions.remove(tp);
            if (work != null) {
                work.forgotten = true;
                lanes.remove(delivery -> delivery.owner == work);
            }
        }
        publishAssignment();
    }

    private void shutDown() {
        lanes.remove(delivery -> true);
        workers.shutdown();
        try {
            if (!workers.awaitTermination(settings.closeTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.info("Handlers of group {} still ran {} after the runtime began to close: interrupted, their "
                        + "records left unfinished", group, settings.closeTimeout);
                workers.shutdownNow();
                workers.awaitTermination(INTERRUPTED_WAIT_MS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            workers.shutdownNow();
            Thread.currentThread().interrupt();
        }
        applyEvents();
        if (window != null) {
            try {
                endWindow(WindowWait.NONE);
            } catch (RuntimeException e) {
                LOG.warn("The last window of group {} did not end: {}", group, e.toString());
            }
        }
        if (producer != null) {
            producer.close();
        }
        commitSync(Set.copyOf(partitions.keySet()));
        consumer.close();
        if (metrics != null) {
            metrics.remove();
        }
    }

    /** What the group's changes do; inside {@code poll}, on the polling thread. */
    private final class Rebalances implements RebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> tps) {
            Map<TopicPartition, OffsetAndMetadata> committed = Map.of();
            Set<TopicPartition> tracked = tps.stream().filter(ConsumerRuntime.this::tracks)
                    .collect(Collectors.toUnmodifiableSet());
            if (!tracked.isEmpty()) {
                try {
                    committed = consumer.committed(tracked);
                } catch (TidemarkException e) {
                    LOG.warn("The committed offsets of {} could not be read ({}): their records above the committed "
                            + "offsets are all delivered again", tps, e.getMessage());
                }
            }
            for (TopicPartition tp : tps) {
                partitions.put(tp, new PartitionWork(tp, Optional.ofNullable(committed.get(tp))));
            }
            publishAssignment();
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> tps) {
            if (window != null) {
                endWindow(WindowWait.PARK);
            }
            commitSync(tps);
            forget(tps);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> tps) {
            if (window != null) {
                window.requestAbort("the group took " + tps + " away");
                endWindow(WindowWait.PARK);
            }
            forget(tps);
        }
    }

    /** A partition as this runtime reads it: its position and the work handed out; the polling thread's. */
    private final class PartitionWork {
        final TopicPartition tp;
        /** The commit the group had when the partition came, for Tracked mode to resume from. */
        final Optional<OffsetAndMetadata> resumedFrom;
        /** Set when the partition is taken away or sought: its deliveries complete into nothing. */
        volatile boolean forgotten;
        TrackedPosition tracked;
        long autoStored = -1;
        int inFlight;
        /** Whether the consumer has the partition paused: full, or held. */
        boolean paused;
        /** While a delayed copy at its head is not ripe: when it is (the runtime's clock); 0 otherwise. */
        long heldUntilMs;
        OffsetAndMetadata lastCommitted;

        PartitionWork(TopicPartition tp, Optional<OffsetAndMetadata> resumedFrom) {
            this.tp = tp;
            this.resumedFrom = resumedFrom;
            this.lastCommitted = resumedFrom.orElse(null);
        }

        boolean tracks() {
            return ConsumerRuntime.this.tracks(tp);
        }

        /** The tracked position, made when the first record arrives. */
        TrackedPosition tracked(long firstOffset) {
            if (tracked == null) {
                tracked = resumedFrom.isPresent() && firstOffset >= resumedFrom.get().offset()
                        ? TrackedPosition.resuming(resumedFrom.get().offset(),
                        TrackedCommitFormat.decode(resumedFrom.get().metadata()))
                        : TrackedPosition.from(firstOffset);
            }
            return tracked;
        }

        /** The position to commit: the stored one; empty before there is one. */
        Optional<OffsetAndMetadata> position() {
            if (!tracks()) {
                return autoStored < 0 ? Optional.empty() : Optional.of(new OffsetAndMetadata(autoStored));
            }
            if (tracked == null || tracked.stored().isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(new OffsetAndMetadata(tracked.stored().getAsLong(),
                    tracked.completedAbove().map(TrackedCommitFormat::encode).orElse("")));
        }
    }

    private record Delivery(ConsumerRecord record, PartitionWork owner) {
    }

    /** What one handler call sends: valid until the handler returns; {@link #close} gives when all is stored. */
    private final class HandlerOutput implements PipelineHandler.Output {
        /** What {@link #close} gives when the handler sent nothing (most handlers): no future per record. */
        static final CompletableFuture<Void> NOTHING_SENT = CompletableFuture.completedFuture(null);
        private final ConsumerRecord input;
        private List<CompletableFuture<RecordMetadata>> sends;
        private boolean closed;

        HandlerOutput(ConsumerRecord input) {
            this.input = input;
        }

        @Override
        public synchronized void send(ProducerRecord record) {
            if (closed) {
                throw new IllegalStateException("the handler of " + input.topicPartition() + " at offset "
                        + input.offset() + " returned: its output takes no more records");
            }
            if (producer == null) {
                throw new IllegalStateException("the runtime has no producer to send with; set producer(...)");
            }
            if (sends == null) {
                sends = new ArrayList<>();
            }
            sends.add(producer.send(record));
        }

        synchronized CompletableFuture<Void> close() {
            closed = true;
            return sends == null ? NOTHING_SENT : CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new));
        }
    }

    private sealed interface Event permits Completed, CommitFailed, Seek {
    }

    /** @param copied completed by a copy now stored: its position is committed at once (see {@link #commitSoon}) */
    private record Completed(Delivery delivery, boolean copied) implements Event {
    }

    private record CommitFailed(Map<TopicPartition, OffsetAndMetadata> offsets) implements Event {
    }

    private record Seek(TopicPartition tp, long offset) implements Event {
    }

    /** A runtime's settings; {@link #start} checks them and starts it. */
    public static final class Builder {
        private final ConsumerConfig consumer;
        private final PipelineHandler handler;
        private Set<String> topics = Set.of();
        private Pattern pattern;
        private Set<TopicPartition> partitions;
        private CommitMode mode = CommitMode.AUTO;
        private Ordering ordering = Ordering.PARTITION;
        private HandlerErrors handlerErrors = HandlerErrors.STOP;
        private int workers = 1;
        private int maxInFlightPerPartition = 100;
        private Integer maxAttempts;
        private String retryTopic;
        private String deadLetterTopic;
        private ProducerConfig producer;
        private List<Duration> delayTiers;
        private MetricRegistry metrics;
        private Duration closeTimeout = Duration.ofSeconds(30);
        private Duration commitInterval = Duration.ofMillis(100);

        private Builder(ConsumerConfig consumer, PipelineHandler handler) {
            this.consumer = Objects.requireNonNull(consumer, "consumer");
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /** Subscribes to these topics (one or more). */
        public Builder topics(Collection<String> topics) {
            this.topics = new LinkedHashSet<>(topics);
            this.pattern = null;
            this.partitions = null;
            return this;
        }

        /**
         * Reads exactly these partitions (no group membership: the group only keeps the committed positions, so no
         * other member may use it), and every partition of the retry topic and delay tiers, which must be named.
         */
        public Builder partitions(Collection<TopicPartition> partitions) {
            this.partitions = new LinkedHashSet<>(partitions);
            this.topics = Set.of();
            this.pattern = null;
            return this;
        }

        /** Subscribes to every topic whose whole name matches, as they appear. */
        public Builder pattern(Pattern pattern) {
            this.pattern = Objects.requireNonNull(pattern, "pattern");
            this.topics = Set.of();
            this.partitions = null;
            return this;
        }

        /** Auto (the default), Tracked or Transactional. */
        public Builder mode(CommitMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** Per partition (the default) or per key within a partition. */
        public Builder ordering(Ordering ordering) {
            this.ordering = Objects.requireNonNull(ordering, "ordering");
            return this;
        }

        /** What a handler that throws means without a retry path; {@link HandlerErrors#STOP} by default. */
        public Builder handlerErrors(HandlerErrors handlerErrors) {
            this.handlerErrors = Objects.requireNonNull(handlerErrors, "handlerErrors");
            return this;
        }

        /** Threads that run the handler, 1 to 1,024; 1 by default. */
        public Builder workers(int workers) {
            this.workers = workers;
            return this;
        }

        /** Records of a partition handed out and not completed before it is paused, 1 to 100,000; 100 by default. */
        public Builder maxInFlightPerPartition(int maxInFlightPerPartition) {
            this.maxInFlightPerPartition = maxInFlightPerPartition;
            return this;
        }

        /**
         * The attempts a record gets, from 1 (the first delivery is attempt 1): {@link Outcome#retry()} below it
         * copies the record to the retry topic with the next attempt, at it to the dead-letter topic. Unlimited by
         * default, {@value #DEFAULT_MAX_ATTEMPTS_WITH_DEAD_LETTERS} with a dead-letter topic.
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * Where copies for another attempt go, read by this runtime too (with a pattern it must match). By default the
         * subscribed topic itself, which only a subscription to one topic has.
         */
        public Builder retryTopic(String retryTopic) {
            this.retryTopic = ConfigChecks.notNull("retryTopic", retryTopic);
            return this;
        }

        /** Where a record goes after its last attempt; none by default (it completes with no copy). */
        public Builder deadLetterTopic(String deadLetterTopic) {
            this.deadLetterTopic = ConfigChecks.notNull("deadLetterTopic", deadLetterTopic);
            return this;
        }

        /**
         * The delays of the tiers that keep {@link Outcome#retryAfter} copies, ascending (say 1 s, 10 s, 1 min,
         * 10 min, 1 h): topics {@code <retry topic>.delay-<delay>}, made at start with the retry topic's partitions and
         * replication factor when missing, and read by this runtime. The smallest bounds how late a delayed retry
         * may come ({@link DelayTiers}). None by default: {@code retryAfter} then stops the runtime.
         */
        public Builder delayTiers(List<Duration> delayTiers) {
            this.delayTiers = List.copyOf(delayTiers);
            return this;
        }

        /** The producer that writes retry and dead-letter copies; needed when a retry path is declared. */
        public Builder producer(ProducerConfig producer) {
            this.producer = Objects.requireNonNull(producer, "producer");
            return this;
        }

        /**
         * Registers the runtime's metrics in {@code registry} ({@code tidemark.runtime.<group>.*}: its counts and
         * assigned partitions), removed at close; none by default.
         */
        public Builder metrics(MetricRegistry registry) {
            this.metrics = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /** How often Transactional mode commits its window, 1 ms to 1 min; 100 ms by default. */
        public Builder commitInterval(Duration commitInterval) {
            this.commitInterval = Objects.requireNonNull(commitInterval, "commitInterval");
            return this;
        }

        /** How long {@link #close} waits for handlers running; 30 s by default. */
        public Builder closeTimeout(Duration closeTimeout) {
            this.closeTimeout = Objects.requireNonNull(closeTimeout, "closeTimeout");
            return this;
        }

        /**
         * Checks the settings and starts: the runtime joins the group and handles records until closed.
         *
         * @throws IllegalArgumentException naming the setting that is wrong and what is allowed
         */
        public ConsumerRuntime start() {
            return start(Thread::sleep);
        }

        ConsumerRuntime start(Retry.Sleeper sleeper) {
            if (topics.isEmpty() && pattern == null && (partitions == null || partitions.isEmpty())) {
                throw new IllegalArgumentException("no subscription: set topics(...), pattern(...) or "
                        + "partitions(...)");
            }
            inRange("workers", workers, 1, 1_024);
            inRange("maxInFlightPerPartition", maxInFlightPerPartition, 1, 100_000);
            if (maxAttempts != null) {
                inRange("maxAttempts", maxAttempts, 1, Integer.MAX_VALUE);
            }
            inRange("commitInterval (ms)", commitInterval.toMillis(), 1, 60_000);
            if (closeTimeout.isNegative()) {
                throw new IllegalArgumentException("closeTimeout " + closeTimeout + " is negative");
            }
            ConsumerRuntime runtime = new ConsumerRuntime(this, sleeper);
            runtime.start();
            return runtime;
        }

        private static void inRange(String name, long value, long min, long max) {
            if (value < min || value > max) {
                throw new IllegalArgumentException(name + " = " + value + " is not allowed; it must be from " + min
                        + " to " + max);
            }
        }
    }
}
