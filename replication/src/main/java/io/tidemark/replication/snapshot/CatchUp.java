package io.tidemark.replication.snapshot;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.PartitionSnapshot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * A broker's catch-up of replicas of partition groups that fell behind their leader's purged Raft log: copies the
 * leader's latest snapshot, that is each hosted partition's log up to the snapshot's log end offset, into a
 * {@link StagedInstall} and commits it. The state machine then tells Ratis the snapshot's (term, index), and Ratis
 * reloads it, which completes the install ({@link StagedInstall#finish}), and continues with the entries after it.
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

    /**
     * One replica's install: where it copies to, how it names itself, and the config of a partition with the given
     * overrides.
     */
    public record Replica(String name, UUID groupId, StagedInstall staging,
                          Function<Map<String, String>, TopicConfig> configs, BooleanSupplier closed) {
    }

    private final SnapshotSource source;
    private final int chunkBytes;
    private final InstantSource clock;
    private final ExecutorService executor = Executors.newFixedThreadPool(THREADS,
            new ThreadFactoryBuilder().setNameFormat("tidemark-catch-up").setDaemon(true).build());

    /** @param chunkBytes how much each fetch from the leader asks for; at most the brokers' max.fetch.bytes */
    public CatchUp(SnapshotSource source, int chunkBytes, InstantSource clock) {
        this.source = source;
        this.chunkBytes = chunkBytes;
        this.clock = clock;
    }

    /**
     * Copies the latest snapshot of the group's replica on {@code leaderNodeId} into {@code replica}'s staging area
     * and commits it.
     *
     * @param firstAvailableIndex the first Raft index the leader still has
     * @return completes with the snapshot installed, or exceptionally with why not
     */
    public CompletableFuture<GroupSnapshot> install(Replica replica, int leaderNodeId, long firstAvailableIndex) {
        CompletableFuture<GroupSnapshot> installed = new CompletableFuture<>();
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

    private GroupSnapshot copy(Replica replica, int leaderNodeId, long firstAvailableIndex) throws IOException {
        GroupSnapshot snapshot = source.latestSnapshot(leaderNodeId, replica.groupId());
        if (snapshot.getIndex() + 1 < firstAvailableIndex) {
            throw new IOException("the latest snapshot of node " + leaderNodeId + " is at index " + snapshot.getIndex()
                    + " but its Raft log starts at " + firstAvailableIndex + ": the entries between would be missing");
        }
        LOG.info("{}: catching up by copying the {} partitions of node {}'s snapshot at term {} index {}",
                replica.name(), snapshot.getPartitionsCount(), leaderNodeId, snapshot.getTerm(), snapshot.getIndex());
        replica.staging().begin();
        for (PartitionSnapshot partition : snapshot.getPartitionsList()) {
            Path dir = replica.staging().partitionsDir().resolve(PartitionDirectories.name(partition.getPartition()));
            TopicConfig config = replica.configs().apply(partition.getPartition().getOverridesMap());
            SegmentCopy.Copied copied;
            try (PartitionLog copy = PartitionLog.recreate(dir, config, partition.getLogStartOffset(),
                    clock.millis())) {
                copied = SegmentCopy.run(replica.name(), source, leaderNodeId, replica.groupId(), partition, copy,
                        chunkBytes, replica.closed(), clock);
            }
            LOG.info("{}: copied {} batches, {} bytes of {}-{} [{}, {}) from node {} in {} ms", replica.name(),
                    copied.batches(), copied.bytes(), partition.getPartition().getTopic(),
                    partition.getPartition().getPartition(), partition.getLogStartOffset(),
                    partition.getLogEndOffset(), leaderNodeId, copied.elapsedMs());
        }
        replica.staging().commit(snapshot);
        LOG.info("{}: snapshot at term {} index {} ready", replica.name(), snapshot.getTerm(), snapshot.getIndex());
        return snapshot;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
