package io.tidemark.replication.cluster;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupChangeReply;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.proto.v1.PartitionEnd;
import io.tidemark.proto.v1.PartitionReassignment;
import io.tidemark.proto.v1.PartitionState;
import io.tidemark.proto.v1.ReadPartitionResponse;
import io.tidemark.replication.partition.KnownLeaders;
import io.tidemark.replication.partition.MoveTarget;
import io.tidemark.replication.snapshot.SnapshotSource;
import io.tidemark.replication.statemachine.GroupEntryFormat;
import io.tidemark.replication.statemachine.HostedPartition;
import io.tidemark.replication.statemachine.PartitionKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Moves a partition into a partition group of other replicas, keeping its offsets and ReceiveTimes; run by the
 * leader of the group it moves into, which already imports it (added empty and importing,
 * {@link PartitionReplicas}). In this order:
 * <ol>
 *   <li><b>Copy</b>: read the partition's batches from a replica of the group it leaves
 *       ({@code ReplicaService.ReadPartition}, the leader's first) and submit them to the new group as copied
 *       batches ({@link GroupEntryFormat#copy}), which every replica appends as they are. The old group keeps taking
 *       produce meanwhile.</li>
 *   <li><b>Seal</b>, once the copy has caught up: a partition change in the old group seals the partition; from that
 *       entry on its batches are refused (NOT_AVAILABLE, which clients retry) and its log ends where it is.</li>
 *   <li>Copy the batches that came in before the seal, up to the sealed end.</li>
 *   <li><b>Release</b>: a partition change in the old group releases the partition at the end the copy reached; a
 *       released partition never takes a batch there again. Refused when the old group unsealed it meanwhile (or
 *       sealed it again at another end): the move then goes on from the copy, and seals again.</li>
 *   <li><b>Activate</b>: a partition change in the new group makes the partition live there with its log ending at
 *       the sealed end, if the copy ends where the mover found nothing more to read in the sealed source (at the
 *       sealed end, or before it where the source's last offsets were compacted away: the copy skips them too, so
 *       no offset is given twice). Only a released partition is activated.</li>
 *   <li><b>Complete</b>: the metadata group makes the target the partition's replicas and the new group its group
 *       ({@code complete_reassignment}); brokers send its clients to the new group's leader, and the old group's
 *       leader removes it.</li>
 * </ol>
 * Produce to the partition waits (retries) only from the seal to the completion: a few Raft rounds. When the new
 * group cannot finish (it lost its majority after the seal), the old group's leader unseals the partition after
 * {@link PartitionSeals#MAX_SEALED_MS} ({@link PartitionSeals}), so it takes batches there again until the move can
 * go on; the release is what makes that safe: the old group decides, in its log, whether a partition is unsealed or
 * released, never both. Once released, the move only finishes: the partition waits for the new group. Every step can be
 * repeated and reads its progress from the groups' own state (the copy's log end, the partition's state in each
 * group), so a move interrupted by a crash, a leader change or a failed call is taken up by the new group's leader
 * at its next reconcile, from where it stopped. The copy starts again from the old log's start when retention there
 * removed what it had not reached.
 *
 * <p>Not thread-safe: one run at a time per partition ({@link PartitionReplicas} keeps it so), on a thread of its own.
 */
final class PartitionMove {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionMove.class);
    /** How long one call of a move (a read, an entry) may take. */
    static final long CALL_TIMEOUT_MS = 30_000;
    private static final long PROGRESS_LOG_INTERVAL_MS = 5_000;
    /**
     * How long to wait before reading a replica again that has not caught up with the seal yet, or that showed a seal
     * the old group no longer holds.
     */
    private static final long LAGGING_REPLICA_WAIT_MS = 50;

    /** Changes the old group (seals or releases the partition), and answers the group's reply. */
    @FunctionalInterface
    interface Sealer {
        GroupChangeReply change(UUID group, List<Integer> replicas, GroupChange change) throws IOException;
    }

    private final MoveTarget into;
    private final PartitionReplicas.Incoming incoming;
    private final PartitionKey key;
    private final String name;
    private final SnapshotSource sources;
    private final KnownLeaders leaders;
    private final Sealer sealer;
    private final LongSupplier metadataIndex;
    private final Consumer<MetadataCommand> metadata;
    private final int chunkBytes;
    private final InstantSource clock;
    private int source;

    /**
     * @param into          the group the partition moves into, whose leader this broker is
     * @param metadataIndex the index of the last metadata entry this broker applied, which its changes carry
     * @param metadata      submits a metadata command: the move's completion
     * @param chunkBytes    the most one copy entry carries: its batches are whole
     */
    PartitionMove(MoveTarget into, PartitionReplicas.Incoming incoming, SnapshotSource sources, KnownLeaders leaders,
                  Sealer sealer, LongSupplier metadataIndex, Consumer<MetadataCommand> metadata, int chunkBytes,
                  InstantSource clock) {
        this.into = into;
        this.incoming = incoming;
        this.key = PartitionKey.of(incoming.partition());
        this.name = incoming.partition().getTopic() + "-" + incoming.partition().getPartition();
        this.sources = sources;
        this.leaders = leaders;
        this.sealer = sealer;
        this.metadataIndex = metadataIndex;
        this.metadata = metadata;
        this.chunkBytes = chunkBytes;
        this.clock = clock;
    }

    /**
     * Carries the move as far as it goes: to its completion, or until this broker no longer leads the group, the
     * partition is no longer imported here, or a step fails (logged; the next reconcile runs the move again).
     */
    void run() {
        try {
            long startMs = clock.millis();
            long progressLoggedMs = startMs;
            long sealedAtMs = -1;
            while (into.leads()) {
                Optional<HostedPartition> hosted = into.host().partition(key);
                if (hosted.isEmpty()) {
                    return;
                }
                if (hosted.get().state() == PartitionState.PARTITION_LIVE) {
                    complete();
                    return;
                }
                long end = hosted.get().log().logEndOffset();
                ReadPartitionResponse read = read(end);
                if (!read.getBatches().isEmpty() || read.getLogStartOffset() > end) {
                    copy(read, end);
                    if (clock.millis() - progressLoggedMs >= PROGRESS_LOG_INTERVAL_MS) {
                        progressLoggedMs = clock.millis();
                        LOG.info("Moving {} into {}: copied up to offset {} of {} in {} ms", name, into,
                                into.host().partition(key).map(p -> p.log().logEndOffset()).orElse(-1L),
                                read.getLogEndOffset(), progressLoggedMs - startMs);
                    }
                } else if (read.getState() == PartitionState.PARTITION_RELEASED
                        || read.getState() == PartitionState.PARTITION_SEALED) {
                    if (read.getState() == PartitionState.PARTITION_RELEASED || release(read.getLogEndOffset())) {
                        activate(end, read.getLogEndOffset());
                    } else {
                        nextSource();
                        TimeUnit.MILLISECONDS.sleep(LAGGING_REPLICA_WAIT_MS);
                    }
                } else if (sealedAtMs < 0 || clock.millis() - sealedAtMs > PartitionSeals.MAX_SEALED_MS) {
                    seal();
                    sealedAtMs = clock.millis();
                } else {
                    nextSource();
                    TimeUnit.MILLISECONDS.sleep(LAGGING_REPLICA_WAIT_MS);
                }
            }
            LOG.info("The move of {} into {} stops here: this broker no longer leads the group", name, into);
        } catch (InterruptedException | InterruptedIOException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            LOG.warn("The move of {} into {} paused; it goes on at the group's next reconcile: {}", name, into,
                    e.toString());
        }
    }

    /** Reads from the old group's replicas in turn, its leader first; the first that answers. */
    private ReadPartitionResponse read(long offset) throws IOException {
        List<Integer> replicas = sourceOrder();
        TidemarkException last = null;
        for (int i = 0; i < replicas.size(); i++) {
            int node = replicas.get((source + i) % replicas.size());
            try {
                ReadPartitionResponse read = sources.read(node, incoming.fromGroup(), incoming.partition(), offset,
                        chunkBytes);
                source = (source + i) % replicas.size();
                return read;
            } catch (TidemarkException e) {
                last = e;
            }
        }
        throw new IOException("no replica of " + name + " in group " + incoming.fromGroup() + " on nodes "
                + incoming.fromReplicas() + " answered a read at offset " + offset + ": " + last.getMessage(), last);
    }

    /** The old group's replicas, the one the cluster says leads it first. */
    private List<Integer> sourceOrder() {
        List<Integer> replicas = new ArrayList<>(incoming.fromReplicas());
        int leader = leaders.leaderOf(incoming.fromGroup()).nodeId();
        if (replicas.remove(Integer.valueOf(leader))) {
            replicas.add(0, leader);
        }
        return replicas;
    }

    private void nextSource() {
        source++;
    }

    /** Submits what was read as copied batches, cut to whole batches within the entry's limit. */
    private void copy(ReadPartitionResponse read, long end) throws IOException, InterruptedException {
        GroupEntryFormat.CopyOutcome outcome = await(into.submitCopy(key, read.getLogStartOffset(),
                wholeBatchesWithin(read.getBatches().asReadOnlyByteBuffer(), chunkBytes)), "copy into");
        if (outcome.refused() != null) {
            throw new IOException("the copy of " + name + " at offset " + end + " was refused: "
                    + outcome.refused().getMessage(), outcome.refused());
        }
    }

    /** The first whole batches of {@code batches} that fit in {@code maxBytes}; at least the first. */
    static ByteBuffer wholeBatchesWithin(ByteBuffer batches, int maxBytes) {
        int start = batches.position();
        int at = start;
        while (at < batches.limit() && batches.limit() - at >= RecordBatchFormat.LOG_OVERHEAD_BYTES) {
            int size = RecordBatchFormat.totalSize(batches, at);
            if (at > start && at + size - start > maxBytes) {
                break;
            }
            at = Math.min(batches.limit(), at + size);
        }
        return batches.duplicate().position(start).limit(at);
    }

    /** Seals the partition in its old group. */
    private void seal() throws IOException {
        GroupChangeReply reply = sealer.change(incoming.fromGroup(), incoming.fromReplicas(), GroupChange.newBuilder()
                .addSeal(incoming.partition()).setMetadataIndex(metadataIndex.getAsLong()).build());
        for (PartitionEnd sealed : reply.getSealedList()) {
            if (PartitionKey.of(sealed.getPartition()).equals(key)) {
                LOG.info("Sealed {} in group {} at offset {} to move it into {}", name, incoming.fromGroup(),
                        sealed.getLogEndOffset(), into);
                return;
            }
        }
        throw new IOException("group " + incoming.fromGroup() + " does not host " + name + " any more, or imports it");
    }

    /**
     * Releases the sealed partition to the group it moves into, at {@code sealedEnd}; false when the old group no
     * longer holds it sealed there (it unsealed it, or sealed it again at another end): the copy goes on.
     */
    private boolean release(long sealedEnd) throws IOException {
        GroupChangeReply reply = sealer.change(incoming.fromGroup(), incoming.fromReplicas(), GroupChange.newBuilder()
                .addRelease(PartitionEnd.newBuilder().setPartition(incoming.partition()).setLogEndOffset(sealedEnd))
                .setMetadataIndex(metadataIndex.getAsLong()).build());
        for (PartitionEnd released : reply.getReleasedList()) {
            if (PartitionKey.of(released.getPartition()).equals(key)) {
                LOG.info("Released {} in group {} at offset {} to move it into {}", name, incoming.fromGroup(),
                        sealedEnd, into);
                return true;
            }
        }
        LOG.info("Group {} no longer holds {} sealed at offset {}: the move into {} goes on", incoming.fromGroup(),
                name, sealedEnd, into);
        return false;
    }

    /**
     * Activates the copy, which ends at {@code copiedEnd} with nothing more to read from the sealed source, whose log
     * ends at {@code sealedEnd}: the offsets between were compacted away there, and the copy skips them too, so the
     * first record produced after the move takes the offset after every offset the partition ever gave.
     */
    private void activate(long copiedEnd, long sealedEnd) throws IOException, InterruptedException {
        await(into.submitChange(GroupChange.newBuilder().addActivate(PartitionEnd.newBuilder()
                .setPartition(incoming.partition()).setLogEndOffset(sealedEnd).setCopiedEndOffset(copiedEnd))
                .setMetadataIndex(metadataIndex.getAsLong()).build()), "activate in");
    }

    private void complete() {
        metadata.accept(MetadataCommand.newBuilder().setCompleteReassignment(PartitionReassignment.newBuilder()
                .setTopic(incoming.partition().getTopic()).setPartition(incoming.partition().getPartition())
                .addAllReplicaNodeIds(incoming.target())).build());
        LOG.info("Moved {} into {} on nodes {}", name, into, incoming.target());
    }

    private <T> T await(CompletableFuture<T> future, String what) throws IOException, InterruptedException {
        try {
            return future.get(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IOException("could not " + what + " " + into + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("no answer in " + CALL_TIMEOUT_MS + " ms to " + what + " " + into, e);
        }
    }
}
