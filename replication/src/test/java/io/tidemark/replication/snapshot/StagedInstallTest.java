package io.tidemark.replication.snapshot;

import io.tidemark.proto.v1.GroupSnapshot;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** A staged install after a crash at each step: an uncommitted copy is discarded, a committed one completed. */
class StagedInstallTest {
    private static final GroupSnapshot SNAPSHOT = GroupSnapshot.newBuilder().setTerm(4).setIndex(900).build();

    @TempDir
    Path smDir;
    private Path liveLog;
    private StagedInstall staging;
    private final List<GroupSnapshot> recorded = new ArrayList<>();

    @BeforeEach
    void liveLog() throws IOException {
        liveLog = Files.createDirectories(smDir.resolve("partitions"));
        Files.writeString(liveLog.resolve("00000000000000000000.log"), "the old log");
        staging = new StagedInstall(smDir);
    }

    private void copy() throws IOException {
        staging.begin();
        Files.createDirectories(staging.partitionsDir());
        Files.writeString(staging.partitionsDir().resolve("00000000000000000100.log"), "the copy");
    }

    private Optional<GroupSnapshot> finish() throws IOException {
        return staging.finish(liveLog, recorded::add);
    }

    private String liveFiles() throws IOException {
        try (var files = Files.list(liveLog)) {
            return files.map(f -> f.getFileName() + "=" + read(f)).sorted().toList().toString();
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void nothingStagedChangesNothing() throws IOException {
        assertEquals(Optional.empty(), finish());
        assertEquals("[00000000000000000000.log=the old log]", liveFiles());
    }

    @Test
    void aCopyInterruptedBeforeItsCommitIsDiscardedAndTheOldLogKept() throws IOException {
        copy();
        assertEquals(Optional.empty(), finish());
        assertEquals("[00000000000000000000.log=the old log]", liveFiles());
        assertEquals(List.of(), recorded, "no snapshot recorded");
        assertFalse(Files.exists(smDir.resolve("install")));
    }

    @Test
    void aCommittedCopyReplacesTheLogAndRecordsItsSnapshot() throws IOException {
        copy();
        staging.commit(SNAPSHOT);
        assertEquals(Optional.of(SNAPSHOT), finish());
        assertEquals("[00000000000000000100.log=the copy]", liveFiles());
        assertEquals(List.of(SNAPSHOT), recorded);
        assertFalse(Files.exists(smDir.resolve("install")));
        assertEquals(Optional.empty(), finish(), "done once");
    }

    @Test
    void aCrashWhileTheOldLogWasBeingDeletedIsCompletedAtTheNextOpen() throws IOException {
        copy();
        staging.commit(SNAPSHOT);
        Files.delete(liveLog.resolve("00000000000000000000.log"));
        assertEquals(Optional.of(SNAPSHOT), finish());
        assertEquals("[00000000000000000100.log=the copy]", liveFiles());
    }

    @Test
    void aCrashAfterTheRenameKeepsTheCopyAndRecordsTheSnapshotAgain() throws IOException {
        copy();
        staging.commit(SNAPSHOT);
        recorded.add(SNAPSHOT);
        Files.delete(liveLog.resolve("00000000000000000000.log"));
        Files.delete(liveLog);
        Files.move(staging.partitionsDir(), liveLog);
        assertEquals(Optional.of(SNAPSHOT), finish());
        assertEquals("[00000000000000000100.log=the copy]", liveFiles(), "the live log is the copy, not deleted");
        assertEquals(List.of(SNAPSHOT, SNAPSHOT), recorded, "recording is repeated, and idempotent");
    }

    @Test
    void aNewInstallStartsFromAnEmptyStagingArea() throws IOException {
        copy();
        staging.begin();
        assertFalse(Files.exists(staging.partitionsDir()), "the earlier copy was deleted");
        staging.commit(SNAPSHOT);
        assertEquals(Optional.of(SNAPSHOT), finish());
        assertEquals("[]", liveFiles(), "a group that hosts no partition installs none");
    }
}
