package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.Header;
import io.tidemark.proto.record.OriginPartition;
import io.tidemark.proto.record.ProvenanceHeaders;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.config;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A partition stores each mirrored record once: it keeps the last origin offset per origin partition. */
class MirroredAppendTest {
    private static final UUID T_ID = new UUID(0x7a, 1);
    /** The id of A's topic t after it was deleted and created again. */
    private static final UUID T_RECREATED_ID = new UUID(0x7a, 2);
    private static final OriginPartition A0 = new OriginPartition("A", "t", T_ID, 0);
    private static final OriginPartition C0 = new OriginPartition("C", "t", T_ID, 0);
    /** segment.bytes that holds two of {@link #mirrored}'s batches of two records (180 to 182 bytes each). */
    private static final String TWO_BATCHES_BYTES = "400";
    /** segment.bytes that holds one of {@link #mirrored}'s batches. */
    private static final String ONE_BATCH_BYTES = "200";

    @TempDir
    Path dir;

    /** A mirrored batch of the given origin offsets of {@code origin}, optionally from an idempotent producer. */
    private static ByteBuffer mirroredBy(long producerId, int sequence, OriginPartition origin, long... originOffsets) {
        RecordBatchBuilder builder = new RecordBatchBuilder().mirrored();
        if (producerId >= 0) {
            builder.producer(producerId, (short) 0, sequence);
        }
        for (long offset : originOffsets) {
            builder.append(BASE_MS - 86_400_000, null, LogTestUtils.bytes(origin.cluster() + ":" + origin.topic() + "-"
                            + origin.partition() + "@" + offset),
                    ProvenanceHeaders.forCopy(List.of(), origin, offset, BASE_MS - 1000));
        }
        return builder.build();
    }

    private static ByteBuffer mirrored(OriginPartition origin, long... originOffsets) {
        return mirroredBy(-1, -1, origin, originOffsets);
    }

    private static TidemarkException refused(PartitionLog log, ByteBuffer batch) {
        return assertThrows(TidemarkException.class, () -> LogTestUtils.admitAndAppend(log, batch, BASE_MS));
    }

    @Test
    void aBatchStartingAtAHeldOriginOffsetIsRefusedWhole() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(new AppendResult(0, 2, BASE_MS), log.append(mirrored(A0, 0, 1, 2), BASE_MS));
            assertEquals(Optional.of(new HeldOrigin(2, 2)), log.heldOrigin(A0));
            TidemarkException overlap = refused(log, mirrored(A0, 2, 3, 4));
            assertEquals(ErrorCode.ORIGIN_OFFSET_HELD, overlap.code());
            assertEquals("this partition holds A:t-0 (topic id 00000000-0000-007a-0000-000000000001) up to origin "
                    + "offset 2 (at offset 2); the mirrored batch starts at origin offset 2 and was not stored: a "
                    + "record is copied once, continue at origin offset 3", overlap.getMessage());
            assertEquals(ErrorCode.ORIGIN_OFFSET_HELD, refused(log, mirrored(A0, 0)).code());
            assertEquals(3, log.logEndOffset(), "nothing of a refused batch is stored");
            assertEquals(new AppendResult(3, 4, BASE_MS), log.append(mirrored(A0, 3, 4), BASE_MS));
        }
    }

    @Test
    void gapsAreTakenSinceTheOriginsRetentionMayHaveRemovedRecords() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(mirrored(A0, 0, 1), BASE_MS);
            assertEquals(new AppendResult(2, 3, BASE_MS), log.append(mirrored(A0, 10, 12), BASE_MS));
            assertEquals(Optional.of(new HeldOrigin(12, 3)), log.heldOrigin(A0));
        }
    }

    @Test
    void originPartitionsAreIndependentAndOtherBatchesUnaffected() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(mirrored(A0, 5), BASE_MS);
            log.append(LogTestUtils.singleRecordBatch(1, BASE_MS), BASE_MS);
            log.append(mirrored(C0, 5), BASE_MS);
            log.append(mirrored(new OriginPartition("A", "t", T_ID, 1), 0), BASE_MS);
            assertEquals(Optional.of(new HeldOrigin(5, 0)), log.heldOrigin(A0));
            assertEquals(Optional.of(new HeldOrigin(5, 2)), log.heldOrigin(C0));
            assertEquals(Optional.empty(), log.heldOrigin(new OriginPartition("B", "t", T_ID, 0)));
        }
    }

    /**
     * A's topic t deleted and created again starts at offset 0: its copies are another origin, taken from the first,
     * while what the partition holds of the old topic stays (also through the snapshots, after a reopen).
     */
    @Test
    void aTopicCreatedAgainUnderItsNameIsANewOrigin() throws Exception {
        OriginPartition recreated = new OriginPartition("A", "t", T_RECREATED_ID, 0);
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", ONE_BATCH_BYTES), BASE_MS)) {
            for (int i = 0; i < 5; i++) {
                log.append(mirrored(A0, 2 * i, 2 * i + 1), BASE_MS);
            }
            assertEquals(new AppendResult(10, 11, BASE_MS), log.append(mirrored(recreated, 0, 1), BASE_MS),
                    "not ORIGIN_OFFSET_HELD: the old topic's offset 9 says nothing of the new topic's 0");
            assertEquals(ErrorCode.ORIGIN_OFFSET_HELD, refused(log, mirrored(A0, 9)).code());
            assertEquals(Optional.of(new HeldOrigin(1, 11)), log.heldOrigin(recreated));
            log.append(mirrored(recreated, 2), BASE_MS);
        }
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", ONE_BATCH_BYTES), BASE_MS)) {
            assertEquals(Optional.of(new HeldOrigin(9, 9)), log.heldOrigin(A0));
            assertEquals(Optional.of(new HeldOrigin(2, 12)), log.heldOrigin(recreated));
            assertEquals(ErrorCode.ORIGIN_OFFSET_HELD, refused(log, mirrored(recreated, 1, 3)).code());
        }
    }

    @Test
    void anIdempotentResendIsAnsweredWithItsFirstResultNotRefused() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            AppendResult first = log.append(mirroredBy(7, 0, A0, 0, 1), BASE_MS);
            assertEquals(first, log.append(mirroredBy(7, 0, A0, 0, 1), BASE_MS + 5),
                    "a lost reply's retry learns where its batch went");
            assertEquals(ErrorCode.ORIGIN_OFFSET_HELD, refused(log, mirroredBy(8, 0, A0, 0, 1)).code(),
                    "another mirror (another producer id) is refused");
        }
    }

    @Test
    void aMirroredBatchWithoutProvenanceIsCorrupt() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            ByteBuffer bare = new RecordBatchBuilder().mirrored().append(BASE_MS, null, new byte[] {1}).build();
            assertEquals(ErrorCode.CORRUPT_BATCH, refused(log, bare).code());
            assertEquals(0, log.logEndOffset());
        }
    }

    @Test
    void theTableIsRebuiltWhenTheLogOpensAndAfterATruncation() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", TWO_BATCHES_BYTES), BASE_MS)) {
            for (int i = 0; i < 10; i++) {
                log.append(mirrored(A0, 2 * i, 2 * i + 1), BASE_MS);
            }
            assertEquals(5, log.segments().size(), "two batches of two records a segment");
        }
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", TWO_BATCHES_BYTES), BASE_MS)) {
            assertEquals(Optional.of(new HeldOrigin(19, 19)), log.heldOrigin(A0));
            log.truncateTo(8);
            assertEquals(Optional.of(new HeldOrigin(7, 7)), log.heldOrigin(A0), "the snapshot at the cut");
            log.truncateTo(6);
            assertEquals(Optional.of(new HeldOrigin(5, 5)), log.heldOrigin(A0),
                    "the snapshot at offset 4 and the batch after it");
            assertEquals(java.util.Set.of(4L), OriginSnapshotFile.offsets(dir), "snapshots past the end are gone");
            log.truncateTo(0);
            assertEquals(Optional.empty(), log.heldOrigin(A0));
        }
    }

    @Test
    void theTableOutlivesTheSegmentsRetentionDeletes() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", ONE_BATCH_BYTES, "retention.ms", "1000"),
                BASE_MS)) {
            log.append(mirrored(C0, 40), BASE_MS);
            for (int i = 0; i < 10; i++) {
                log.append(mirrored(A0, 2 * i, 2 * i + 1), BASE_MS);
            }
            log.append(LogTestUtils.singleRecordBatch(1, BASE_MS + 10_000), BASE_MS + 10_000);
            assertTrue(log.deleteExpiredSegments(BASE_MS + 5_000).deletedSegments() > 1);
            assertEquals(1, log.segments().size(), "only the active segment is left");
        }
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", ONE_BATCH_BYTES), BASE_MS)) {
            assertEquals(Optional.of(new HeldOrigin(40, 0)), log.heldOrigin(C0));
            assertEquals(Optional.of(new HeldOrigin(19, 20)), log.heldOrigin(A0));
            assertEquals(1, OriginSnapshotFile.offsets(dir).size(), "the deleted segments' snapshots went with them");
        }
    }

    @Test
    void aDamagedSnapshotFallsBackToAnEarlierOne() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", ONE_BATCH_BYTES), BASE_MS)) {
            for (int i = 0; i < 10; i++) {
                log.append(mirrored(A0, 2 * i, 2 * i + 1), BASE_MS);
            }
        }
        long latest = OriginSnapshotFile.offsets(dir).last();
        Path file = OriginSnapshotFile.file(dir, latest);
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length - 1] ^= 1;
        Files.write(file, bytes);
        try (PartitionLog log = PartitionLog.open(dir, config("segment.bytes", ONE_BATCH_BYTES), BASE_MS)) {
            assertEquals(Optional.of(new HeldOrigin(19, 19)), log.heldOrigin(A0));
        }
        assertFalse(OriginSnapshotFile.read(dir, latest).isPresent());
    }
    /** A record of {@code valueBytes} as the source's producer sent it: its batch is what max.batch.bytes held. */
    private static ByteBuffer sourceBatch(int valueBytes) {
        return new RecordBatchBuilder().append(BASE_MS - 1000, LogTestUtils.bytes("k"), new byte[valueBytes],
                List.of(new Header("h", LogTestUtils.bytes("v")))).build();
    }

    /** The copy of {@link #sourceBatch}'s record at origin offset {@code originOffset}, origin ReceiveTime. */
    private static ByteBuffer copyOf(int valueBytes, long originOffset, long originMs) {
        return new RecordBatchBuilder().mirrored().append(BASE_MS - 1000, LogTestUtils.bytes("k"),
                new byte[valueBytes], ProvenanceHeaders.forCopy(List.of(new Header("h", LogTestUtils.bytes("v"))), A0,
                        originOffset, originMs)).build();
    }

    @Test
    void aCopyOfARecordTheSourceTookAtExactlyMaxBatchBytesIsTakenOneByteMoreIsRefused() throws Exception {
        int maxBatchBytes = sourceBatch(1000).remaining();
        try (PartitionLog log = PartitionLog.open(dir, config("max.batch.bytes", Integer.toString(maxBatchBytes)),
                BASE_MS)) {
            assertEquals(ErrorCode.RECORD_TOO_LARGE, refused(log, sourceBatch(1001)).code(), "the source's limit");
            assertEquals(new AppendResult(0, 0, BASE_MS), log.append(copyOf(1000, 0, BASE_MS - 900), BASE_MS),
                    "its provenance takes the copy past max.batch.bytes, and that is allowed");

            ByteBuffer onePast = copyOf(1001, 1, BASE_MS - 900);
            int size = onePast.remaining();
            TidemarkException tooLarge = refused(log, onePast);
            assertEquals(ErrorCode.RECORD_TOO_LARGE, tooLarge.code());
            int provenanceBytes = size - sourceBatch(1001).remaining();
            assertEquals("mirrored batch of " + size + " bytes is above max.batch.bytes " + maxBatchBytes + " of this "
                    + "topic plus the " + provenanceBytes + " bytes of its tidemark.origin headers ("
                    + (maxBatchBytes + provenanceBytes) + " bytes): its records take " + (maxBatchBytes + 1)
                    + " bytes as the origin held them", tooLarge.getMessage());
            assertEquals(1, log.logEndOffset());
        }
    }

    @Test
    void aCopysSendTimeIsHeldToTheWindowAroundItsOriginReceiveTime() throws Exception {
        long dayMs = 86_400_000;
        try (PartitionLog log = PartitionLog.open(dir, config("send.time.before.max.ms", "600000"), BASE_MS)) {
            assertEquals(new AppendResult(0, 0, BASE_MS), log.append(copyOf(1, 0, BASE_MS - 1000 + 600_000), BASE_MS),
                    "SendTime 10 minutes before its ReceiveTime on the source; the copy comes a day later");
            TidemarkException late = refused(log, copyOf(1, 1, BASE_MS - 1000 + 600_001));
            assertEquals(ErrorCode.INVALID_TIMESTAMP, late.code());
            assertEquals("record 0 of the batch has SendTime 1699999999000 (2023-11-14T22:13:19Z), outside the allowed "
                    + "range [1699999999001, 1700004199001] = origin ReceiveTime 1700000599001 - "
                    + "send.time.before.max.ms 600000 .. + send.time.after.max.ms 3600000; the whole batch was "
                    + "rejected", late.getMessage());
            assertEquals(new AppendResult(1, 1, BASE_MS + dayMs), log.append(copyOf(1, 2, BASE_MS - 1000),
                    BASE_MS + dayMs), "a day-old copy of a record the source took at once");
        }
    }
}
