package io.tidemark.core.log;

import com.codahale.metrics.MetricRegistry;
import io.tidemark.core.config.TopicConfig;
import io.tidemark.core.log.file.DiskFaults;
import io.tidemark.core.log.segment.CompactionMarker;
import io.tidemark.core.log.segment.LogSegment;
import io.tidemark.proto.record.Record;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.record.RecordBatchFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.bytes;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static io.tidemark.core.log.LogTestUtils.text;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Compaction of a log with one batch per segment (segment.bytes 100), ReceiveTime {@code BASE_MS + 1000 * batch}
 * and SendTime {@code BASE_MS + 10 * offset}:
 * <pre>
 * batch  offsets  records (key=value)                     segment
 * B0     0        a=a0                                    closed
 * B1     1        b=b0                                    closed
 * B2     2        (no key)=n0                             closed
 * B3     3-6      a=a1, c=c0, a=a2, d=d0                  closed
 * B4     7        b=(tombstone)                           closed
 * B5     8        c=c1                                    closed
 * B6     9        e=e0                                    active: never compacted
 * </pre>
 */
class LogCompactorTest {
    private static final long DELETE_RETENTION_MS = 10_000;
    private static final long TOMBSTONE_RECEIVE_TIME = BASE_MS + 4000;

    @TempDir
    Path dir;
    @TempDir
    Path copyDir;

    private final MetricRegistry registry = new MetricRegistry();
    private final LogCompactor compactor = new LogCompactor(-1, registry);

    private static TopicConfig compacted() {
        return config("cleanup.policy", "compact", "segment.bytes", "100", "delete.retention.ms",
                Long.toString(DELETE_RETENTION_MS));
    }

    private static PartitionLog written(Path dir) throws IOException {
        PartitionLog log = PartitionLog.open(dir, compacted(), BASE_MS);
        String[][] batches = {{"a", "a0"}, {"b", "b0"}, {null, "n0"}, {"a", "a1", "c", "c0", "a", "a2", "d", "d0"},
                {"b", null}, {"c", "c1"}, {"e", "e0"}};
        long offset = 0;
        for (int i = 0; i < batches.length; i++) {
            RecordBatchBuilder builder = new RecordBatchBuilder();
            for (int r = 0; r < batches[i].length; r += 2) {
                builder.append(BASE_MS + 10 * offset++, batches[i][r] == null ? null : bytes(batches[i][r]),
                        batches[i][r + 1] == null ? null : bytes(batches[i][r + 1]));
            }
            log.append(builder.build(), BASE_MS + 1000L * i);
        }
        assertEquals(7, log.segments().size(), "one batch per segment");
        return log;
    }

    /** Each record as {@code offset:key=value}, in log order. */
    private static List<String> contents(PartitionLog log) {
        List<String> shown = new ArrayList<>();
        for (Record r : readAll(log)) {
            shown.add(r.offset() + ":" + text(r.key()) + "=" + text(r.value()));
        }
        return shown;
    }

    private static final List<String> ALL = List.of("0:a=a0", "1:b=b0", "2:null=n0", "3:a=a1", "4:c=c0", "5:a=a2",
            "6:d=d0", "7:b=null", "8:c=c1", "9:e=e0");
    private static final List<String> COMPACTED = List.of("2:null=n0", "5:a=a2", "6:d=d0", "7:b=null", "8:c=c1",
            "9:e=e0");
    private static final List<String> TOMBSTONE_GONE = List.of("2:null=n0", "5:a=a2", "6:d=d0", "8:c=c1", "9:e=e0");

    @Test
    void keepsTheLatestRecordOfEachKeyAtItsOffsetAndEveryRecordWithoutAKey() throws Exception {
        try (PartitionLog log = written(dir)) {
            assertEquals(ALL, contents(log));
            LogCompactor.CompactionResult result = compactor.compact(log, TOMBSTONE_RECEIVE_TIME, Long.MAX_VALUE);

            assertEquals(new LogCompactor.CompactionResult(3, 4, 5), result, "B0, B1 and B3 rewritten; a0, b0, a1 "
                    + "and c0 removed; the active segment is not counted");
            assertEquals(COMPACTED, contents(log));
            assertEquals(3, registry.counter("log-compaction.rewritten-segments").getCount());
            assertEquals(4, registry.counter("log-compaction.removed-records").getCount());
            assertEquals(0, log.logStartOffset(), "offsets are unchanged: the log still starts at 0");
            assertEquals(10, log.logEndOffset());
            assertEquals(List.of(0L, 1L, 2L, 3L, 7L, 8L, 9L), log.segments().stream().map(SegmentInfo::baseOffset)
                    .toList(), "every segment stays, empty ones too");
            assertEquals(List.of(1L, 2L, 3L, 7L, 8L, 9L, 10L), log.segments().stream().map(SegmentInfo::nextOffset)
                    .toList(), "a segment ends where the next begins, whatever compaction removed");
            assertEquals(2, firstOffsetRead(log, 0), "a read at a removed offset starts at the next record kept");
            assertEquals(5, firstOffsetRead(log, 3), "B3 lost its first two records: its batch now starts at 5");
            assertEquals(5, firstOffsetRead(log, 4));
            assertEquals(new TimeLookup.Found(2, BASE_MS + 2000, BASE_MS + 20), log.lookupByReceiveTime(BASE_MS),
                    "the first record kept at or after the time");
            assertEquals(new TimeLookup.Found(5, BASE_MS + 3000, BASE_MS + 50),
                    log.lookupByReceiveTime(BASE_MS + 2001));
            assertEquals(new TimeLookup.Found(5, BASE_MS + 3000, BASE_MS + 50), log.lookupBySendTime(BASE_MS + 30),
                    "a1's SendTime: the first record kept from it on is a2");
            assertEquals(new TimeLookup.Found(9, BASE_MS + 6000, BASE_MS + 90), log.lookupBySendTime(BASE_MS + 81));

            assertEquals(new LogCompactor.CompactionResult(0, 0, 0), compactor.compact(log,
                    TOMBSTONE_RECEIVE_TIME + DELETE_RETENTION_MS, Long.MAX_VALUE), "nothing new, no tombstone expired: "
                    + "the pass is skipped");
            assertEquals(COMPACTED, contents(log));
        }
    }

    /**
     * A swap closes the old segment before it moves the compacted files over it (the marker first), and publishes
     * the replacement after: a read in between (held there by a slowed move of B3's marker, the last segment
     * rewritten) waits for the swap and reads the replacement.
     */
    @Test
    void aReadDuringASwapReadsTheCompactedSegment() throws Exception {
        DiskFaults faults = DiskFaults.install();
        try (PartitionLog log = written(dir)) {
            Path stagedMarker = CompactionMarker.file(LogCompactor.stagingDir(dir), 3);
            faults.slow(stagedMarker, DiskFaults.Operation.RENAME, Duration.ofMillis(300));
            CompletableFuture<LogCompactor.CompactionResult> compaction = new CompletableFuture<>();
            Thread compacting = new Thread(() -> {
                try {
                    compaction.complete(compactor.compact(log, TOMBSTONE_RECEIVE_TIME, Long.MAX_VALUE));
                } catch (Throwable t) {
                    compaction.completeExceptionally(t);
                }
            }, "compacting");
            compacting.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> compacting.getState() == Thread.State.TIMED_WAITING);

            assertEquals(5, firstOffsetRead(log, 3), "the compacted B3, whose batch starts at a2");
            assertEquals(new LogCompactor.CompactionResult(3, 4, 5), compaction.get(10, TimeUnit.SECONDS));
            assertEquals(COMPACTED, contents(log));
        } finally {
            faults.clear(dir);
        }
    }

    @Test
    void anAbortedTransactionNeverHidesACommittedValueAndMarkersStay() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, compacted(), BASE_MS)) {
            log.append(new RecordBatchBuilder().append(BASE_MS, bytes("k"), bytes("committed-1")).build(), BASE_MS);
            log.append(transactional(7, 0, "k", "aborted"), BASE_MS);                          // 1
            log.append(TransactionMarker.build(7, (short) 0, false, 0, BASE_MS), BASE_MS);       // 2: abort
            log.append(transactional(8, 0, "j", "committed-2"), BASE_MS);                      // 3
            log.append(TransactionMarker.build(8, (short) 0, true, 0, BASE_MS), BASE_MS);        // 4: commit
            log.append(transactional(9, 0, "j", "open"), BASE_MS);                             // 5: still open
            log.append(new RecordBatchBuilder().append(BASE_MS, bytes("z"), bytes("last")).build(), BASE_MS);
            assertEquals(5, log.lastStableOffset());

            compactor.compact(log, BASE_MS, Long.MAX_VALUE);
            assertEquals(List.of("0:k=committed-1", "2:\u0000\u0000\u0000\u0000=\u0000\u0000\u0000\u0000",
                            "3:j=committed-2", "4:\u0000\u0000\u0000\u0001=\u0000\u0000\u0000\u0000",
                            "5:j=open", "6:z=last"), contents(log),
                    "the aborted k stays out and does not hide committed-1; markers stay; nothing from the open "
                            + "transaction on is compacted");
            ByteBuffer committed = log.read(3, 1).batches();
            assertTrue(RecordBatchFormat.transactional(committed, committed.position()));
        }
    }

    private static ByteBuffer transactional(long producerId, int sequence, String key, String value) {
        return new RecordBatchBuilder().producer(producerId, (short) 0, sequence).transactional()
                .append(BASE_MS, bytes(key), bytes(value)).build();
    }

    private static long firstOffsetRead(PartitionLog log, long offset) {
        return RecordBatchFormat.baseOffset(log.read(offset, 1).batches(), 0);
    }

    @Test
    void aTombstoneGoesDeleteRetentionMsAfterItsReceiveTime() throws Exception {
        try (PartitionLog log = written(dir)) {
            compactor.compact(log, TOMBSTONE_RECEIVE_TIME, Long.MAX_VALUE);
            compactor.compact(log, TOMBSTONE_RECEIVE_TIME + DELETE_RETENTION_MS, Long.MAX_VALUE);
            assertEquals(COMPACTED, contents(log), "exactly delete.retention.ms old: kept");

            LogCompactor.CompactionResult result = compactor.compact(log,
                    TOMBSTONE_RECEIVE_TIME + DELETE_RETENTION_MS + 1, Long.MAX_VALUE);
            assertEquals(new LogCompactor.CompactionResult(1, 1, 4), result);
            assertEquals(TOMBSTONE_GONE, contents(log));
            assertEquals(new TimeLookup.Found(8, BASE_MS + 5000, BASE_MS + 80),
                    log.lookupByReceiveTime(TOMBSTONE_RECEIVE_TIME), "past the segment left empty");
        }
    }

    @Test
    void leavesWhatAReplicaReplaysAndTopicsThatDoNotCompact() throws Exception {
        try (PartitionLog log = written(dir)) {
            assertEquals(new LogCompactor.CompactionResult(2, 2, 5), compactor.compact(log, BASE_MS, 7),
                    "only the segments ending at or below offset 7: a0 and a1 go; b0 stays, its tombstone is beyond");
            assertEquals(List.of("1:b=b0", "2:null=n0", "4:c=c0", "5:a=a2", "6:d=d0", "7:b=null", "8:c=c1", "9:e=e0"),
                    contents(log));
            assertEquals(0, log.deleteExpiredSegments(Long.MAX_VALUE).deletedSegments(),
                    "cleanup.policy compact alone: retention deletes nothing");
            log.updateConfig(log.config().with("cleanup.policy", "delete"));
            assertEquals(new LogCompactor.CompactionResult(0, 0, 0), compactor.compact(log, BASE_MS, Long.MAX_VALUE));
        }
    }

    @Test
    void aCompactedLogReopensTheSameCleanlyAndAfterACrashWithItsIndexesGone() throws Exception {
        try (PartitionLog log = written(dir)) {
            compactor.compact(log, TOMBSTONE_RECEIVE_TIME + DELETE_RETENTION_MS + 1, Long.MAX_VALUE);
        }
        try (PartitionLog log = PartitionLog.open(dir, compacted(), BASE_MS)) {
            assertEquals(TOMBSTONE_GONE, contents(log));
            assertEquals(10, log.logEndOffset());
            assertEquals(new TimeLookup.Found(8, BASE_MS + 5000, BASE_MS + 80),
                    log.lookupByReceiveTime(TOMBSTONE_RECEIVE_TIME));
        }
        Files.delete(dir.resolve(PartitionLog.CLEAN_SHUTDOWN_FILE));
        for (String suffix : LogSegment.INDEX_SUFFIXES) {
            Files.delete(LogSegment.file(dir, 3, suffix));
        }
        RecoveryPointFile.write(dir, 0);
        try (PartitionLog log = PartitionLog.open(dir, compacted(), BASE_MS)) {
            assertEquals(TOMBSTONE_GONE, contents(log), "recovery takes the gaps of a compacted segment");
            assertEquals(List.of(1L, 2L, 3L, 7L, 8L, 9L, 10L), log.segments().stream().map(SegmentInfo::nextOffset)
                    .toList());
        }
    }

    @Test
    void whatAnInterruptedCompactionLeftIsDeletedAndADamagedMarkerRefused() throws Exception {
        try (PartitionLog log = written(dir)) {
            compactor.compact(log, TOMBSTONE_RECEIVE_TIME, Long.MAX_VALUE);
        }
        Path staging = LogCompactor.stagingDir(dir);
        Files.createDirectories(staging);
        Files.writeString(staging.resolve("00000000000000000003.log"), "half written");
        CompactionMarker.write(dir, 99, 100);
        try (PartitionLog log = PartitionLog.open(dir, compacted(), BASE_MS)) {
            assertEquals(COMPACTED, contents(log));
            assertFalse(Files.exists(staging));
            assertFalse(Files.exists(CompactionMarker.file(dir, 99)), "a marker without its segment goes");
        }
        Files.write(CompactionMarker.file(dir, 3), new byte[3]);
        IOException refused = assertThrows(IOException.class, () -> PartitionLog.open(dir, compacted(), BASE_MS));
        assertTrue(refused.getMessage().endsWith("00000000000000000003.compacted holds 3 bytes; a compaction marker "
                + "holds 8"), refused.getMessage());
    }

    @Test
    void aCopyOfACompactedLogHoldsTheSameRecordsAndEndsAtTheSameOffset() throws Exception {
        try (PartitionLog source = written(dir);
             PartitionLog copy = PartitionLog.open(copyDir, compacted(), BASE_MS)) {
            compactor.compact(source, TOMBSTONE_RECEIVE_TIME + DELETE_RETENTION_MS + 1, Long.MAX_VALUE);
            while (copy.logEndOffset() < 9) {
                ByteBuffer batch = source.read(copy.logEndOffset(), 1).batches();
                if (RecordBatchFormat.baseOffset(batch, 0) >= 9) {
                    copy.skipTo(9);
                } else {
                    copy.appendStamped(batch.limit(RecordBatchFormat.totalSize(batch, 0)));
                }
            }
            assertEquals(9, copy.logEndOffset(), "up to where the source's compacted segments end");
            copy.appendStamped(source.read(9, 1).batches());
            assertEquals(contents(source), contents(copy));
            assertEquals(10, copy.logEndOffset());
        }
        try (PartitionLog copy = PartitionLog.open(copyDir, compacted(), BASE_MS)) {
            assertEquals(TOMBSTONE_GONE, contents(copy), "the copy's gaps survive a restart");
        }
    }
}
