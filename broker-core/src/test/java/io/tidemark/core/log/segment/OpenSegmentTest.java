package io.tidemark.core.log.segment;

import io.tidemark.core.log.file.OpenFileCache;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What an eviction does to a segment's log file: writes no fsync covered yet are fsynced before the descriptor
 * closes, and a failure of that fsync fails every later flush of the segment, since the data it covered may be lost.
 */
class OpenSegmentTest {
    @TempDir
    Path dir;
    /** Room for one segment: opening {@link #other} evicts {@link #files}. */
    private final OpenFileCache cache = new OpenFileCache(1);
    private SegmentFiles files;
    private SegmentFiles other;

    @BeforeEach
    void setUp() throws IOException {
        SegmentSettings settings = new SegmentSettings(4096, 1 << 20, 1 << 20, cache);
        files = SegmentFiles.create(dir, 0, settings);
        other = SegmentFiles.create(dir, 100, settings);
    }

    @AfterEach
    void tearDown() {
        files.close();
        other.close();
    }

    /** Opens the segment's files through {@code channel} into the cache, leased, as {@link SegmentFiles} does. */
    private OpenSegment open(RecordingChannel channel) throws IOException {
        return cache.open(() -> new OpenSegment(cache, files, channel, files.offsetIndex(), files.receiveTimeIndex(),
                files.sendTimeIndex()));
    }

    private RecordingChannel channel(Optional<IOException> forceFailure) throws IOException {
        return new RecordingChannel(FileChannel.open(files.logFile(), StandardOpenOption.READ,
                StandardOpenOption.WRITE), forceFailure);
    }

    private static void write(OpenSegment open, long position) throws IOException {
        open.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), position);
    }

    private void evict() throws IOException {
        other.acquire().close();
        assertEquals(1, cache.evictions());
    }

    @Test
    void writesNoFsyncCoveredAreFsyncedBeforeAnEvictionClosesTheFile() throws IOException {
        RecordingChannel channel = channel(Optional.empty());
        try (OpenSegment open = open(channel)) {
            write(open, 0);
            open.force();
            write(open, 3);
        }
        evict();
        assertEquals(List.of("write", "force", "write", "force", "close"), channel.calls());
    }

    @Test
    void aFileFsyncedSinceItsLastWriteOrOnlyReadIsClosedWithoutAnotherFsync() throws IOException {
        RecordingChannel channel = channel(Optional.empty());
        try (OpenSegment open = open(channel)) {
            write(open, 0);
            open.truncate(2);
            open.readFully(ByteBuffer.allocate(2), 0);
        }
        evict();
        assertEquals(List.of("write", "truncate", "force", "close"), channel.calls());
    }

    @Test
    void anFsyncThatFailsAtCloseFailsEveryLaterFlushOfTheSegment() throws IOException {
        IOException failure = new IOException("disk on fire");
        RecordingChannel channel = channel(Optional.of(failure));
        try (OpenSegment open = open(channel)) {
            write(open, 0);
        }
        evict();
        assertEquals(List.of("write", "force", "close"), channel.calls());
        for (int flush = 0; flush < 2; flush++) {
            IOException thrown = assertThrows(IOException.class, files::flush);
            assertEquals("an fsync of " + files.logFile() + " failed (disk on fire), so batches written before it "
                    + "may be lost: no flush of the segment succeeds after that", thrown.getMessage());
            assertSame(failure, thrown.getCause());
        }
        assertEquals(1, cache.evictions(), "a failing flush opens nothing");
    }
}
