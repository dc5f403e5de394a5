package io.tidemark.core.log;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.file.DiskFaults;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.LongStream;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.bytes;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static io.tidemark.core.log.LogTestUtils.singleRecordBatch;
import static io.tidemark.core.log.LogTestUtils.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A log on a disk that fails ({@link DiskFaults}): a write on a full disk, a failed fsync, a failed read, a rename
 * that fails half way through a compaction's swap. A failed change fails the log for good (its memory may be ahead
 * of its files), it leaves no clean-shutdown marker, and the log reopened after the disk is repaired holds every
 * record written before the fault, exactly, and goes on at the right offset. A failed read fails only that read.
 */
class DiskFaultTest {
    private static final TopicConfig CONFIG = config("segment.bytes", "2000");
    private static final DiskFaults FAULTS = DiskFaults.install();
    private static final int RECORDS = 30;

    @TempDir
    Path tmp;
    private Path dir;

    @BeforeEach
    void dir() {
        dir = tmp.resolve("orders-0");
    }

    @AfterEach
    void repairDisk() {
        FAULTS.clear(tmp);
    }

    /** {@link #RECORDS} single-record batches, record i sent and received at {@code BASE_MS + i}. */
    private PartitionLog written() throws IOException {
        PartitionLog log = PartitionLog.open(dir, CONFIG, BASE_MS);
        for (int i = 0; i < RECORDS; i++) {
            log.append(singleRecordBatch(i, BASE_MS + i), BASE_MS + i);
        }
        assertTrue(log.segments().size() > 1, "more than one segment: " + log.segments().size());
        return log;
    }

    private static List<Long> offsets(PartitionLog log) {
        return readAll(log).stream().map(Record::offset).toList();
    }

    private static List<Long> upTo(int count) {
        return LongStream.range(0, count).boxed().toList();
    }

    private void assertReopensWhole(List<Long> expected) throws IOException {
        assertFalse(Files.exists(dir.resolve(PartitionLog.CLEAN_SHUTDOWN_FILE)),
                "a failed log leaves no clean-shutdown marker: its recovery must scan it");
        try (PartitionLog log = PartitionLog.open(dir, CONFIG, BASE_MS)) {
            assertEquals(expected, offsets(log));
            assertEquals(expected.size(), log.logEndOffset());
            assertEquals(expected.size(), log.append(singleRecordBatch(99, BASE_MS + 99), BASE_MS + 99)
                    .baseOffset(), "appends go on where the records before the fault end");
        }
    }

    @Test
    void anAppendOnAFullDiskFailsTheLogUntilItReopensWithEveryRecordBefore() throws IOException {
        try (PartitionLog log = written()) {
            FAULTS.fail(dir, DiskFaults.Operation.WRITE, "No space left on device");
            UncheckedIOException full = assertThrows(UncheckedIOException.class,
                    () -> log.append(singleRecordBatch(RECORDS, BASE_MS + RECORDS), BASE_MS + RECORDS));
            assertTrue(full.getMessage().startsWith("appending to " + dir + " failed: No space left on device"),
                    full.getMessage());
            assertEquals(RECORDS, log.logEndOffset(), "nothing of the batch counts");
            assertTrue(log.diskFailed());

            FAULTS.clear(dir);
            UncheckedIOException refused = assertThrows(UncheckedIOException.class,
                    () -> log.append(singleRecordBatch(RECORDS, BASE_MS + RECORDS), BASE_MS + RECORDS));
            assertTrue(refused.getMessage().startsWith("the log " + dir + " takes no more changes since a disk error"
                    + " (No space left on device"), refused.getMessage());
            assertEquals(upTo(RECORDS), offsets(log), "what it held stays readable");
        }
        assertReopensWhole(upTo(RECORDS));
    }

    @Test
    void aFailedWriteBackFailsTheSegmentsNextFlush() throws IOException {
        try (PartitionLog log = written()) {
            FAULTS.fail(dir, DiskFaults.Operation.FSYNC, "Input/output error");
            IOException failed = assertThrows(IOException.class, () -> log.writeBack(1));
            assertTrue(failed.getMessage().startsWith("Input/output error (FSYNC of " + dir.toAbsolutePath()),
                    failed.getMessage());
            FAULTS.clear(dir);
            assertFalse(log.diskFailed(), "a write-back is no change of the log: appends go on");
            UncheckedIOException flush = assertThrows(UncheckedIOException.class, () -> log.flush(BASE_MS + 100));
            assertTrue(flush.getMessage().startsWith("flushing " + dir + " failed: an fsync of "), flush.getMessage());
        }
        assertReopensWhole(upTo(RECORDS));
    }

    @Test
    void noFlushSucceedsAfterAFailedFsyncEvenOnceTheDiskAnswersAgain() throws IOException {
        try (PartitionLog log = written()) {
            FAULTS.fail(dir, DiskFaults.Operation.FSYNC, "Input/output error");
            UncheckedIOException failed = assertThrows(UncheckedIOException.class, () -> log.flush(BASE_MS + 100));
            assertTrue(failed.getMessage().startsWith("flushing " + dir + " failed: Input/output error"),
                    failed.getMessage());
            FAULTS.clear(dir);
            assertThrows(UncheckedIOException.class, () -> log.flushUnlessClosed(BASE_MS + 200),
                    "the pages whose write-back failed may be gone; an fsync that now succeeds proves nothing");
            assertThrows(UncheckedIOException.class, () -> log.flush(BASE_MS + 200));
        }
        assertReopensWhole(upTo(RECORDS));
    }

    @Test
    void aFailedReadFailsThatReadOnly() throws IOException {
        try (PartitionLog log = written()) {
            FAULTS.fail(dir, DiskFaults.Operation.READ, "Input/output error");
            UncheckedIOException failed = assertThrows(UncheckedIOException.class, () -> log.read(0, 1000));
            assertTrue(failed.getMessage().contains("Input/output error"), failed.getMessage());
            FAULTS.clear(dir);
            assertEquals(upTo(RECORDS), offsets(log));
            assertFalse(log.diskFailed());
            assertEquals(RECORDS, log.append(singleRecordBatch(RECORDS, BASE_MS + RECORDS), BASE_MS + RECORDS)
                    .baseOffset());
        }
    }

    @Test
    void aFileReplacedWholeKeepsItsOldContentWhenTheRenameFails() throws IOException {
        Files.createDirectories(dir);
        RecoveryPointFile.write(dir, 7);
        FAULTS.fail(dir, DiskFaults.Operation.RENAME, "Input/output error");
        assertThrows(IOException.class, () -> RecoveryPointFile.write(dir, 8));
        FAULTS.clear(dir);
        assertEquals(OptionalLong.of(7), RecoveryPointFile.read(dir));
    }

    @Test
    void aCompactionWhoseSwapFailsHalfWayFailsTheLogAndReopensWithEveryRecord() throws IOException {
        TopicConfig compacted = config("cleanup.policy", "compact", "segment.bytes", "100");
        List<String> written;
        try (PartitionLog log = PartitionLog.open(dir, compacted, BASE_MS)) {
            String[] keys = {"a", "b", "a", "c", "b", "a", "d"};
            for (int i = 0; i < keys.length; i++) {
                log.append(new RecordBatchBuilder().append(BASE_MS + i, bytes(keys[i]), bytes(keys[i] + i)).build(),
                        BASE_MS + 1000L * i);
            }
            written = contents(log);
            Path stagedLog = LogCompactor.stagingDir(dir).resolve("00000000000000000000.log");
            FAULTS.fail(stagedLog, DiskFaults.Operation.RENAME, "Input/output error");
            LogCompactor compactor = new LogCompactor(-1, new MetricRegistry());
            UncheckedIOException failed = assertThrows(UncheckedIOException.class,
                    () -> compactor.compact(log, BASE_MS + 10_000, Long.MAX_VALUE));
            assertTrue(failed.getMessage().startsWith("swapping the compacted segment at offset 0 into " + dir
                    + " failed: Input/output error"), failed.getMessage());
            assertTrue(log.diskFailed());
            FAULTS.clear(tmp);
            assertThrows(UncheckedIOException.class, () -> log.append(singleRecordBatch(7, BASE_MS + 7),
                    BASE_MS + 7000));
        }
        try (PartitionLog log = PartitionLog.open(dir, compacted, BASE_MS)) {
            assertEquals(written, contents(log), "the swap stopped before the switch: the segment is as it was");
            assertEquals(7, log.logEndOffset());
        }
    }

    private static List<String> contents(PartitionLog log) {
        return readAll(log).stream().map(r -> r.offset() + ":" + text(r.key()) + "=" + text(r.value())).toList();
    }
}
