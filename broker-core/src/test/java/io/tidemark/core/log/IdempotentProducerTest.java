package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.admitAndAppend;
import static io.tidemark.core.log.LogTestUtils.config;
import static io.tidemark.core.log.LogTestUtils.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A batch an idempotent producer sends again is answered with the first one's result and stored once. */
class IdempotentProducerTest {
    @TempDir
    Path dir;

    private static ByteBuffer batch(long producerId, short epoch, int baseSequence, int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder().producer(producerId, epoch, baseSequence);
        for (int i = 0; i < records; i++) {
            builder.append(BASE_MS, null, LogTestUtils.bytes("p" + producerId + "-s" + (baseSequence + i)));
        }
        return builder.build();
    }

    @Test
    void aResentBatchIsStoredOnceAndAnsweredWithItsFirstResult() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(new AppendResult(0, 2, BASE_MS), log.append(batch(7, (short) 0, 0, 3), BASE_MS));
            assertEquals(new AppendResult(3, 3, BASE_MS + 5), log.append(batch(8, (short) 0, 40, 1), BASE_MS + 5));
            assertEquals(new AppendResult(0, 2, BASE_MS), log.append(batch(7, (short) 0, 0, 3), BASE_MS + 9),
                    "the duplicate gets the original offsets and ReceiveTime");
            assertEquals(4, log.logEndOffset());
            assertEquals(new AppendResult(4, 5, BASE_MS + 9), log.append(batch(7, (short) 0, 3, 2), BASE_MS + 9));
        }
    }

    @Test
    void aGapInSequencesAndAnOldEpochAreRefused() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(batch(7, (short) 1, 0, 3), BASE_MS);
            TidemarkException gap = assertThrows(TidemarkException.class,
                    () -> log.append(batch(7, (short) 1, 5, 1), BASE_MS));
            assertEquals(ErrorCode.OUT_OF_ORDER_SEQUENCE, gap.code());
            assertEquals("producer 7 sent sequence 5; this partition expects 3 (its last stored batch ended at 2)",
                    gap.getMessage());
            TidemarkException fenced = assertThrows(TidemarkException.class,
                    () -> log.append(batch(7, (short) 0, 3, 1), BASE_MS));
            assertEquals(ErrorCode.INVALID_PRODUCER_EPOCH, fenced.code());
            assertEquals(new AppendResult(3, 3, BASE_MS), log.append(batch(7, (short) 2, 0, 1), BASE_MS),
                    "a newer epoch starts over");
            assertEquals(4, log.logEndOffset());
        }
    }

    /**
     * The fuzzer's input 266 of seed 20261205 (PartitionLogFuzzTest): a plain batch of 3 records whose producer id
     * became 965, its epoch and base sequence still -1, CRC recomputed. It was admitted, and the log wrote it to its
     * segment and then failed recording sequence -1 for producer 965 (IllegalArgumentException): the log end offset
     * stayed, so the next batch took the same offsets, and the log did not open again. Now it is refused as corrupt
     * and the log is as it was.
     */
    @Test
    void aBatchOfAProducerWithANegativeSequenceIsRefusedAndChangesNothing() throws Exception {
        ByteBuffer batch = ByteBuffer.wrap(HexFormat.of().parseHex(FUZZ_INPUT_266)).asReadOnlyBuffer();
        long receiveTimeMs = 1_767_225_600_000L;
        try (PartitionLog log = PartitionLog.open(dir, config(), receiveTimeMs)) {
            admitAndAppend(log, LogTestUtils.singleRecordBatch(0, receiveTimeMs), receiveTimeMs);
            AppendState before = log.appendState();
            List<SegmentInfo> segments = log.segments();

            TidemarkException e = assertThrows(TidemarkException.class,
                    () -> admitAndAppend(log, batch, receiveTimeMs));
            assertEquals(ErrorCode.CORRUPT_BATCH, e.code());
            assertEquals("corrupt record batch: a batch of producer 965 needs a producer id, epoch and base sequence "
                    + "that are not negative, not 965, -1 and -1 (a batch of no idempotent producer has producer id "
                    + "-1)",
                    e.getMessage());
            assertEquals(before, log.appendState());
            assertEquals(segments, log.segments());
            admitAndAppend(log, LogTestUtils.singleRecordBatch(1, receiveTimeMs), receiveTimeMs);
        }
        try (PartitionLog log = PartitionLog.open(dir, config(), receiveTimeMs)) {
            assertEquals(2, readAll(log).size());
        }
    }

    private static final String FUZZ_INPUT_266 = ""
            + "00000000000000000000019e27ebb7940100ffff00000003ffffffffffffffff0000019b76d70ac30000019b76d70ada0000"
            + "0000000003c5ffffffff8e010000019002e5bce90d0ed77239182a6cb6fd29c2c108c0239b1d1c4602b05042b63717750c5b"
            + "63952ab00f55830426c0e9e7513416747e3db3b8e693bd2a18ce6f74dc0fe47639f18dfbb01eb3845703b709e5ed80b015a1"
            + "1f77ce60b30b48b15a9fb614fa0ddbc78b44e46c951a3ff1b1a6dc090298c10a12f3029abf8faa2a45e2748db2dd84c0eecf"
            + "dae778003a012206e5465664c5a2ece56b8f04292c1f713d1ee9dbd81d7455db6d764bee4e662882efde35b1ce451eafdb17"
            + "cf2baf3b25532952d918725000a101022e02aea4025ff2f8f2403a2d361349f3d17aa1567a9e0295fa73c8f16fe49b9a549d"
            + "82502bc5c56dcece9c9c7f2ab3bbd3de73a90ed3575eba8cdf9e725976360a53e9cba1971183cf9a5e4da6f954bfe1475b65"
            + "7514fd7b02d319ee42629a094b90a756119035b4a4f415c0f15998816a34ec031b32af55feff1a03edb5e52bb2529f5cc741"
            + "131d5a65f62f8f9d325d191d4cfdb666a002016801c10002bd75";

    @Test
    void sequencesWrapLikeTheProducers() throws Exception {
        assertEquals(0, ProducerStateTable.advance(Integer.MAX_VALUE, 1));
        assertEquals(1, ProducerStateTable.advance(Integer.MAX_VALUE - 1, 3));
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(batch(7, (short) 0, Integer.MAX_VALUE - 1, 2), BASE_MS);
            assertEquals(new AppendResult(2, 2, BASE_MS), log.append(batch(7, (short) 0, 0, 1), BASE_MS));
        }
    }

    @Test
    void theTableIsRebuiltFromTheLogOnOpenAndAfterTruncation() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(batch(7, (short) 0, 0, 2), BASE_MS);
            log.append(batch(7, (short) 0, 2, 2), BASE_MS);
        }
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(new AppendResult(2, 3, BASE_MS), reopened.append(batch(7, (short) 0, 2, 2), BASE_MS));
            assertEquals(4, reopened.logEndOffset());
            reopened.truncateTo(2);
            assertEquals(new AppendResult(2, 3, BASE_MS + 1), reopened.append(batch(7, (short) 0, 2, 2), BASE_MS + 1),
                    "a truncated batch is gone from the table too, so its resend is stored");
            assertEquals(4, readAll(reopened).size());
        }
    }
}
