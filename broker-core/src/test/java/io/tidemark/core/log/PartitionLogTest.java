package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.RecordBatchReader;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.zip.CRC32C;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.admitAndAppend;
import static io.tidemark.core.log.LogTestUtils.batch;
import static io.tidemark.core.log.LogTestUtils.bytes;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static io.tidemark.core.log.LogTestUtils.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PartitionLogTest {
    @TempDir
    Path dir;

    @Test
    void appendsAssignContiguousOffsetsAndStampTheStoredBatchNotTheCallers() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(new AppendResult(0, 2, BASE_MS), log.append(batch(0, BASE_MS, BASE_MS, BASE_MS), BASE_MS));
            ByteBuffer second = batch(3, BASE_MS + 7);
            ByteBuffer given = ByteBuffer.allocate(second.remaining()).put(second.duplicate()).flip();
            assertEquals(new AppendResult(3, 3, BASE_MS + 9), log.append(second.asReadOnlyBuffer(), BASE_MS + 9));
            assertEquals(given, second, "the caller's buffer is read, never written (a Raft entry's bytes)");
            ByteBuffer stored = log.read(3, 1).batches();
            int at = stored.position();
            assertEquals(3, RecordBatchFormat.baseOffset(stored, at));
            assertEquals(BASE_MS + 9, RecordBatchFormat.receiveTime(stored, at));
            assertEquals(RecordBatchFormat.computeCrc(new CRC32C(), stored, at, RecordBatchFormat.totalSize(stored, at)),
                    RecordBatchFormat.storedCrc(stored, at), "the stored copy carries the CRC of its stamped bytes");
            List<Record> records = readAll(log);
            assertEquals(List.of("v0", "v1", "v2", "v3"), records.stream().map(r -> text(r.value())).toList());
            assertEquals(List.of(BASE_MS, BASE_MS, BASE_MS, BASE_MS + 9),
                    records.stream().map(Record::receiveTimeMs).toList());
            assertEquals(OptionalLong.of(BASE_MS + 9), log.lastReceiveTimeMs());
        }
    }

    @Test
    void readReturnsWholeBatchesFromTheOneHoldingTheOffset() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            for (int i = 0; i < 10; i++) {
                log.append(batch(3 * i, BASE_MS, BASE_MS, BASE_MS), BASE_MS);
            }
            int batchSize = RecordBatchFormat.totalSize(log.read(0, 1).batches(), 0);
            LogReadResult one = log.read(4, 1);
            assertEquals(batchSize, one.batches().remaining(), "at least one whole batch, even above maxBytes");
            assertEquals(3, RecordBatchFormat.baseOffset(one.batches(), 0), "the batch holding offset 4");
            LogReadResult some = log.read(4, 3 * batchSize - 1);
            assertEquals(2 * batchSize, some.batches().remaining(), "only whole batches");
            assertEquals(0, log.read(30, 100).batches().remaining(), "nothing at the log end");
            assertEquals(30, some.logEndOffset());
            assertEquals(30, some.lastStableOffset(), "no transaction open: the log end");
            List<Record> fromFour = new RecordBatchReader().records(log.read(4, 1 << 20).batches());
            assertEquals(3, fromFour.get(0).offset(), "whole batches: readers skip records below the offset asked");
            assertEquals(27, fromFour.size());
        }
    }

    @Test
    void outOfRangeOffsetsNameTheRange() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(batch(0, BASE_MS), BASE_MS);
            TidemarkException e = assertThrows(TidemarkException.class, () -> log.read(2, 100));
            assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, e.code());
            assertEquals("offset 2 is outside the log: it holds offsets [0, 1), and 1 is the next to be written",
                    e.getMessage());
            assertThrows(TidemarkException.class, () -> log.read(-1, 100));
        }
    }

    @Test
    void badInputIsRefusedAndLeavesTheLogIntact() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("max.batch.bytes", "200"), BASE_MS)) {
            log.append(batch(0, BASE_MS), BASE_MS);

            TidemarkException garbage = assertThrows(TidemarkException.class,
                    () -> admitAndAppend(log, ByteBuffer.wrap(bytes("this is not a record batch at all, just text that is long "
                            + "enough to fill a header")), BASE_MS));
            assertEquals(ErrorCode.CORRUPT_BATCH, garbage.code());

            ByteBuffer big = new RecordBatchBuilder().append(BASE_MS, null, new byte[200]).build();
            TidemarkException tooLarge = assertThrows(TidemarkException.class, () -> admitAndAppend(log, big, BASE_MS));
            assertEquals(ErrorCode.RECORD_TOO_LARGE, tooLarge.code());
            assertEquals("batch of 268 bytes is above max.batch.bytes 200 of this topic", tooLarge.getMessage());

            ByteBuffer two = ByteBuffer.allocate(2 * batch(1, BASE_MS).remaining());
            two.put(batch(1, BASE_MS)).put(batch(2, BASE_MS)).flip();
            TidemarkException trailing = assertThrows(TidemarkException.class, () -> admitAndAppend(log, two, BASE_MS));
            assertEquals("68 bytes follow the 68-byte batch; an append takes exactly one batch", trailing.getMessage());
            assertThrows(IllegalStateException.class, () -> log.append(two, BASE_MS),
                    "the log itself refuses what is not one whole batch: admission let nothing else through");

            assertEquals(1, log.logEndOffset());
            assertEquals(new AppendResult(1, 1, BASE_MS), log.append(batch(1, BASE_MS), BASE_MS));
        }
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(List.of("v0", "v1"), readAll(reopened).stream().map(r -> text(r.value())).toList());
        }
    }

    @Test
    void rollsWhenAnIndexIsFull() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("index.interval.bytes", "0", "segment.index.bytes", "24"),
                BASE_MS)) {
            for (int i = 0; i < 5; i++) {
                log.append(batch(i, BASE_MS), BASE_MS);
            }
            assertEquals(List.of(0L, 2L, 4L), log.segments().stream().map(SegmentInfo::baseOffset).toList(),
                    "a 24-byte time index holds two 12-byte entries");
        }
    }

    @Test
    void flushMessagesMovesTheRecoveryPoint() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("flush.messages", "3"), BASE_MS)) {
            log.append(batch(0, BASE_MS, BASE_MS), BASE_MS);
            assertEquals(OptionalLong.empty(), RecoveryPointFile.read(dir));
            log.append(batch(2, BASE_MS), BASE_MS);
            assertEquals(OptionalLong.of(3), RecoveryPointFile.read(dir));
        }
    }

    @Test
    void flushMsFlushesOnAppendAndOnTheTimer() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("flush.ms", "1000"), BASE_MS)) {
            log.append(batch(0, BASE_MS), BASE_MS + 999);
            assertEquals(OptionalLong.empty(), RecoveryPointFile.read(dir));
            log.append(batch(1, BASE_MS), BASE_MS + 1000);
            assertEquals(OptionalLong.of(2), RecoveryPointFile.read(dir));
            log.append(batch(2, BASE_MS), BASE_MS + 1500);
            log.maybeFlush(BASE_MS + 1999);
            assertEquals(OptionalLong.of(2), RecoveryPointFile.read(dir));
            log.maybeFlush(BASE_MS + 2000);
            assertEquals(OptionalLong.of(3), RecoveryPointFile.read(dir));
        }
    }

    @Test
    void writeBackFsyncsTheActiveSegmentPerMinBytesAndIsNoFlush() throws Exception {
        PartitionLog log = PartitionLog.open(dir, config("segment.ms", "1000"), BASE_MS);
        try {
            log.append(batch(0, BASE_MS), BASE_MS);
            log.append(batch(1, BASE_MS), BASE_MS);
            int two = log.segments().get(0).sizeBytes();
            assertFalse(log.writeBack(two + 1), "below the bytes asked for");
            assertTrue(log.writeBack(two));
            assertFalse(log.writeBack(1), "nothing appended since the last write-back");
            log.append(batch(2, BASE_MS), BASE_MS);
            int three = log.segments().get(0).sizeBytes();
            assertFalse(log.writeBack(three - two + 1), "counted from the last write-back");
            assertTrue(log.writeBack(three - two));
            assertEquals(OptionalLong.empty(), RecoveryPointFile.read(dir), "a write-back moves no recovery point");

            log.append(batch(3, BASE_MS + 1000), BASE_MS + 1000);
            assertEquals(List.of(0L, 3L), log.segments().stream().map(SegmentInfo::baseOffset).toList());
            assertTrue(log.writeBack(log.segments().get(1).sizeBytes()), "a new segment counts from its start");
            log.append(batch(4, BASE_MS + 1000), BASE_MS + 1000);
        } finally {
            log.close();
        }
        assertFalse(log.writeBack(1), "a closed log writes nothing back: its close fsynced it");
    }

    @Test
    void cleanCloseWritesTheMarkerAndOpenRemovesIt() throws Exception {
        PartitionLog log = PartitionLog.open(dir, config(), BASE_MS);
        log.append(batch(0, BASE_MS), BASE_MS);
        assertFalse(Files.exists(dir.resolve(PartitionLog.CLEAN_SHUTDOWN_FILE)));
        log.close();
        assertTrue(Files.exists(dir.resolve(PartitionLog.CLEAN_SHUTDOWN_FILE)));
        assertEquals(OptionalLong.of(1), RecoveryPointFile.read(dir));
        assertEquals(0, Files.size(dir.resolve("00000000000000000000.timeindex")), "trimmed to its 0 entries");
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertFalse(Files.exists(dir.resolve(PartitionLog.CLEAN_SHUTDOWN_FILE)));
            assertArrayEquals(bytes("v0"), readAll(reopened).get(0).value());
            assertThrows(IllegalStateException.class, () -> log.append(batch(1, BASE_MS), BASE_MS));
        }
    }

    @Test
    void truncateToABatchBoundaryAcrossSegments() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", "200"), BASE_MS)) {
            for (int i = 0; i < 6; i++) {
                log.append(batch(2 * i, BASE_MS + i, BASE_MS + i), BASE_MS + i);
            }
            assertEquals(List.of(0L, 4L, 8L), log.segments().stream().map(SegmentInfo::baseOffset).toList());
            assertThrows(IllegalArgumentException.class, () -> log.truncateTo(5), "inside a batch");
            log.truncateTo(6);
            assertEquals(6, log.logEndOffset());
            assertEquals(List.of(0L, 4L), log.segments().stream().map(SegmentInfo::baseOffset).toList());
            assertEquals(OptionalLong.of(BASE_MS + 2), log.lastReceiveTimeMs());
            assertEquals(new AppendResult(6, 6, BASE_MS + 2), log.append(batch(6, BASE_MS), BASE_MS + 2));
            log.truncateTo(0);
            assertEquals(0, log.logEndOffset());
            assertTrue(log.lastReceiveTimeMs().isEmpty());
            log.append(batch(0, BASE_MS), BASE_MS);
        }
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(List.of("v0"), readAll(reopened).stream().map(r -> text(r.value())).toList());
        }
    }

    @Test
    void aGapBetweenSegmentsIsRefused() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", "100"), BASE_MS)) {
            for (int i = 0; i < 3; i++) {
                log.append(batch(i, BASE_MS), BASE_MS);
            }
        }
        Files.delete(dir.resolve("00000000000000000001.log"));
        java.io.IOException e = assertThrows(java.io.IOException.class, () -> PartitionLog.open(dir, config(), BASE_MS));
        assertEquals("the log in " + dir + " has a gap: a segment ends at offset 1 but the next one starts at 2; "
                + "move the later segments away to open it", e.getMessage());
        assertFalse(Files.exists(dir.resolve("00000000000000000001.index")), "orphan index files are removed");
    }
}
