package io.tidemark.mirror.sink;

import io.tidemark.client.api.ConsumerRecord;
import io.tidemark.client.api.TopicPartition;
import io.tidemark.mirror.MirrorMetrics;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.OriginOffsetResponse;
import io.tidemark.proto.v1.ProduceResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Copies one source partition into the same partition of the target topic, exactly once; a record the target refuses
 * goes to the dead-letter topic, or stops the partition, never passed over unsaid.
 * <ol>
 *   <li><b>Resync</b>: asks the target partition's leader which origin offset it holds of this origin partition
 *       (OriginOffset) and has the source read from the next one ({@link SourcePositioner}), of the source topic of
 *       the origin's id only. No state of its own: after a crash, a restart, or a batch of unknown fate, the target
 *       says where to continue.</li>
 *   <li><b>Copy</b>: queues the records read ({@link #offer}) and writes them as mirrored batches
 *       ({@link CopyBatch}), up to {@link TargetPartitions#maxInFlight} of them unanswered. The target stores them in
 *       write order, or none past one that failed ({@link TargetPartitions#write}), so a refused batch is never
 *       passed by a later one (a partition takes a batch that skips origin offsets, since the source's retention may
 *       remove records before they are read; see the OriginOffsetTable of broker-core). Answers are recorded in write
 *       order ({@link OffsetMap}), whatever order they come in.</li>
 *   <li><b>Refusals</b> ({@link RefusalPolicy}), decided once every batch written before the refusal was known is
 *       answered, so nothing of the copier is in flight when it acts; the batches written after the refused one
 *       failed with it and are queued again behind its records, also one written while the refusal was on its way to
 *       the copier: the target takes none of the partition's batches until the copier, acting on the refusal,
 *       {@link TargetPartitions#resume resumes} it (as it does when it starts copying after a resync). A batch
 *       refused for one of its records is resent one record per batch, one at a time; a record refused alone is
 *       written to the dead-letter topic when the mirror has one (as a mirrored batch, so it is stored there once),
 *       else the partition <b>stops</b>: it stays stopped, with its {@link StopReason} logged, counted and published
 *       ({@link #status}), until the mirror restarts. A batch the target already holds (ORIGIN_OFFSET_HELD) sends
 *       the copier back to resync; so does one whose outcome is unknown after the writer's retries.</li>
 *   <li><b>Target topic gone</b> (UNKNOWN_TOPIC, UNKNOWN_PARTITION): the copier asks for it to be made again
 *       ({@link TargetPartitions#targetTopicGone}), which {@link #hold holds} every copier of the topic until none has
 *       a write outstanding, creates it, and {@link #release releases} them to resync.</li>
 * </ol>
 * Records the source's retention removed before they were read show as a jump in source offsets: the copier keeps
 * each such gap ({@link #takeGaps}) for the checkpoint agent to record on the target, so the failover tool counts them.
 * It remembers where its copies went ({@link OffsetMap}) for exact checkpoints.
 *
 * <p>Thread-safe: every method takes the copier's lock. Records come from the source thread, answers from the
 * writer's threads, resyncs from the timer thread; the lock is never held across a call that waits.
 */
public final class PartitionCopier implements CopiedPartition {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionCopier.class);
    /** Batches remembered for translation: 10,000 batches, at least a few million records. */
    static final int OFFSET_MAP_BATCHES = 10_000;
    /**
     * Wait before asking the target again after a failed resync or a failed write. Not a {@code Retry}: a copier has
     * no deadline (it copies for as long as the mirror runs), and what follows a failure depends on the error and on
     * the copier's state when the timer fires ({@link RefusalPolicy}, the generation), not only on whether it is
     * retriable.
     */
    static final long RETRY_DELAY_MS = 1_000;

    private enum State {
        RESYNCING(CopyState.RESYNCHRONISING), COPYING(CopyState.COPYING),
        /** Waiting for the target topic to be made again. */
        HELD(CopyState.RESYNCHRONISING), STOPPED(CopyState.STOPPED),
        /** The mirror closed, or the source topic is gone: the copier is dropped. */
        CLOSED(CopyState.STOPPED);

        private final CopyState shown;

        State(CopyState shown) {
            this.shown = shown;
        }
    }

    private final TopicPartition source;
    private final TopicPartition target;
    private final OriginPartition origin;
    private final String targetCluster;
    private final int maxBatchBytes;
    private final Optional<TopicPartition> deadLetters;
    private final TargetPartitions targets;
    private final SourcePositioner positioner;
    private final ScheduledExecutorService timers;
    private final MirrorMetrics metrics;
    private final OffsetMap offsets = new OffsetMap(OFFSET_MAP_BATCHES);
    private final ArrayDeque<ConsumerRecord> pending = new ArrayDeque<>();
    private final List<Gap> gaps = new ArrayList<>();

    /** Batches written and not settled yet, in write order. */
    private final ArrayDeque<Written> inFlight = new ArrayDeque<>();

    private State state = State.RESYNCING;
    private StopReason stopReason;
    private int generation;
    private long pendingBytes;
    private boolean deadLettering;
    /** Completes when no write is outstanding any more, for {@link #hold}; null when nobody waits. */
    private CompletableFuture<Void> quiet;
    /** Highest source offset queued or held; records at or below it are not queued again. */
    private long lastQueued = OffsetMap.NONE;
    /** After a batch was refused for one of its records: one record per batch up to this source offset. */
    private long singleRecordsUntil = OffsetMap.NONE;
    /** The last source offset written to the dead-letter topic, or found there. */
    private long lastDeadLettered = OffsetMap.NONE;
    private long sourceLogEndOffset = OffsetMap.NONE;
    private long lastCopyReceiveTimeMs;

    /**
     * @param origin        the source partition copied: the source cluster's name, the topic's name and id, the
     *                      partition
     * @param maxBatchBytes the largest batch of several records, provenance included: the mirror's limit or the
     *                      target topic's max.batch.bytes, whichever is smaller
     * @param deadLetters   partition 0 of the mirror's dead-letter topic, when it has one
     */
    public PartitionCopier(OriginPartition origin, TopicPartition target, String targetCluster, int maxBatchBytes,
                           Optional<TopicPartition> deadLetters, TargetPartitions targets, SourcePositioner positioner,
                           ScheduledExecutorService timers, MirrorMetrics metrics) {
        this.source = new TopicPartition(origin.topic(), origin.partition());
        this.target = target;
        this.origin = origin;
        this.targetCluster = targetCluster;
        this.maxBatchBytes = maxBatchBytes;
        this.deadLetters = deadLetters;
        this.targets = targets;
        this.positioner = positioner;
        this.timers = timers;
        this.metrics = metrics;
        metrics.partitionGauges(source.topic(), source.partition(), this::lagRecords, this::stopped);
    }

    @Override
    public TopicPartition source() {
        return source;
    }

    @Override
    public TopicPartition target() {
        return target;
    }

    @Override
    public OriginPartition origin() {
        return origin;
    }

    /** Starts: asks the target where to continue. */
    public synchronized void start() {
        resync();
    }

    /** Drops the copier: the mirror closes, or the source topic is gone. */
    public synchronized void close() {
        state = State.CLOSED;
        pending.clear();
        pendingBytes = 0;
    }

    /**
     * Stops the partition for {@code reason}: nothing more of it is copied until the mirror restarts. Logged as an
     * error; {@link #status} and the metrics show it.
     */
    public synchronized void stop(StopReason reason) {
        if (state == State.CLOSED || state == State.STOPPED) {
            return;
        }
        state = State.STOPPED;
        stopReason = reason;
        pending.clear();
        pendingBytes = 0;
        LOG.error("{} -> {}: the partition is stopped and copies nothing more until the mirror restarts: {}", source,
                target, reason.describe());
    }

    /** Whether the copier takes records now (it is not resynchronising or stopped). */
    public synchronized boolean copying() {
        return state == State.COPYING;
    }

    /** Whether the partition is stopped for a {@link StopReason}. */
    public synchronized boolean stopped() {
        return state == State.STOPPED;
    }

    /** Bytes of source records queued and not yet in a batch: the source thread pauses the partition above a limit. */
    public synchronized long backlogBytes() {
        return pendingBytes;
    }

    /** The source thread moved the reading position as asked with {@code forGeneration}. */
    public synchronized void positioned(int forGeneration) {
        if (forGeneration == generation && state == State.RESYNCING) {
            state = State.COPYING;
            targets.resume(target);
        }
    }

    /**
     * Stops writing while the target topic is made again: what is queued is dropped and nothing is written until
     * {@link #release}. Completes once no write of this copier is outstanding, so none can land in the new topic
     * before the copier asked it where to continue. A stopped copier stays stopped.
     */
    public synchronized CompletableFuture<Void> hold() {
        if (state == State.STOPPED || state == State.CLOSED) {
            return CompletableFuture.completedFuture(null);
        }
        state = State.HELD;
        generation++;
        pending.clear();
        pendingBytes = 0;
        if (idle()) {
            return CompletableFuture.completedFuture(null);
        }
        if (quiet == null) {
            quiet = new CompletableFuture<>();
        }
        return quiet;
    }

    /** Ends a {@link #hold}: asks the target where to continue. */
    public synchronized void release() {
        if (state == State.HELD) {
            resync();
        }
    }

    /** Records read from the source partition, in offset order. */
    public synchronized void offer(List<ConsumerRecord> records) {
        if (state != State.COPYING) {
            return;
        }
        for (ConsumerRecord record : records) {
            if (record.offset() <= lastQueued) {
                continue;
            }
            if (lastQueued != OffsetMap.NONE && record.offset() > lastQueued + 1) {
                Gap gap = new Gap(lastQueued + 1, record.offset());
                gaps.add(gap);
                metrics.skippedGap(gap.records());
                LOG.warn("{}: source offsets {} to {} are gone (retention removed them before they were copied); "
                        + "{} records not copied, recorded on the target", source, gap.fromOffset(),
                        gap.toOffset() - 1, gap.records());
            }
            lastQueued = record.offset();
            pending.addLast(record);
            pendingBytes += CopyBatch.sizeBytes(record);
        }
        writeNext();
    }

    /**
     * The source partition's log end offset as a fetch or a listing saw it, for the lag. The highest seen counts: an
     * answer that was on its way while a fresher one came does not lower it.
     */
    @Override
    public synchronized void sourceLogEndOffset(long offset) {
        sourceLogEndOffset = Math.max(sourceLogEndOffset, offset);
    }

    @Override
    public synchronized List<Gap> takeGaps() {
        List<Gap> taken = List.copyOf(gaps);
        gaps.clear();
        return taken;
    }

    /**
     * How far the target is behind the source partition.
     *
     * @param records            records the source has past the last one the target holds as a copy or in the
     *                           dead-letter topic; 0 until the log end is known
     * @param sourceLogEndOffset the source's log end offset it is measured from, {@link OffsetMap#NONE} until known
     */
    public record Lag(long records, long sourceLogEndOffset) {
    }

    public synchronized Lag lag() {
        long delivered = Math.max(offsets.lastOriginOffset(), lastDeadLettered);
        long records = sourceLogEndOffset == OffsetMap.NONE ? 0 : Math.max(0, sourceLogEndOffset - (delivered + 1));
        return new Lag(records, sourceLogEndOffset);
    }

    /** {@link Lag#records} of {@link #lag}. */
    public long lagRecords() {
        return lag().records();
    }

    /** What the copier is doing, how far behind, what it copied last, and why it stopped. */
    public synchronized CopierStatus status() {
        Lag lag = lag();
        return new CopierStatus(state.shown, lag.records(), lag.sourceLogEndOffset(), offsets.lastOriginOffset(),
                lastCopyReceiveTimeMs, Optional.ofNullable(stopReason));
    }

    @Override
    public synchronized OffsetMap.Translation translate(long committed) {
        return offsets.translate(committed);
    }

    private void resync() {
        if (state == State.STOPPED || state == State.CLOSED) {
            return;
        }
        state = State.RESYNCING;
        generation++;
        pending.clear();
        pendingBytes = 0;
        singleRecordsUntil = OffsetMap.NONE;
        int asked = generation;
        targets.originOffset(target, origin).whenComplete((held, error) -> resynced(asked, held, error));
    }

    private synchronized void resynced(int asked, OriginOffsetResponse held, Throwable error) {
        if (asked != generation || state != State.RESYNCING) {
            return;
        }
        if (error != null) {
            ErrorCode code = error instanceof TidemarkException e ? e.code() : ErrorCode.INTERNAL_ERROR;
            if (RefusalPolicy.afterAskRefused(code) == RefusalPolicy.Action.RECREATE_TARGET) {
                targetTopicGone(error.getMessage());
                return;
            }
            LOG.warn("{}: asking {} which origin offset it holds failed; retrying in {} ms: {}", source, target,
                    RETRY_DELAY_MS, error.getMessage());
            retryLater(asked);
            return;
        }
        long heldOrigin = held.getHeld() ? held.getOriginOffset() : OffsetMap.NONE;
        offsets.reset(heldOrigin, held.getHeld() ? held.getOffset() : OffsetMap.NONE);
        lastQueued = heldOrigin;
        LOG.info("{} -> {}: the target holds {}; copying from {}", source, target,
                held.getHeld() ? "origin offset " + heldOrigin + " at offset " + held.getOffset() : "nothing of it",
                held.getHeld() ? "source offset " + (heldOrigin + 1) : "the source's log start");
        positioner.seek(this, asked, held.getHeld() ? heldOrigin + 1 : SourcePositioner.EARLIEST);
    }

    private void retryLater(int forGeneration) {
        timers.schedule(() -> {
            synchronized (this) {
                if (forGeneration == generation) {
                    resync();
                }
            }
        }, RETRY_DELAY_MS, TimeUnit.MILLISECONDS);
    }

    /** Waits for the target topic to be made again; the copiers of the topic resync after. */
    private void targetTopicGone(String detail) {
        LOG.warn("{}: the target topic {} is gone ({}); it is created again like source topic {}, then copying "
                + "resynchronises", source, target.topic(), detail, source.topic());
        state = State.HELD;
        generation++;
        targets.targetTopicGone(this);
    }

    /** A batch written to the target, and its answer once it came. */
    private static final class Written {
        private final CopyBatch batch;
        private boolean answered;
        private ProduceResponse response;
        private Throwable error;

        private Written(CopyBatch batch) {
            this.batch = batch;
        }

        private boolean failed() {
            return answered && error != null;
        }
    }

    /** Writes batches of what is queued while the target takes more and no refusal waits to be decided. */
    private void writeNext() {
        while (state == State.COPYING && !deadLettering && !pending.isEmpty()
                && inFlight.size() < targets.maxInFlight() && inFlight.stream().noneMatch(Written::failed)) {
            boolean single = pending.peekFirst().offset() <= singleRecordsUntil;
            if (single && !inFlight.isEmpty()) {
                return;
            }
            CopyBatch batch = CopyBatch.take(pending, origin, targetCluster, maxBatchBytes,
                    single ? 1 : Integer.MAX_VALUE);
            pendingBytes -= batch.bytes();
            if (batch.skippedLoop() > 0) {
                metrics.skippedLoop(batch.skippedLoop());
            }
            if (batch.builder() == null) {
                continue;
            }
            Written written = new Written(batch);
            inFlight.addLast(written);
            int writtenIn = generation;
            targets.write(target, batch.builder()).whenComplete((response, error) -> answered(writtenIn, written,
                    response, error));
        }
    }

    private boolean idle() {
        return inFlight.isEmpty() && !deadLettering;
    }

    /** Nothing is outstanding any more: whoever {@link #hold holds} the copier may go on. */
    private void quietIfIdle() {
        if (quiet != null && idle()) {
            quiet.complete(null);
            quiet = null;
        }
    }

    private synchronized void answered(int writtenIn, Written written, ProduceResponse response, Throwable error) {
        written.answered = true;
        written.response = response;
        written.error = error;
        if (writtenIn != generation || state != State.COPYING) {
            // a batch of an older generation, or the copier stopped: nothing of them is acted on any more, also not
            // a refusal answered earlier that waited for this answer
            inFlight.removeIf(w -> w.answered);
            quietIfIdle();
            return;
        }
        settle();
    }

    /**
     * Records the stored batches at the front, in write order; a failed one at the front is decided on once every
     * batch in flight is answered.
     */
    private void settle() {
        while (!inFlight.isEmpty() && inFlight.peekFirst().answered && inFlight.peekFirst().error == null) {
            Written stored = inFlight.pollFirst();
            stored(stored.batch, stored.response);
        }
        Written first = inFlight.peekFirst();
        if (first == null || !first.answered) {
            quietIfIdle();
            writeNext();
            return;
        }
        if (inFlight.stream().allMatch(w -> w.answered)) {
            List<Written> after = new ArrayList<>(inFlight).subList(1, inFlight.size());
            inFlight.clear();
            refused(first.batch, first.error, after);
        }
    }

    /**
     * Acts on the refusal of {@code batch} by {@link RefusalPolicy}; nothing is in flight. The batches written after
     * it failed with it (the target stores none past a failed one), so their records go again behind its own when the
     * copier resends; a resync asks the target instead.
     */
    private void refused(CopyBatch batch, Throwable error, List<Written> after) {
        targets.resume(target);
        if (!(error instanceof TidemarkException e)) {
            LOG.error("{}: writing a batch to {} failed unexpectedly; resynchronising", source, target, error);
            state = State.RESYNCING;
            retryLater(generation);
            return;
        }
        switch (RefusalPolicy.afterCopyRefused(batch.records().size(), e.code(), deadLetters.isPresent())) {
            case RESYNC -> {
                metrics.heldRefusal();
                LOG.info("{}: {} already holds part of the batch from source offset {} ({}); asking where to "
                        + "continue", source, target, batch.originOffsets()[0], e.getMessage());
                resync();
            }
            case RECREATE_TARGET -> targetTopicGone(e.toString());
            case RESEND_ONE_PER_BATCH -> {
                queueAgain(after);
                resendOnePerBatch(batch, e);
                writeNext();
            }
            case DEAD_LETTER -> {
                queueAgain(after);
                deadLetter(batch.records().get(0), e);
            }
            case STOP -> {
                metrics.refused(1);
                stop(StopReason.refused(batch.originOffsets()[0], e.code(), e.getMessage()));
            }
            default -> {
                LOG.warn("{}: writing to {} failed ({}); resynchronising in {} ms", source, target, e,
                        RETRY_DELAY_MS);
                state = State.RESYNCING;
                retryLater(generation);
            }
        }
    }

    /** Puts the records of batches that failed behind a refused one back at the front of the queue, in order. */
    private void queueAgain(List<Written> batches) {
        for (int b = batches.size() - 1; b >= 0; b--) {
            CopyBatch batch = batches.get(b).batch;
            List<ConsumerRecord> records = batch.records();
            for (int i = records.size() - 1; i >= 0; i--) {
                pending.addFirst(records.get(i));
            }
            pendingBytes += batch.bytes();
        }
    }

    private void stored(CopyBatch batch, ProduceResponse response) {
        offsets.written(batch.originOffsets(), response.getBaseOffset());
        metrics.copied(batch.records().size(), batch.bytes());
        long receiveTime = response.getReceiveTimeMs();
        lastCopyReceiveTimeMs = receiveTime;
        for (ConsumerRecord record : batch.records()) {
            metrics.latency(receiveTime - record.receiveTimeMs(), receiveTime - record.sendTimeMs());
        }
    }

    /** Queues a refused batch's records again, to go one per batch and find the one refused. */
    private void resendOnePerBatch(CopyBatch batch, TidemarkException e) {
        List<ConsumerRecord> records = batch.records();
        LOG.info("{}: {} refused a batch of {} records for one of them ({}); resending them one per batch", source,
                target, records.size(), e.getMessage());
        for (int i = records.size() - 1; i >= 0; i--) {
            pending.addFirst(records.get(i));
        }
        pendingBytes += batch.bytes();
        singleRecordsUntil = records.get(records.size() - 1).offset();
    }

    /** Writes a record the target refused alone to the dead-letter topic; the partition waits for the answer. */
    private void deadLetter(ConsumerRecord record, TidemarkException refusal) {
        metrics.refused(1);
        deadLettering = true;
        int writtenIn = generation;
        targets.writeDeadLetter(deadLetters.orElseThrow(), CopyBatch.deadLetter(record, origin,
                new DeadLetterHeaders.DeadLetter(target, refusal.code(), refusal.getMessage())))
                .whenComplete((response, error) -> deadLettered(writtenIn, record, refusal, response, error));
    }

    private synchronized void deadLettered(int writtenIn, ConsumerRecord record, TidemarkException refusal,
                                           ProduceResponse response, Throwable error) {
        deadLettering = false;
        quietIfIdle();
        if (writtenIn != generation || state != State.COPYING) {
            return;
        }
        TopicPartition deadLetterPartition = deadLetters.orElseThrow();
        ErrorCode code = error == null ? null
                : error instanceof TidemarkException e ? e.code() : ErrorCode.INTERNAL_ERROR;
        RefusalPolicy.Action next = code == null ? RefusalPolicy.Action.GO_ON
                : RefusalPolicy.afterDeadLetterRefused(code);
        if (next == RefusalPolicy.Action.GO_ON) {
            lastDeadLettered = record.offset();
            metrics.deadLettered();
            LOG.warn("{}: {} refused source offset {} ({}); it is in dead-letter topic {}{}", source, target,
                    record.offset(), refusal, deadLetterPartition.topic(), response != null ? " at offset "
                            + response.getBaseOffset() : ", written there before (" + error.getMessage() + ")");
            writeNext();
        } else if (next == RefusalPolicy.Action.RESYNC_LATER) {
            LOG.warn("{}: writing source offset {} to dead-letter topic {} failed ({}); resynchronising in {} ms",
                    source, record.offset(), deadLetterPartition.topic(), error.getMessage(), RETRY_DELAY_MS);
            state = State.RESYNCING;
            retryLater(generation);
        } else {
            stop(StopReason.refused(record.offset(), code, "dead-letter topic " + deadLetterPartition.topic()
                    + " refused it too: " + error.getMessage() + "; " + target + " had refused it: " + refusal));
        }
    }

    @Override
    public String toString() {
        return source + " -> " + target;
    }
}
