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
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Copies one source partition into the same partition of the target topic, exactly once.
 * <ol>
 *   <li><b>Resync</b>: asks the target partition's leader which origin offset it holds of this origin partition
 *       (OriginOffset) and has the source read from the next one ({@link SourcePositioner}), of the source topic of
 *       the origin's id only. No state of its own: after a crash, a restart, or a batch of unknown fate, the target
 *       says where to continue.</li>
 *   <li><b>Copy</b>: queues the records read ({@link #offer}) and writes them as mirrored batches
 *       ({@link CopyBatch}), one batch outstanding at a time. The next batch goes when the last is stored, so a
 *       refused batch is never passed by a later one (a partition takes a batch that skips origin offsets, since
 *       the source's retention may remove records before they are read; see the OriginOffsetTable of broker-core).</li>
 *   <li>A batch the target already holds (ORIGIN_OFFSET_HELD: another mirror copied it, or a resend of unknown fate
 *       was stored after all) sends the copier back to resync; so does one whose outcome is unknown after the
 *       writer's retries. A batch refused for one of its records (a SendTime outside the target's window, a record
 *       too large) is resent one record per batch, and the record refused alone is dropped, logged and counted.</li>
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
    /** Wait before asking the target again after a failed resync or a failed write. */
    static final long RETRY_DELAY_MS = 1_000;
    private static final Set<ErrorCode> RECORD_ERRORS = EnumSet.of(ErrorCode.INVALID_TIMESTAMP,
            ErrorCode.RECORD_TOO_LARGE, ErrorCode.CORRUPT_BATCH);

    private enum State { RESYNCING, COPYING, STOPPED }

    private final TopicPartition source;
    private final TopicPartition target;
    private final OriginPartition origin;
    private final String targetCluster;
    private final int maxBatchBytes;
    private final TargetPartitions targets;
    private final SourcePositioner positioner;
    private final ScheduledExecutorService timers;
    private final MirrorMetrics metrics;
    private final OffsetMap offsets = new OffsetMap(OFFSET_MAP_BATCHES);
    private final ArrayDeque<ConsumerRecord> pending = new ArrayDeque<>();
    private final List<Gap> gaps = new ArrayList<>();

    private State state = State.RESYNCING;
    private int generation;
    private long pendingBytes;
    private boolean writing;
    /** Highest source offset queued or held; records at or below it are not queued again. */
    private long lastQueued = OffsetMap.NONE;
    /** After a batch was refused for one of its records: one record per batch up to this source offset. */
    private long singleRecordsUntil = OffsetMap.NONE;
    private long sourceLogEndOffset = OffsetMap.NONE;

    /** @param origin the source partition copied: the source cluster's name, the topic's name and id, the partition */
    public PartitionCopier(OriginPartition origin, TopicPartition target, String targetCluster, int maxBatchBytes,
                           TargetPartitions targets, SourcePositioner positioner, ScheduledExecutorService timers,
                           MirrorMetrics metrics) {
        this.source = new TopicPartition(origin.topic(), origin.partition());
        this.target = target;
        this.origin = origin;
        this.targetCluster = targetCluster;
        this.maxBatchBytes = maxBatchBytes;
        this.targets = targets;
        this.positioner = positioner;
        this.timers = timers;
        this.metrics = metrics;
        metrics.lagGauge(source.topic(), source.partition(), this::lagRecords);
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

    public synchronized void stop() {
        state = State.STOPPED;
        pending.clear();
        pendingBytes = 0;
    }

    /** Whether the copier takes records now (it is not resynchronising or stopped). */
    public synchronized boolean copying() {
        return state == State.COPYING;
    }

    /** Bytes of source records queued and not yet in a batch: the source thread pauses the partition above a limit. */
    public synchronized long backlogBytes() {
        return pendingBytes;
    }

    /** The source thread moved the reading position as asked with {@code forGeneration}. */
    public synchronized void positioned(int forGeneration) {
        if (forGeneration == generation && state == State.RESYNCING) {
            state = State.COPYING;
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
     * @param records            records the source has past the last one the target holds; 0 until the log end is
     *                           known
     * @param sourceLogEndOffset the source's log end offset it is measured from, {@link OffsetMap#NONE} until known
     */
    public record Lag(long records, long sourceLogEndOffset) {
    }

    public synchronized Lag lag() {
        long records = sourceLogEndOffset == OffsetMap.NONE ? 0 : Math.max(0, sourceLogEndOffset
                - (offsets.lastOriginOffset() + 1));
        return new Lag(records, sourceLogEndOffset);
    }

    /** {@link Lag#records} of {@link #lag}. */
    public long lagRecords() {
        return lag().records();
    }

    @Override
    public synchronized OffsetMap.Translation translate(long committed) {
        return offsets.translate(committed);
    }

    private void resync() {
        if (state == State.STOPPED) {
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

    /** Writes the next batch when none is outstanding. */
    private void writeNext() {
        while (state == State.COPYING && !writing && !pending.isEmpty()) {
            boolean single = pending.peekFirst().offset() <= singleRecordsUntil;
            CopyBatch batch = CopyBatch.take(pending, origin, targetCluster, maxBatchBytes,
                    single ? 1 : Integer.MAX_VALUE);
            pendingBytes -= batch.bytes();
            if (batch.skippedLoop() > 0) {
                metrics.skippedLoop(batch.skippedLoop());
            }
            if (batch.builder() == null) {
                continue;
            }
            writing = true;
            int writtenIn = generation;
            targets.write(target, batch.builder()).whenComplete((response, error) -> written(writtenIn, batch,
                    response, error));
        }
    }

    private synchronized void written(int writtenIn, CopyBatch batch, ProduceResponse response, Throwable error) {
        if (writtenIn != generation || state != State.COPYING) {
            return;
        }
        writing = false;
        if (error == null) {
            stored(batch, response);
        } else if (!(error instanceof TidemarkException e)) {
            LOG.error("{}: writing a batch to {} failed unexpectedly; resynchronising", source, target, error);
            state = State.RESYNCING;
            retryLater(generation);
            return;
        } else if (e.code() == ErrorCode.ORIGIN_OFFSET_HELD) {
            metrics.heldRefusal();
            LOG.info("{}: {} already holds part of the batch from source offset {} ({}); asking where to continue",
                    source, target, batch.originOffsets()[0], e.getMessage());
            resync();
            return;
        } else if (RECORD_ERRORS.contains(e.code())) {
            refusedForARecord(batch, e);
        } else {
            LOG.warn("{}: writing to {} failed ({}); resynchronising in {} ms", source, target, e, RETRY_DELAY_MS);
            state = State.RESYNCING;
            retryLater(generation);
            return;
        }
        writeNext();
    }

    private void stored(CopyBatch batch, ProduceResponse response) {
        offsets.written(batch.originOffsets(), response.getBaseOffset());
        metrics.copied(batch.records().size(), batch.bytes());
        long receiveTime = response.getReceiveTimeMs();
        for (ConsumerRecord record : batch.records()) {
            metrics.latency(receiveTime - record.receiveTimeMs(), receiveTime - record.sendTimeMs());
        }
    }

    /** Resends a batch's records one per batch; drops a record refused alone. */
    private void refusedForARecord(CopyBatch batch, TidemarkException e) {
        List<ConsumerRecord> records = batch.records();
        if (records.size() > 1) {
            LOG.info("{}: {} refused a batch of {} records for one of them ({}); resending them one per batch",
                    source, target, records.size(), e.getMessage());
            for (int i = records.size() - 1; i >= 0; i--) {
                pending.addFirst(records.get(i));
            }
            pendingBytes += batch.bytes();
            singleRecordsUntil = records.get(records.size() - 1).offset();
            return;
        }
        metrics.refused(1);
        LOG.error("{}: {} refused source offset {}, which is not copied: {}", source, target,
                records.get(0).offset(), e.toString());
    }

    @Override
    public String toString() {
        return source + " -> " + target;
    }
}
