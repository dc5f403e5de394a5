package io.tidemark.core.log;

import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.index.IndexFile;
import io.tidemark.core.log.index.OffsetIndex;
import io.tidemark.core.log.index.TimeIndex;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.core.log.segment.LogSegment;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.stream.Stream;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Crash recovery, tested by damaging real files: truncating a segment at byte positions, flipping bytes,
 * deleting and mangling indexes, and abandoning a log without closing it. After each, the log reopens with
 * every record before the damage intact, indexes equal to those of an undamaged log of the same records,
 * exact lookups, and appends that continue at the right offset.
 */
class CrashRecoveryTest {
    private static final TopicConfig CONFIG = config("segment.bytes", "1500", "index.interval.bytes", "100",
            "segment.index.bytes", "1200");

    @TempDir
    Path tmp;
    private Path pristine;
    private List<Record> records;
    private final List<BatchAt> batches = new ArrayList<>();
    private List<String> pristineIndexEntries;

    /** Where a batch of the pristine log lies: its segment, byte range in it and first offset. */
    private record BatchAt(long segmentBase, long start, long end, long baseOffset) {
    }

    @BeforeEach
    void writePristineLog() throws IOException {
        pristine = tmp.resolve("pristine");
        try (PartitionLog log = PartitionLog.open(pristine, CONFIG, BASE_MS)) {
            writeBatches(log, 60, 60);
            records = readAll(log);
            assertTrue(log.segments().size() >= 4, "several segments: " + log.segments().size());
        }
        pristineIndexEntries = indexEntries(pristine);
    }

    /** Appends {@code count} seeded random batches, flushing after {@code flushAfter} of them. */
    private void writeBatches(PartitionLog log, int count, int flushAfter) {
        Random random = new Random(42);
        batches.clear();
        for (int b = 0; b < count; b++) {
            RecordBatchBuilder builder = new RecordBatchBuilder();
            int recordCount = 1 + random.nextInt(3);
            for (int r = 0; r < recordCount; r++) {
                builder.append(BASE_MS + random.nextInt(100_000), LogTestUtils.bytes("k" + b),
                        new byte[random.nextInt(60)]);
            }
            int segmentsBefore = log.segments().size();
            long sizeBefore = log.segments().get(segmentsBefore - 1).sizeBytes();
            long baseOffset = log.append(builder.build(), BASE_MS + b * 100L).baseOffset();
            SegmentInfo last = log.segments().get(log.segments().size() - 1);
            long start = log.segments().size() == segmentsBefore ? sizeBefore : 0;
            batches.add(new BatchAt(last.baseOffset(), start, last.sizeBytes(), baseOffset));
            if (b + 1 == flushAfter) {
                log.flush(BASE_MS);
            }
        }
    }

    @Test
    void truncatedAtManyPositionsOfTheLastSegment() throws IOException {
        long lastSegment = lastSegmentBase();
        long size = Files.size(logFile(pristine, lastSegment));
        for (long cut : damagePositions(lastSegment, size)) {
            Path dir = crashCopy("cut-" + cut);
            truncate(logFile(dir, lastSegment), cut);
            assertRecoversTo(dir, firstBatchEndingAfter(lastSegment, cut), "cut at " + cut);
            deleteTree(dir);
        }
    }

    @Test
    void truncatedInsideAnEarlierSegmentDropsEverythingAfterTheDamage() throws IOException {
        long second = batches.stream().map(BatchAt::segmentBase).distinct().toList().get(1);
        long size = Files.size(logFile(pristine, second));
        for (long cut : new long[] {0, 1, size / 2, size - 1}) {
            Path dir = crashCopy("middle-" + cut);
            truncate(logFile(dir, second), cut);
            assertRecoversTo(dir, firstBatchEndingAfter(second, cut), "second segment cut at " + cut);
            deleteTree(dir);
        }
    }

    @Test
    void flippedBytesInTheTailDropTheBatchAndWhatFollows() throws IOException {
        long lastSegment = lastSegmentBase();
        long size = Files.size(logFile(pristine, lastSegment));
        for (long position : damagePositions(lastSegment, size)) {
            Path dir = crashCopy("flip-" + position);
            try (RandomAccessFile file = new RandomAccessFile(logFile(dir, lastSegment).toFile(), "rw")) {
                file.seek(position);
                int b = file.read();
                file.seek(position);
                file.write(b ^ 0xFF);
            }
            assertRecoversTo(dir, firstBatchEndingAfter(lastSegment, position), "flip at " + position);
            deleteTree(dir);
        }
    }

    @Test
    void missingShortAndGarbageIndexesAreRebuiltAfterCleanShutdown() throws IOException {
        Path dir = tmp.resolve("indexes");
        copyTree(pristine, dir);
        List<Long> bases = batches.stream().map(BatchAt::segmentBase).distinct().toList();
        Files.delete(LogSegment.file(dir, bases.get(0), OffsetIndex.SUFFIX));
        Path timeIndex = LogSegment.file(dir, bases.get(1), TimeIndex.RECEIVE_TIME_SUFFIX);
        truncate(timeIndex, Files.size(timeIndex) - 5);
        Path sendIndex = LogSegment.file(dir, bases.get(2), TimeIndex.SEND_TIME_SUFFIX);
        byte[] garbage = Files.readAllBytes(sendIndex);
        garbage[0] ^= 0x7F;
        Files.write(sendIndex, garbage);
        Files.write(LogSegment.file(dir, lastSegmentBase(), OffsetIndex.SUFFIX), new byte[0]);
        assertTrue(Files.exists(dir.resolve(PartitionLog.CLEAN_SHUTDOWN_FILE)));
        assertRecoversTo(dir, records.size(), "damaged indexes");
    }

    @Test
    void abandonedLogWithoutCloseKeepsEveryAppendedRecord() throws IOException {
        Path dir = tmp.resolve("abandoned");
        PartitionLog abandoned = PartitionLog.open(dir, CONFIG, BASE_MS);
        try {
            writeBatches(abandoned, 60, 30);
            Path copy = tmp.resolve("abandoned-copy");
            copyTree(dir, copy);
            assertTrue(Files.notExists(copy.resolve(PartitionLog.CLEAN_SHUTDOWN_FILE)));
            assertRecoversTo(copy, records.size(), "abandoned with a recovery point in the middle");
        } finally {
            abandoned.close();
        }
    }

    /**
     * Byte positions to damage a segment at: every byte of the first batch header, the two bytes on each side
     * of every batch boundary, and every 7th byte between (each iteration fsyncs several files, so not all).
     */
    private List<Long> damagePositions(long segmentBase, long size) {
        TreeSet<Long> positions = new TreeSet<>();
        for (long p = 0; p < size; p++) {
            if (p < RecordBatchFormat.HEADER_SIZE_BYTES || p % 7 == 0) {
                positions.add(p);
            }
        }
        for (BatchAt batch : batches) {
            if (batch.segmentBase() == segmentBase) {
                for (long p = batch.end() - 2; p <= batch.end() + 1; p++) {
                    if (p >= 0 && p < size) {
                        positions.add(p);
                    }
                }
            }
        }
        return new ArrayList<>(positions);
    }

    private long lastSegmentBase() {
        return batches.get(batches.size() - 1).segmentBase();
    }

    /** Base offset of the first batch in the segment that ends after {@code position}: what damage there loses. */
    private long firstBatchEndingAfter(long segmentBase, long position) {
        for (BatchAt batch : batches) {
            if (batch.segmentBase() == segmentBase && batch.end() > position) {
                return batch.baseOffset();
            }
        }
        throw new IllegalArgumentException("no batch of segment " + segmentBase + " ends after " + position);
    }

    private static void truncate(Path file, long length) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(length);
        }
    }

    private void assertRecoversTo(Path dir, long expectedEnd, String what) throws IOException {
        try (PartitionLog log = PartitionLog.open(dir, CONFIG, BASE_MS)) {
            assertEquals(expectedEnd, log.logEndOffset(), what);
            assertEquals(records.subList(0, (int) expectedEnd), readAll(log), what);
            for (Record r : records.subList(0, (int) expectedEnd)) {
                TimeLookup byReceiveTime = log.lookupByReceiveTime(r.receiveTimeMs());
                assertTrue(byReceiveTime instanceof TimeLookup.Found f && f.offset() <= r.offset(),
                        what + ": " + r + " -> " + byReceiveTime + " " + log.segments());
            }
            long next = log.append(new RecordBatchBuilder().append(BASE_MS, null, LogTestUtils.bytes("after")).build(),
                    BASE_MS + 1_000_000).baseOffset();
            assertEquals(expectedEnd, next, what + ": appends continue");
        }
        List<String> entries = indexEntries(dir);
        List<String> expectedEntries = new ArrayList<>();
        for (String entry : pristineIndexEntries) {
            if (Long.parseLong(entry.split(" ")[1]) < expectedEnd) {
                expectedEntries.add(entry);
            }
        }
        entries.removeIf(e -> Long.parseLong(e.split(" ")[1]) >= expectedEnd);
        assertEquals(expectedEntries, entries, what + ": indexes agree with the log");
    }

    /** Copies the pristine log and removes the clean-shutdown marker, as a crash would leave it. */
    private Path crashCopy(String name) throws IOException {
        Path dir = tmp.resolve(name);
        copyTree(pristine, dir);
        Files.delete(dir.resolve(PartitionLog.CLEAN_SHUTDOWN_FILE));
        return dir;
    }

    /** Every entry of every index, as "suffix offset key". */
    private static List<String> indexEntries(Path dir) throws IOException {
        List<String> entries = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.sorted().toList()) {
                String name = file.getFileName().toString();
                if (!name.matches("\\d{20}\\..*index")) {
                    continue;
                }
                long base = Long.parseLong(name.substring(0, 20));
                if (name.endsWith(OffsetIndex.SUFFIX)) {
                    try (OffsetIndex index = OffsetIndex.map(IndexFile.open(file, base, OffsetIndex.ENTRY_SIZE))) {
                        for (int i = 0; i < index.entries(); i++) {
                            entries.add("index " + index.offsetAt(i) + " " + index.positionAt(i));
                        }
                    }
                } else {
                    try (TimeIndex index = TimeIndex.map(IndexFile.open(file, base, TimeIndex.ENTRY_SIZE))) {
                        for (int i = 0; i < index.entries(); i++) {
                            entries.add(name.substring(21) + " " + index.offsetAt(i) + " " + index.timeAt(i));
                        }
                    }
                }
            }
        }
        return entries;
    }

    private static Path logFile(Path dir, long base) {
        return LogSegment.file(dir, base, LogSegment.LOG_SUFFIX);
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path file : files.toList()) {
                Files.copy(file, to.resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }
}
