package io.tidemark.core.partition;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.log.BatchAdmission;
import io.tidemark.core.log.HeldOrigin;
import io.tidemark.core.log.LogCompactor;
import io.tidemark.core.log.LogReadResult;
import io.tidemark.core.log.LogTestUtils;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.SegmentInfo;
import io.tidemark.core.log.TimeLookup;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.OriginPartition;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A test's partition on one node, over a local {@link PartitionLog}: this node leads it and it is its only replica
 * (brokers run every partition in a partition group, even alone; the service adapter's tests use this one, the
 * group layer's run on the production partition, replication's {@code OneReplicaGroup}).
 * Admits each batch ({@link BatchAdmission}) with the topic's config, then stamps ReceiveTime as
 * {@code max(clock, last ReceiveTime)} under the log's append order, so a clock stepped back (NTP, a VM migration)
 * never makes ReceiveTime decrease. Everything appended is readable at once: the
 * high watermark is the log end offset.
 *
 * <p>Thread-safe: appends are serialized here (stamping and appending are one step), reads go to the log
 * without a lock.
 */
public final class LocalPartition implements Partition {
    private final TopicPartition id;
    private final int nodeId;
    private final PartitionLog log;
    private final InstantSource clock;
    private final Object appendLock = new Object();
    private final ThreadLocal<BatchAdmission> admissions = ThreadLocal.withInitial(BatchAdmission::new);
    private final AppendWaiters appendWaiters = new AppendWaiters();

    private LocalPartition(TopicPartition id, int nodeId, PartitionLog log, InstantSource clock) {
        this.id = id;
        this.nodeId = nodeId;
        this.log = log;
        this.clock = clock;
    }

    public static LocalPartition open(TopicPartition id, int nodeId, Path dir, TopicConfig config, InstantSource clock)
            throws IOException {
        return new LocalPartition(id, nodeId, PartitionLog.open(dir, config, clock.millis()), clock);
    }

    /** Takes a topic's new configuration, as a partition group's log gives it to its partitions. */
    public void reconfigure(TopicConfig config) {
        log.updateConfig(config);
    }

    @Override
    public TopicPartition id() {
        return id;
    }

    @Override
    public CompletableFuture<AppendResult> append(ByteBuffer batch) {
        AppendResult result;
        try {
            ByteBuffer writable = ByteBuffer.allocate(batch.remaining()).put(batch.duplicate()).flip();
            BatchAdmission admission = admissions.get();
            TopicConfig config = log.config();
            BatchAdmission.Admitted admitted = admission.admit(writable, config, LogTestUtils.NO_ENTRY_LIMIT);
            synchronized (appendLock) {
                long receiveTimeMs = Math.max(clock.millis(), log.lastReceiveTimeMs().orElse(0));
                admission.checkSendTimes(writable, admitted, config, receiveTimeMs);
                result = log.append(writable, receiveTimeMs);
            }
        } catch (TidemarkException e) {
            return CompletableFuture.failedFuture(e);
        }
        appendWaiters.wake();
        return CompletableFuture.completedFuture(result);
    }

    /** A single broker's partition: always readable. */
    @Override
    public void checkClientReadable() {
    }

    @Override
    public LogReadResult read(long offset, int maxBytes) {
        return log.read(offset, maxBytes);
    }

    @Override
    public LogReadResult readCommitted(long offset, int maxBytes) {
        return log.readCommitted(offset, maxBytes);
    }

    @Override
    public long highWatermark() {
        return log.logEndOffset();
    }

    @Override
    public long lastStableOffset() {
        return log.lastStableOffset();
    }

    @Override
    public long logStartOffset() {
        return log.logStartOffset();
    }

    @Override
    public long logEndOffset() {
        return log.logEndOffset();
    }

    @Override
    public TimeLookup lookupByReceiveTime(long receiveTimeMs) {
        return log.lookupByReceiveTime(receiveTimeMs);
    }

    @Override
    public TimeLookup lookupBySendTime(long sendTimeMs) {
        return log.lookupBySendTime(sendTimeMs);
    }

    @Override
    public Optional<HeldOrigin> heldOrigin(OriginPartition origin) {
        return log.heldOrigin(origin);
    }

    @Override
    public AppendWaiters.Waiter awaitAppend(Runnable onAppend) {
        return appendWaiters.await(onAppend);
    }

    /** How many wait for the next append: none once every long poll on the partition answered. */
    public int appendWaiters() {
        return appendWaiters.waiting();
    }

    @Override
    public PartitionStatus status() {
        List<SegmentInfo> segments = log.segments();
        long size = segments.stream().mapToLong(SegmentInfo::sizeBytes).sum();
        return new PartitionStatus(new PartitionLeader(nodeId, 1), List.of(nodeId), log.logStartOffset(),
                log.logEndOffset(), size,
                segments.size(), log.lastReceiveTimeMs().orElse(-1), "", Optional.empty());
    }

    @Override
    public void applyRetention(long nowMs) {
        log.deleteExpiredSegments(nowMs);
    }

    @Override
    public void compact(long nowMs, LogCompactor compactor) throws IOException {
        compactor.compact(log, nowMs, Long.MAX_VALUE);
    }

    @Override
    public void flushIfDue(long nowMs) {
        log.maybeFlush(nowMs);
    }

    @Override
    public boolean writeBack(long minBytes) {
        try {
            return log.writeBack(minBytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws IOException {
        log.close();
        appendWaiters.wake();
    }
}
