package io.tidemark.replication.raft;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Takes the deletion of purged Raft log segments off Ratis' log workers. Ratis purges a group's log after a snapshot
 * by deleting its closed segment files on the group's log worker, the thread that also writes and flushes the group's
 * entries; freeing a 32 MiB segment took 70-100 ms there under load (the kernel frees its pages and extents on the
 * unlink), so a purge of 8 segments held the group's appends for 0.6 s. Every replica of a group snapshots at about
 * the same index, so both followers stopped answering at once and the leader stepped down (seen in a warm cluster at
 * 4,000 records/s, once per group every 10,000 entries).
 *
 * <p>So before a state machine tells Ratis a snapshot index (which Ratis purges up to), {@link #linkPurgeable} gives
 * every closed segment up to that index a second name, a hard link in the group's {@code trash/} directory beside
 * {@code current/}: Ratis' delete then only removes a name. The broker's maintenance threads ({@link #sweepEvery})
 * delete each trash link whose segment Ratis deleted, which frees the file, every {@value #SWEEP_INTERVAL_MS} ms. A
 * link whose segment is still there is kept: deleting it would cost nothing, but the segment would then be freed on
 * the log worker again. After a crash, the sweep at start deletes what Ratis purged before it; a link is never read.
 */
public final class RaftLogTrash {
    private static final Logger LOG = LoggerFactory.getLogger(RaftLogTrash.class);
    /** Beside Ratis' {@code current/} and {@code sm/} in a group's directory. */
    static final String TRASH_DIR = "trash";
    static final long SWEEP_INTERVAL_MS = 1_000;

    private final Path storageDir;

    RaftLogTrash(Path storageDir) {
        this.storageDir = storageDir;
    }

    /**
     * Sweeps the groups under Ratis' storage directory ({@code GROUP-UUID/trash/}) on {@code executor}, at once and
     * then every {@value #SWEEP_INTERVAL_MS} ms until it shuts down.
     */
    public static void sweepEvery(ScheduledExecutorService executor, Path storageDir) {
        RaftLogTrash trash = new RaftLogTrash(storageDir);
        executor.scheduleWithFixedDelay(trash::sweepLogged, 0, SWEEP_INTERVAL_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * Links every closed segment of a group's log that ends at or before {@code index} into the group's trash, so that
     * Ratis' purge up to {@code index} only removes their names.
     *
     * @param currentDir the group's Raft log directory ({@code GROUP-UUID/current/})
     */
    public static void linkPurgeable(Path currentDir, long index) throws IOException {
        Path trash = currentDir.resolveSibling(TRASH_DIR);
        for (RaftLogCheck.Segment segment : RaftLogCheck.segments(currentDir)) {
            if (segment.open() || segment.lastIndex() > index) {
                continue;
            }
            Files.createDirectories(trash);
            try {
                Files.createLink(trash.resolve(segment.file().getFileName()), segment.file());
            } catch (FileAlreadyExistsException | NoSuchFileException e) {
                // Linked at an earlier snapshot, or purged meanwhile.
            }
        }
    }

    /** A sweep whose failure is logged: a scheduled task that throws is never run again. */
    private void sweepLogged() {
        try {
            sweep();
        } catch (IOException | RuntimeException e) {
            LOG.warn("Could not delete the purged Raft log segments under {}; trying again in {} ms", storageDir,
                    SWEEP_INTERVAL_MS, e);
        }
    }

    /** Deletes every trash link whose segment Ratis deleted; answers how many. */
    int sweep() throws IOException {
        if (!Files.isDirectory(storageDir)) {
            return 0;
        }
        int deleted = 0;
        try (DirectoryStream<Path> groups = Files.newDirectoryStream(storageDir)) {
            for (Path group : groups) {
                Path trash = group.resolve(TRASH_DIR);
                if (Files.isDirectory(trash)) {
                    deleted += sweep(trash, group.resolve(RaftLogCheck.CURRENT_DIR));
                }
            }
        }
        return deleted;
    }

    private static int sweep(Path trash, Path currentDir) throws IOException {
        int deleted = 0;
        try (DirectoryStream<Path> links = Files.newDirectoryStream(trash)) {
            for (Path link : links) {
                if (!Files.exists(currentDir.resolve(link.getFileName()))) {
                    deleted += Files.deleteIfExists(link) ? 1 : 0;
                }
            }
        } catch (NoSuchFileException e) {
            // The group's directory was deleted with the group.
        }
        return deleted;
    }
}
