package io.tidemark.replication.raft;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A group's Raft log directory as Ratis names its files (closed segments {@code log_FIRST-LAST}, the open one
 * {@code log_inprogress_FIRST}): what a snapshot links into the trash, and what a sweep deletes.
 */
class RaftLogTrashTest {
    @TempDir
    Path storage;
    private Path current;
    private Path trash;

    @BeforeEach
    void writeTheLog() throws IOException {
        Path group = storage.resolve("02511d4b-3c4d-3e5f-8a9b-0c1d2e3f4a5b");
        current = Files.createDirectories(group.resolve("current"));
        trash = group.resolve("trash");
        for (String segment : List.of("log_0-99", "log_100-199", "log_200-299", "log_inprogress_300")) {
            Files.writeString(current.resolve(segment), "entries of " + segment);
        }
    }

    private static List<String> names(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(file -> file.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aSnapshotLinksTheClosedSegmentsUpToItsIndexOnly() throws IOException {
        RaftLogTrash.linkPurgeable(current, 250);

        assertEquals(List.of("log_0-99", "log_100-199"), names(trash), "the segments a purge up to 250 may delete");
        assertArrayEquals(Files.readAllBytes(current.resolve("log_100-199")),
                Files.readAllBytes(trash.resolve("log_100-199")));
        assertEquals(2, Files.getAttribute(current.resolve("log_0-99"), "unix:nlink"), "a second name, not a copy");
    }

    @Test
    void aLaterSnapshotLinksWhatTheEarlierOneDidNot() throws IOException {
        RaftLogTrash.linkPurgeable(current, 150);
        RaftLogTrash.linkPurgeable(current, 299);

        assertEquals(List.of("log_0-99", "log_100-199", "log_200-299"), names(trash));
    }

    @Test
    void aSweepDeletesTheLinksOfTheSegmentsRatisDeletedAndKeepsTheOthers() throws IOException {
        RaftLogTrash.linkPurgeable(current, 299);
        // Ratis' purge up to 199.
        Files.delete(current.resolve("log_0-99"));
        Files.delete(current.resolve("log_100-199"));

        RaftLogTrash trashes = new RaftLogTrash(storage);
        assertEquals(2, trashes.sweep(), "links deleted");
        assertEquals(List.of("log_200-299"), names(trash));
        assertEquals(List.of("log_200-299", "log_inprogress_300"), names(current));
        assertEquals(0, trashes.sweep(), "nothing more until Ratis deletes log_200-299");
    }

    @Test
    void aSweepOfStorageWithoutTrashDeletesNothing() throws IOException {
        assertEquals(0, new RaftLogTrash(storage).sweep());
        assertEquals(0, new RaftLogTrash(storage.resolve("not-yet-created")).sweep());
        assertEquals(List.of("log_0-99", "log_100-199", "log_200-299", "log_inprogress_300"), names(current));
    }
}
