package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.zip.CRC32C;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.batch;
import static io.tidemark.core.log.LogTestUtils.bytes;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link PartitionLog#recreate} and {@link PartitionLog#appendStamped}: copying a log from another replica. */
class LogCopyTest {
    @TempDir
    Path dir;

    /** A batch of one record as another replica's log stored it: base offset, ReceiveTime and CRC stamped. */
    private static ByteBuffer stamped(int n, long baseOffset, long receiveTimeMs) {
        ByteBuffer batch = batch(n, receiveTimeMs);
        RecordBatchFormat.stamp(new CRC32C(), batch, 0, baseOffset, receiveTimeMs);
        return batch;
    }

    /** Every batch of the log from its start, as the bytes a Fetch returns. */
    private static List<ByteBuffer> batches(PartitionLog log) {
        List<ByteBuffer> batches = new ArrayList<>();
        long offset = log.logStartOffset();
        while (offset < log.logEndOffset()) {
            ByteBuffer read = log.read(offset, 1).batches();
            batches.add(read);
            offset = RecordBatchFormat.lastOffset(read, 0) + 1;
        }
        return batches;
    }

    @Test
    void aCopyHoldsTheSourcesBatchesAtTheirOffsetsWithTheirReceiveTimes() throws Exception {
        Path sourceDir = dir.resolve("source");
        Path copyDir = dir.resolve("copy");
        try (PartitionLog source = PartitionLog.open(sourceDir, config("segment.bytes", "300"), BASE_MS)) {
            for (int i = 0; i < 10; i++) {
                source.append(batch(i, BASE_MS + i, BASE_MS + i), BASE_MS + 10L * i);
            }
            source.append(new RecordBatchBuilder().producer(42, (short) 0, 0).append(BASE_MS, null, bytes("p"))
                    .build(), BASE_MS + 100);
            source.deleteExpiredSegments(BASE_MS + 100 + 604_800_000L - 45);
            assertEquals(12, source.logStartOffset(), "retention deleted two segments of three batches");

            try (PartitionLog copy = PartitionLog.recreate(copyDir, config(), source.logStartOffset(), BASE_MS)) {
                List<AppendResult> results = batches(source).stream().map(copy::appendStamped).toList();
                assertEquals(List.of(new AppendResult(12, 13, BASE_MS + 60), new AppendResult(14, 15, BASE_MS + 70),
                        new AppendResult(16, 17, BASE_MS + 80), new AppendResult(18, 19, BASE_MS + 90),
                        new AppendResult(20, 20, BASE_MS + 100)), results);
                assertEquals(batches(source), batches(copy), "byte for byte");
                assertEquals(OptionalLong.of(BASE_MS + 100), copy.lastReceiveTimeMs());
                assertEquals(source.lookupByReceiveTime(BASE_MS + 75), copy.lookupByReceiveTime(BASE_MS + 75));
                assertEquals(new AppendResult(20, 20, BASE_MS + 100), copy.append(new RecordBatchBuilder()
                                .producer(42, (short) 0, 0).append(BASE_MS, null, bytes("p")).build(), BASE_MS + 200),
                        "the copy knows the producer's batch: a resend is answered with the first result");
            }
            try (PartitionLog reopened = PartitionLog.open(copyDir, config(), BASE_MS)) {
                assertEquals(12, reopened.logStartOffset());
                assertEquals(batches(source), batches(reopened));
            }
        }
    }

    @Test
    void aRecreatedLogStartsEmptyAtTheOffsetAndReopensThere() throws Exception {
        Path logDir = dir.resolve("log");
        try (PartitionLog old = PartitionLog.open(logDir, config(), BASE_MS)) {
            old.append(batch(0, BASE_MS), BASE_MS);
        }
        Files.writeString(logDir.resolve("stray"), "left by someone");
        try (PartitionLog log = PartitionLog.recreate(logDir, config(), 1000, BASE_MS)) {
            assertEquals(1000, log.logStartOffset());
            assertEquals(1000, log.logEndOffset());
            assertEquals(OptionalLong.empty(), log.lastReceiveTimeMs());
            assertFalse(Files.exists(logDir.resolve("stray")), "the directory was emptied");
            assertEquals(new AppendResult(1000, 1000, BASE_MS + 1), log.append(batch(0, BASE_MS), BASE_MS + 1));
        }
        try (PartitionLog reopened = PartitionLog.open(logDir, config(), BASE_MS)) {
            assertEquals(1000, reopened.logStartOffset());
            assertEquals(1001, reopened.logEndOffset());
        }
        assertThrows(IllegalArgumentException.class, () -> PartitionLog.recreate(logDir, config(), -1, BASE_MS));
    }

    @Test
    void aBatchBelowTheLogEndIsRefusedAndOneAboveItContinuesTheLogAcrossTheGapWhateverTheCleanupPolicy()
            throws Exception {
        try (PartitionLog log = PartitionLog.recreate(dir, config(), 5, BASE_MS)) {
            log.appendStamped(stamped(0, 5, BASE_MS));
            TidemarkException overlap = assertThrows(TidemarkException.class,
                    () -> log.appendStamped(stamped(1, 5, BASE_MS)));
            assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, overlap.code());
            assertEquals("a copied batch must continue the log: this one starts at offset 5 but the log " + dir
                    + " ends at 6", overlap.getMessage());
            assertEquals(6, log.logEndOffset(), "nothing of a refused batch is written");
            assertEquals(new AppendResult(7, 7, BASE_MS), log.appendStamped(stamped(1, 7, BASE_MS)),
                    "the copy's source compacted offset 6 away: the copy skips it too, though this log deletes");
            assertEquals(8, log.logEndOffset());
        }
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(8, reopened.logEndOffset(), "the gap is marked, so the loader takes it");
            assertEquals(List.of(5L, 7L), readAll(reopened).stream().map(io.tidemark.proto.record.Record::offset).toList());
        }
    }

    @Test
    void aCorruptBatchOrOneWhoseReceiveTimeGoesBackIsRefused() throws Exception {
        try (PartitionLog log = PartitionLog.recreate(dir, config(), 0, BASE_MS)) {
            log.appendStamped(stamped(0, 0, BASE_MS + 10));
            ByteBuffer flipped = stamped(1, 1, BASE_MS + 10);
            flipped.put(flipped.limit() - 3, (byte) (flipped.get(flipped.limit() - 3) ^ 1));
            TidemarkException corrupt = assertThrows(TidemarkException.class, () -> log.appendStamped(flipped));
            assertEquals(ErrorCode.CORRUPT_BATCH, corrupt.code());
            assertTrue(corrupt.getMessage().startsWith("corrupt record batch: CRC32C mismatch"),
                    corrupt.getMessage());

            TidemarkException back = assertThrows(TidemarkException.class,
                    () -> log.appendStamped(stamped(1, 1, BASE_MS + 9)));
            assertEquals(ErrorCode.INVALID_TIMESTAMP, back.code());
            assertEquals("ReceiveTime " + (BASE_MS + 9) + " is below the partition's last ReceiveTime "
                    + (BASE_MS + 10) + "; ReceiveTime never decreases in a partition (stamp max(now, last))",
                    back.getMessage());
            assertEquals(1, log.logEndOffset());
        }
    }

    @Test
    void aProducersBatchThatNoLeaderStampedIsRefused() throws Exception {
        try (PartitionLog log = PartitionLog.recreate(dir, config(), 0, BASE_MS)) {
            TidemarkException unstamped = assertThrows(TidemarkException.class,
                    () -> log.appendStamped(batch(0, BASE_MS)));
            assertEquals(ErrorCode.INVALID_TIMESTAMP, unstamped.code());
            assertEquals("ReceiveTime -1 is negative; it is ms since the epoch", unstamped.getMessage());
            assertEquals(0, log.logEndOffset());
        }
    }
}
