package io.tidemark.replication.snapshot;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.partition.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;

/**
 * A broker's catch-up of partition replicas that fell behind their leader's purged Raft log: copies the leader's
 * latest snapshot, that is its partition log up to the snapshot's log end offset, into a {@link StagedInstall}
 * and commits it. The state machine then tells Ratis the snapshot's (term, index), and Ratis reloads it, which
 * completes the install ({@link StagedInstall#finish}), and continues with the entries after it.
 *
 * <p>The leader's snapshot must reach the first entry its Raft log still has ({@code snapshot index + 1 >= first
 * available index}), else the entries between would be missing: the copy then fails and Ratis asks again (the
 * leader's next snapshot will reach it). A copy that fails for any other reason (the leader stopped, retention
 * deleted a segment under the copy, a batch arrived damaged) fails the same way and starts over from the beginning
 * the next time: it never resumes a staging area it did not commit.
 *
 * <p>Copies run on their own threads, at most {@value #THREADS} at a time per broker, never on Ratis' threads.
 */
public final class CatchUp implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(CatchUp.class);
    private static final int THREADS = 2;

    /** One replica's install: where it copies to and how it names itself. */
    public record Replica(String name, TopicPartition partition, TopicConfig config, StagedInstall staging,
                          BooleanSupplier closed) {
    }

    private final SnapshotSource source;
    private final int chunkBytes;
    private final InstantSource clock;
    private final ExecutorService executor = Executors.newFixedThreadPool(THREADS, r -> {
        Thread thread = new Thread(r, "tidemark-catch-up");
        thread.setDaemon(true);
        return thread;
    });

    /** @param chunkBytes how much each fetch from the leader asks for; at most the brokers' max.fetch.bytes */
    public CatchUp(SnapshotSource source, int chunkBytes, InstantSource clock) {
        this.source = source;
        this.chunkBytes = chunkBytes;
        this.clock = clock;
    }

    /**
     * Copies the latest snapshot of the replica on {@code leaderNodeId} into {@code replica}'s staging area and
     * commits it.
     *
     * @param firstAvailableIndex the first Raft index the leader still has
     * @return completes with the snapshot installed, or exceptionally with why not
     */
    public CompletableFuture<SnapshotDescriptor> install(Replica replica, int leaderNodeId, long firstAvailableIndex) {
        CompletableFuture<SnapshotDescriptor> installed = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    installed.complete(copy(replica, leaderNodeId, firstAvailableIndex));
                } catch (IOException | RuntimeException e) {
                    LOG.warn("{}: catching up from node {} failed; it starts over when the leader asks again: {}",
                            replica.name(), leaderNodeId, e.toString());
                    installed.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            installed.completeExceptionally(new IOException("the broker is stopping", e));
        }
        return installed;
    }

    private SnapshotDescriptor copy(Replica replica, int leaderNodeId, long firstAvailableIndex) throws IOException {
        SnapshotDescriptor snapshot = source.latestSnapshot(leaderNodeId, replica.partition());
        if (snapshot.index() + 1 < firstAvailableIndex) {
            throw new IOException("the latest snapshot of node " + leaderNodeId + " is at index " + snapshot.index()
                    + " but its Raft log starts at " + firstAvailableIndex + ": the entries between would be missing");
        }
        LOG.info("{}: catching up by copying offsets [{}, {}) of {} from node {} (its snapshot at term {} index {})",
                replica.name(), snapshot.logStartOffset(), snapshot.logEndOffset(), replica.partition(), leaderNodeId,
                snapshot.term(), snapshot.index());
        replica.staging().begin();
        SegmentCopy.Copied copied;
        try (PartitionLog copy = PartitionLog.recreate(replica.staging().logDir(), replica.config(),
                snapshot.logStartOffset(), clock.millis())) {
            copied = SegmentCopy.run(replica.name(), source, leaderNodeId, replica.partition(), snapshot, copy,
                    chunkBytes, replica.closed(), clock);
        }
        replica.staging().commit(snapshot);
        LOG.info("{}: copied {} batches, {} bytes of {} from node {} in {} ms; snapshot at term {} index {} ready",
                replica.name(), copied.batches(), copied.bytes(), replica.partition(), leaderNodeId,
                copied.elapsedMs(), snapshot.term(), snapshot.index());
        return snapshot;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
