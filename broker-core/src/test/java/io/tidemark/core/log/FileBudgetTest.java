package io.tidemark.core.log;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.file.OpenFileCache;
import io.tidemark.core.log.segment.LogSegment;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchReader;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static io.tidemark.core.log.LogTestUtils.singleRecordBatch;
import static io.tidemark.core.log.LogTestUtils.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A log keeps working with far fewer open files than segments ({@code log.open.files.max}): reads, appends, time
 * lookups, retention, truncation and crash recovery, alone and with readers racing the appender, while the process
 * never holds more segment files or index maps than the budget allows (checked in {@code /proc/self}, not only in
 * the cache's own count).
 */
class FileBudgetTest {
    /** Single-record batches are about 80 bytes: four or five a segment, an index entry every other batch. */
    private static final TopicConfig CONFIG = config("segment.bytes", "400", "index.interval.bytes", "100");
    private static final int BUDGET = 2;
    private static final int RECORDS = 300;

    @TempDir(factory = MemoryTempDirFactory.class)
    Path tmp;
    private Path dir;
    private OpenFileCache files;

    @BeforeEach
    void setUp() {
        ProcessFiles.assumeProc();
        dir = tmp.resolve("log");
        files = new OpenFileCache(BUDGET);
    }

    private static long time(long offset) {
        return BASE_MS + offset * 1000;
    }

    private void append(PartitionLog log, int from, int to) {
        for (int i = from; i < to; i++) {
            log.append(singleRecordBatch(i, time(i)), time(i));
            assertTrue(files.openFiles() <= BUDGET, "open after append " + i + ": " + files.openFiles());
        }
    }

    /** Every record is there with its value, and both lookups find each record by its time exactly. */
    private static void assertHolds(PartitionLog log, long from, long to) {
        List<Record> records = readAll(log);
        assertEquals(to - from, records.size());
        for (Record record : records) {
            long offset = record.offset();
            assertEquals("value-" + offset, text(record.value()));
            TimeLookup expected = new TimeLookup.Found(offset, time(offset), time(offset));
            assertEquals(expected, log.lookupByReceiveTime(time(offset)));
            assertEquals(expected, log.lookupBySendTime(time(offset)));
            assertEquals(expected, log.lookupByReceiveTime(time(offset) - 999));
        }
        assertEquals(from, records.get(0).offset());
        assertEquals(new TimeLookup.NotFound(to), log.lookupByReceiveTime(time(to)));
    }

    /** The process holds exactly the files the cache counts, and at most three index maps each. */
    private void assertProcessHoldsTheBudget() throws IOException {
        assertEquals(files.openFiles(), ProcessFiles.openFiles(dir, LogSegment.LOG_SUFFIX));
        assertTrue(files.openFiles() <= BUDGET, "open: " + files.openFiles());
        assertTrue(ProcessFiles.maps(dir) <= 3L * BUDGET, "maps: " + ProcessFiles.maps(dir));
    }

    @Test
    void aLogOfManySegmentsIsReadAndAppendedToThroughTwoOpenFiles() throws IOException {
        try (PartitionLog log = PartitionLog.open(dir, CONFIG, files, BASE_MS)) {
            assertEquals(0, files.openFiles(), "an empty log opens no file");
            append(log, 0, RECORDS);
            assertTrue(log.segments().size() >= 60, "segments: " + log.segments().size());
            assertHolds(log, 0, RECORDS);
            assertProcessHoldsTheBudget();
            assertTrue(files.evictions() > log.segments().size(), "evictions: " + files.evictions());
        }
        assertEquals(0, files.openFiles(), "a closed log holds no file");
        assertEquals(0, ProcessFiles.openFiles(dir, LogSegment.LOG_SUFFIX));
        assertEquals(0, ProcessFiles.maps(dir), "every index map is gone");
        try (PartitionLog reopened = PartitionLog.open(dir, CONFIG, files, BASE_MS)) {
            assertHolds(reopened, 0, RECORDS);
            append(reopened, RECORDS, RECORDS + 10);
            assertHolds(reopened, 0, RECORDS + 10);
            assertProcessHoldsTheBudget();
        }
    }

    @Test
    void theActiveSegmentIsOpenedAgainOnlyAfterItWasEvicted() throws IOException {
        OpenFileCache one = new OpenFileCache(1);
        try (PartitionLog a = PartitionLog.open(tmp.resolve("a"), config(), one, BASE_MS);
             PartitionLog b = PartitionLog.open(tmp.resolve("b"), config(), one, BASE_MS)) {
            for (int i = 0; i < 10; i++) {
                a.append(singleRecordBatch(i, time(i)), time(i));
            }
            assertEquals(1, one.openFiles());
            assertEquals(0, one.evictions(), "appends to an open segment open nothing");
            for (int i = 0; i < 10; i++) {
                b.append(singleRecordBatch(i, time(i)), time(i));
                a.append(singleRecordBatch(10 + i, time(10 + i)), time(10 + i));
            }
            assertEquals(20, one.evictions(), "each append evicted the other log's segment: one open per batch");
            b.flush(time(20));
            assertEquals(21, one.evictions(), "the flush opened b's evicted segment again");
            assertEquals(10, RecoveryPointFile.read(tmp.resolve("b")).orElseThrow(),
                    "the flush moved the recovery point over what was appended before the evictions");
            assertEquals(20, readAll(a).size());
            assertEquals(10, readAll(b).size());
        }
        assertEquals(0, one.openFiles());
    }

    @Test
    void readersAndTheAppenderGetTheRightBytesWhileFilesAreEvictedUnderThem() throws Exception {
        int readers = 4;
        int appended = 1000;
        ExecutorService pool = Executors.newFixedThreadPool(readers + 1);
        TopicConfig fewerRolls = config("segment.bytes", "2000", "index.interval.bytes", "100");
        try (PartitionLog log = PartitionLog.open(dir, fewerRolls, files, BASE_MS)) {
            append(log, 0, 100);
            AtomicBoolean appending = new AtomicBoolean(true);
            // The appender starts once every reader has read: a reader started after it ended read nothing.
            CountDownLatch readersReading = new CountDownLatch(readers);
            Future<?> appender = pool.submit(() -> {
                try {
                    assertTrue(readersReading.await(60, TimeUnit.SECONDS), "every reader started");
                    append(log, 100, 100 + appended);
                    return null;
                } finally {
                    appending.set(false);
                }
            });
            List<Future<Integer>> reads = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                Random random = new Random(r);
                reads.add(pool.submit(() -> readWhile(log, appending, readersReading, random)));
            }
            appender.get(60, TimeUnit.SECONDS);
            for (Future<Integer> read : reads) {
                assertTrue(read.get(60, TimeUnit.SECONDS) > 0, "each reader read");
            }
            assertTrue(files.waits() > 0, "five threads took turns with two files");
            assertHolds(log, 0, 100 + appended);
            assertProcessHoldsTheBudget();
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Reads and looks up random offsets until the appender is done, checking every byte read, and counts {@code first}
     * down after its first read; returns the reads.
     */
    private int readWhile(PartitionLog log, AtomicBoolean appending, CountDownLatch first, Random random) {
        RecordBatchReader reader = new RecordBatchReader();
        int reads = 0;
        do {
            long offset = random.nextLong(log.logEndOffset());
            List<Record> records = reader.records(log.read(offset, 300).batches());
            assertEquals(offset, records.stream().filter(r -> r.offset() >= offset).findFirst().orElseThrow()
                    .offset());
            for (Record record : records) {
                assertEquals("value-" + record.offset(), text(record.value()));
                assertEquals(time(record.offset()), record.receiveTimeMs());
            }
            assertEquals(new TimeLookup.Found(offset, time(offset), time(offset)),
                    log.lookupByReceiveTime(time(offset)));
            assertTrue(files.openFiles() <= BUDGET, "open: " + files.openFiles());
            if (reads++ == 0) {
                first.countDown();
            }
        } while (appending.get());
        return reads;
    }

    @Test
    void retentionAndTruncationWorkThroughTwoOpenFiles() throws IOException {
        try (PartitionLog log = PartitionLog.open(dir, CONFIG, files, BASE_MS)) {
            append(log, 0, RECORDS);
            log.truncateTo(log.segments().get(40).baseOffset() + 1);
            long end = log.logEndOffset();
            assertHolds(log, 0, end);
            append(log, (int) end, RECORDS);
            assertHolds(log, 0, RECORDS);
            long kept = log.segments().get(30).baseOffset();
            RetentionResult deleted = log.deleteExpiredSegments(time(RECORDS) + TopicConfig.defaults().retentionMs(),
                    kept);
            assertEquals(30, deleted.deletedSegments());
            assertHolds(log, kept, RECORDS);
            assertProcessHoldsTheBudget();
            assertEquals(0, ProcessFiles.openFiles(dir, "(deleted)"), "no descriptor of a deleted file is left");
        }
    }

    @Test
    void aCrashedLogIsRecoveredThroughTwoOpenFiles() throws IOException {
        PartitionLog crashed = PartitionLog.open(dir, CONFIG, files, BASE_MS);
        try {
            append(crashed, 0, RECORDS);
            Path copy = tmp.resolve("crashed");
            copyTree(dir, copy);
            Files.delete(copy.resolve(RecoveryPointFile.NAME));
            long lastBase = crashed.segments().get(crashed.segments().size() - 1).baseOffset();
            Files.write(LogSegment.file(copy, lastBase, LogSegment.LOG_SUFFIX), new byte[] {0, 0, 0, 7},
                    StandardOpenOption.APPEND);
            try (PartitionLog recovered = PartitionLog.open(copy, CONFIG, files, BASE_MS)) {
                assertTrue(files.openFiles() <= BUDGET, "open: " + files.openFiles());
                assertEquals(crashed.segments(), recovered.segments(), "recovery kept every segment whole");
                assertHolds(recovered, 0, RECORDS);
                assertEquals(RECORDS, recovered.append(singleRecordBatch(RECORDS, time(RECORDS)), time(RECORDS))
                        .baseOffset());
            }
        } finally {
            crashed.close();
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> list = Files.list(from)) {
            for (Path file : list.toList()) {
                Files.copy(file, to.resolve(file.getFileName()));
            }
        }
    }
}
