package io.tidemark.core.log.file;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The open-file bound: eviction order, leases, retirement, waiting, resizing. */
class OpenFileCacheTest {
    /** A cached "file" that records whether it was closed, and how often. */
    private static final class FakeFile extends CachedFile {
        private final String name;
        private int closes;

        FakeFile(OpenFileCache cache, String name) {
            super(cache);
            this.name = name;
        }

        @Override
        protected synchronized void closeFiles() {
            closes++;
        }

        synchronized int closes() {
            return closes;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static FakeFile openAndRelease(OpenFileCache cache, String name) throws IOException {
        FakeFile file = cache.open(() -> new FakeFile(cache, name));
        file.close();
        return file;
    }

    @Test
    void theCacheNeverHoldsMoreThanItsCapacityAndEvictsTheFileUsedLeastRecently() throws IOException {
        OpenFileCache cache = new OpenFileCache(3);
        FakeFile a = openAndRelease(cache, "a");
        FakeFile b = openAndRelease(cache, "b");
        FakeFile c = openAndRelease(cache, "c");
        assertEquals(3, cache.openFiles());
        assertTrue(a.tryRetain(), "a is used again, so b is the least recently used");
        a.close();
        FakeFile d = openAndRelease(cache, "d");
        assertEquals(3, cache.openFiles());
        assertEquals(1, cache.evictions());
        assertEquals(List.of(0, 1, 0, 0), List.of(a.closes(), b.closes(), c.closes(), d.closes()));
        assertFalse(b.tryRetain(), "an evicted file takes no lease: its owner opens it again");
        assertTrue(a.tryRetain());
        a.close();
    }

    @Test
    void aLeasedFileIsNeverEvictedAndAFullCacheWaitsForALeaseToEnd() throws Exception {
        OpenFileCache cache = new OpenFileCache(2);
        FakeFile a = cache.open(() -> new FakeFile(cache, "a"));
        FakeFile b = cache.open(() -> new FakeFile(cache, "b"));
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try {
            Future<FakeFile> c = executor.submit(() -> openAndRelease(cache, "c"));
            await().atMost(10, TimeUnit.SECONDS).until(() -> cache.waits() == 1);
            assertFalse(c.isDone(), "both files are leased");
            assertEquals(List.of(0, 0), List.of(a.closes(), b.closes()));
            b.close();
            FakeFile opened = c.get(10, TimeUnit.SECONDS);
            assertEquals(List.of(0, 1, 0), List.of(a.closes(), b.closes(), opened.closes()));
            assertEquals(2, cache.openFiles());
            a.close();
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void aRetiredFileClosesWhenItsLastLeaseEndsAndCountsAsOpenUntilThen() throws IOException {
        OpenFileCache cache = new OpenFileCache(4);
        FakeFile idle = openAndRelease(cache, "idle");
        FakeFile leased = cache.open(() -> new FakeFile(cache, "leased"));
        assertTrue(leased.tryRetain(), "a second lease");
        cache.retire(idle);
        cache.retire(leased);
        assertEquals(1, idle.closes(), "no lease: closed at once");
        assertEquals(0, leased.closes());
        assertEquals(1, cache.openFiles());
        assertFalse(leased.tryRetain(), "a retired file takes no new lease");
        leased.close();
        assertEquals(0, leased.closes());
        leased.close();
        assertEquals(1, leased.closes(), "closed by its last lease");
        assertEquals(0, cache.openFiles());
        cache.retire(leased);
        assertEquals(1, leased.closes(), "retiring twice does nothing");
        assertThrows(IllegalStateException.class, leased::close, "a lease ended twice is a programmer error");
    }

    @Test
    void shrinkingClosesUnleasedFilesDownToTheNewCapacity() throws IOException {
        OpenFileCache cache = new OpenFileCache(5);
        List<FakeFile> files = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            files.add(openAndRelease(cache, "f" + i));
        }
        FakeFile leased = files.get(0);
        assertTrue(leased.tryRetain());
        cache.resize(2);
        assertEquals(2, cache.capacity());
        assertEquals(2, cache.openFiles());
        assertEquals(0, leased.closes(), "the leased file stays");
        assertEquals(2, files.stream().mapToInt(FakeFile::closes).sum());
        assertEquals(2, cache.evictions());
        leased.close();
    }

    @Test
    void aFileThatFailsToOpenGivesItsRoomBack() throws IOException {
        OpenFileCache cache = new OpenFileCache(1);
        IOException failure = assertThrows(IOException.class, () -> cache.open(() -> {
            throw new IOException("no such file");
        }));
        assertEquals("no such file", failure.getMessage());
        assertEquals(0, cache.openFiles());
        FakeFile opened = openAndRelease(cache, "after");
        assertEquals(1, cache.openFiles());
        assertEquals(0, opened.closes());
    }

    @Test
    void aThreadInterruptedWhileWaitingGetsAnInterruptedIoException() throws Exception {
        OpenFileCache cache = new OpenFileCache(1);
        FakeFile held = cache.open(() -> new FakeFile(cache, "held"));
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                cache.open(() -> new FakeFile(cache, "never"));
                failure.complete(null);
            } catch (IOException e) {
                failure.complete(e);
            }
        });
        waiter.start();
        await().atMost(10, TimeUnit.SECONDS).until(() -> cache.waits() == 1);
        waiter.interrupt();
        Throwable thrown = failure.get(10, TimeUnit.SECONDS);
        assertSame(InterruptedIOException.class, thrown.getClass());
        assertEquals("interrupted while waiting for one of the 1 open files (log.open.files.max) to be given back",
                thrown.getMessage());
        assertEquals(1, cache.openFiles());
        held.close();
    }
}
