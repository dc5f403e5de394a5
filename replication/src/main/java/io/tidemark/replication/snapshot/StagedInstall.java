package io.tidemark.replication.snapshot;

import io.tidemark.core.log.DurableFiles;
import io.tidemark.proto.v1.GroupSnapshot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where a replica of a partition group copies the leader's partition logs before it replaces its own, so that a copy
 * interrupted at any byte never leaves logs that look complete. In the group's state machine directory:
 * <pre>
 * partitions/              the live partition logs, a directory each
 * snapshot.TERM_INDEX      the live snapshots ({@link GroupSnapshotFile})
 * install/partitions/      the copy under way
 * install/installed        the snapshot the copy holds ({@link GroupSnapshotFile}): written once the copy is whole
 *                          and fsynced (the commit point)
 * </pre>
 * The steps, and what a crash after each leaves:
 * <ol>
 *   <li>{@link #begin}: deletes any earlier {@code install/}, creates it empty. The copy goes to
 *       {@code install/partitions/}. A crash during the copy leaves {@code install/} without a manifest: the next
 *       {@link #finish} deletes it and the live logs and snapshots are as before (the replica is still behind;
 *       the leader asks it again to install a snapshot).</li>
 *   <li>{@link #commit}: the copied logs are closed (fsynced) by the caller, then the manifest is written
 *       atomically. From here on the install is decided.</li>
 *   <li>{@link #finish}, when the partition logs are next opened (at once, when Ratis reloads the state machine,
 *       or at the next start after a crash): records the snapshot ({@link SnapshotRecorder}, idempotent), replaces
 *       {@code partitions/} by {@code install/partitions/} (delete, then one atomic rename), deletes
 *       {@code install/}. A crash anywhere in it leaves the manifest in place, so the next open runs it again: every
 *       step can be repeated, and the rename is skipped once {@code install/partitions/} is gone.</li>
 * </ol>
 *
 * <p>Not thread-safe: one install at a time per replica (Ratis runs at most one), and {@link #finish} only while
 * the partition logs are closed.
 */
public final class StagedInstall {
    static final String DIR = "install";
    static final String MANIFEST = "installed";
    private static final Logger LOG = LoggerFactory.getLogger(StagedInstall.class);

    /** Records a finished install's snapshot where Ratis finds it; called again after a crash, so idempotent. */
    public interface SnapshotRecorder {
        void record(GroupSnapshot snapshot) throws IOException;
    }

    private final Path smDir;
    private final Path staging;

    public StagedInstall(Path smDir) {
        this.smDir = smDir;
        this.staging = smDir.resolve(DIR);
    }

    /** Starts an empty staging area; an earlier one, finished or not, is deleted. */
    public void begin() throws IOException {
        DurableFiles.deleteTree(staging);
        Files.createDirectories(staging);
        DurableFiles.syncDirectory(smDir);
    }

    /** Where the copied partition logs go, a directory each, named as in the live {@code partitions/}. */
    public Path partitionsDir() {
        return staging.resolve(PartitionDirectories.PARTITIONS);
    }

    /** The commit point: the copy in {@link #partitionsDir()}, closed and fsynced by the caller, holds {@code snapshot}. */
    public void commit(GroupSnapshot snapshot) throws IOException {
        Files.createDirectories(partitionsDir());
        DurableFiles.syncDirectory(partitionsDir());
        DurableFiles.syncDirectory(staging);
        GroupSnapshotFile.write(staging.resolve(MANIFEST), snapshot);
    }

    /**
     * Completes a committed install or discards an interrupted one; nothing when there is no staging area.
     *
     * @param livePartitionsDir the directory of the live partition logs, every one closed
     * @return the snapshot of the install it completed
     */
    public Optional<GroupSnapshot> finish(Path livePartitionsDir, SnapshotRecorder recorder) throws IOException {
        if (!Files.exists(staging)) {
            return Optional.empty();
        }
        Optional<GroupSnapshot> committed = GroupSnapshotFile.readIfWhole(staging.resolve(MANIFEST));
        if (committed.isEmpty()) {
            LOG.warn("Discarding {}: a copy from the leader was interrupted before it completed; the replica keeps "
                    + "its logs and will be asked again to install a snapshot", staging);
            DurableFiles.deleteTree(staging);
            DurableFiles.syncDirectory(smDir);
            return Optional.empty();
        }
        GroupSnapshot snapshot = committed.get();
        recorder.record(snapshot);
        if (Files.exists(partitionsDir())) {
            DurableFiles.deleteTree(livePartitionsDir);
            DurableFiles.move(partitionsDir(), livePartitionsDir);
        }
        DurableFiles.deleteTree(staging);
        DurableFiles.syncDirectory(smDir);
        LOG.info("Installed the copied partition logs in {}: {} partitions, snapshot at term {} index {}",
                livePartitionsDir, snapshot.getPartitionsCount(), snapshot.getTerm(), snapshot.getIndex());
        return committed;
    }
}
