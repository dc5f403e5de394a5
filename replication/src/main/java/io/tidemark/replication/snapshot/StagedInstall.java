package io.tidemark.replication.snapshot;

import io.tidemark.core.log.DurableFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;

/**
 * Where a replica copies a leader's partition log before it replaces its own, so that a copy interrupted at any
 * byte never leaves a log that looks complete. In the group's state machine directory:
 * <pre>
 * log/                  the live partition log
 * snapshot.TERM_INDEX   the live snapshots ({@link SnapshotFile})
 * install/log/          the copy under way
 * install/installed     {@link InstallManifest}: written once the copy is whole and fsynced (the commit point)
 * </pre>
 * The steps, and what a crash after each leaves:
 * <ol>
 *   <li>{@link #begin}: deletes any earlier {@code install/}, creates it empty. The copy goes to
 *       {@code install/log/}. A crash during the copy leaves {@code install/} without a manifest: the next
 *       {@link #finish} deletes it and the live log and snapshots are as before (the replica is still behind;
 *       the leader asks it again to install a snapshot).</li>
 *   <li>{@link #commit}: the copied log is closed (fsynced) by the caller, then the manifest is written
 *       atomically. From here on the install is decided.</li>
 *   <li>{@link #finish}, when the partition log is next opened (at once, when Ratis reloads the state machine,
 *       or at the next start after a crash): records the snapshot ({@link SnapshotRecorder}, idempotent), replaces
 *       {@code log/} by {@code install/log/} (delete, then one atomic rename), deletes {@code install/}. A crash
 *       anywhere in it leaves the manifest in place, so the next open runs it again: every step can be repeated,
 *       and the rename is skipped once {@code install/log/} is gone.</li>
 * </ol>
 *
 * <p>Not thread-safe: one install at a time per replica (Ratis runs at most one), and {@link #finish} only while
 * the partition log is closed.
 */
public final class StagedInstall {
    static final String DIR = "install";
    static final String LOG_DIR = "log";
    private static final Logger LOG = LoggerFactory.getLogger(StagedInstall.class);

    /** Records a finished install's snapshot where Ratis finds it; called again after a crash, so idempotent. */
    public interface SnapshotRecorder {
        void record(SnapshotDescriptor snapshot) throws IOException;
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

    /** Where the copied log goes. */
    public Path logDir() {
        return staging.resolve(LOG_DIR);
    }

    /** The commit point: the copy in {@link #logDir()}, closed and fsynced by the caller, holds {@code snapshot}. */
    public void commit(SnapshotDescriptor snapshot) throws IOException {
        if (!Files.isDirectory(logDir())) {
            throw new IOException("no copied log in " + logDir() + " to commit");
        }
        InstallManifest.write(staging, snapshot);
    }

    /**
     * Completes a committed install or discards an interrupted one; nothing when there is no staging area.
     *
     * @param liveLogDir the partition log's directory, closed
     * @return the snapshot of the install it completed
     */
    public Optional<SnapshotDescriptor> finish(Path liveLogDir, SnapshotRecorder recorder) throws IOException {
        if (!Files.exists(staging)) {
            return Optional.empty();
        }
        Optional<SnapshotDescriptor> committed = InstallManifest.read(staging);
        if (committed.isEmpty()) {
            LOG.warn("Discarding {}: a copy from the leader was interrupted before it completed; the replica keeps "
                    + "its log and will be asked again to install a snapshot", staging);
            DurableFiles.deleteTree(staging);
            DurableFiles.syncDirectory(smDir);
            return Optional.empty();
        }
        SnapshotDescriptor snapshot = committed.get();
        recorder.record(snapshot);
        if (Files.exists(logDir())) {
            DurableFiles.deleteTree(liveLogDir);
            Files.move(logDir(), liveLogDir, StandardCopyOption.ATOMIC_MOVE);
            DurableFiles.syncDirectory(smDir);
        }
        DurableFiles.deleteTree(staging);
        DurableFiles.syncDirectory(smDir);
        LOG.info("Installed the copied log in {}: offsets [{}, {}), snapshot at term {} index {}", liveLogDir,
                snapshot.logStartOffset(), snapshot.logEndOffset(), snapshot.term(), snapshot.index());
        return committed;
    }
}
