package io.tidemark.core.log;

import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.tidemark.core.log.LogTestUtils.BASE_MS;
import static io.tidemark.core.log.LogTestUtils.bytes;
import static io.tidemark.core.log.LogTestUtils.config;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Transactions in one partition: the last stable offset held at the oldest open transaction, aborted transactions
 * listed for read_committed readers, batches outside an open transaction and stale markers refused, and all of it
 * the same after a restart from the segments, from an {@link AppendState} and after a truncation.
 */
class PartitionLogTransactionsTest {
    private static final short EPOCH = 3;

    @TempDir
    Path dir;

    @Test
    void theStableOffsetWaitsForTheOldestOpenTransactionAndAbortsAreListed() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(transactional(7, 0, 3), BASE_MS);                        // 0..2, producer 7 opens
            assertEquals(0, log.lastStableOffset());
            log.append(plain(2), BASE_MS);                                       // 3..4
            log.append(transactional(8, 0, 1), BASE_MS);                        // 5, producer 8 opens
            log.append(transactional(7, 3, 1), BASE_MS);                        // 6
            assertEquals(0, log.lastStableOffset(), "producer 7's transaction is still open");
            assertEquals(0, log.readCommitted(0, 1 << 20).batches().remaining(), "nothing stable yet");
            log.append(TransactionMarker.build(7, EPOCH, false, 0, BASE_MS), BASE_MS); // 7 aborts producer 7's
            assertEquals(5, log.lastStableOffset(), "producer 8's transaction opened at 5");
            assertEquals(List.of(new AppendState.AbortedTransaction(7, 0, 7)),
                    log.readCommitted(0, 1 << 20).abortedTransactions());
            assertEquals(List.of(0L, 3L), baseOffsets(log.readCommitted(0, 1 << 20).batches()),
                    "only batches below the stable offset");
            assertEquals(List.of(0L, 3L, 5L, 6L, 7L), baseOffsets(log.read(0, 1 << 20).batches()),
                    "read_uncommitted reads to the end");

            log.append(TransactionMarker.build(8, EPOCH, true, 0, BASE_MS), BASE_MS); // 8 commits producer 8's
            assertEquals(9, log.lastStableOffset());
            LogReadResult committed = log.readCommitted(0, 1 << 20);
            assertEquals(List.of(0L, 3L, 5L, 6L, 7L, 8L), baseOffsets(committed.batches()));
            assertEquals(List.of(new AppendState.AbortedTransaction(7, 0, 7)), committed.abortedTransactions());
            assertEquals(List.of(), log.readCommitted(8, 1 << 20).abortedTransactions(),
                    "an abort that ended before the read is not listed");
            assertEquals(List.of(new AppendState.AbortedTransaction(7, 0, 7)),
                    log.readCommitted(6, 1 << 20).abortedTransactions(), "nor one the read starts inside is missed");
        }
    }

    @Test
    void aProducerCannotWriteOutsideItsOpenTransactionAndOldMarkersAreRefused() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(transactional(7, 0, 2), BASE_MS);
            TidemarkException outside = assertThrows(TidemarkException.class,
                    () -> log.append(idempotent(7, 2, 1), BASE_MS));
            assertEquals(ErrorCode.INVALID_TXN_STATE, outside.code());
            assertEquals("producer 7 has a transaction open in this partition since offset 0; it cannot write outside "
                    + "it before the transaction ends", outside.getMessage());
            TidemarkException stale = assertThrows(TidemarkException.class, () -> log.append(
                    TransactionMarker.build(7, (short) (EPOCH - 1), true, 0, BASE_MS), BASE_MS));
            assertEquals(ErrorCode.INVALID_PRODUCER_EPOCH, stale.code());
            assertEquals("a transaction marker of producer 7 carries epoch 2, older than epoch 3 this partition saw",
                    stale.getMessage());
            assertEquals(2, log.logEndOffset(), "nothing of a refused batch is written");

            log.append(TransactionMarker.build(7, EPOCH, true, 0, BASE_MS), BASE_MS);
            assertEquals(new AppendResult(3, 3, BASE_MS), log.append(idempotent(7, 2, 1), BASE_MS),
                    "after its marker the producer writes outside a transaction again");
            assertEquals(new AppendResult(3, 3, BASE_MS), log.append(idempotent(7, 2, 1), BASE_MS),
                    "and its sequences still deduplicate");
        }
    }

    @Test
    void aMarkerOfANewerEpochFencesTheOlderAndADeposedCoordinatorsMarkerIsRefused() throws Exception {
        AppendState state;
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(transactional(7, 0, 2), BASE_MS);                                     // 0..1
            log.append(TransactionMarker.build(7, (short) (EPOCH + 1), false, 5, BASE_MS + 1), BASE_MS + 1); // 2
            TidemarkException fenced = assertThrows(TidemarkException.class,
                    () -> log.append(transactional(7, 2, 1), BASE_MS + 2));
            assertEquals(ErrorCode.INVALID_PRODUCER_EPOCH, fenced.code());
            assertEquals("producer 7 sent epoch 3, older than epoch 4 this partition saw: a newer instance of the "
                    + "producer took over", fenced.getMessage());
            TidemarkException deposed = assertThrows(TidemarkException.class, () -> log.append(
                    TransactionMarker.build(7, (short) (EPOCH + 1), true, 4, BASE_MS + 2), BASE_MS + 2));
            assertEquals("a transaction marker of producer 7 comes from coordinator epoch 4, older than epoch 5 "
                    + "whose marker this partition took: a deposed coordinator sent it", deposed.getMessage());
            state = log.appendState();
            assertEquals(List.of(new AppendState.Producer(7, (short) (EPOCH + 1), List.of(), BASE_MS + 1, 5)),
                    state.producers(), "the new epoch has no batches yet");
            ByteBuffer newEpoch = new RecordBatchBuilder().producer(7, (short) (EPOCH + 1), 0).transactional()
                    .append(BASE_MS, null, bytes("n")).build();
            assertEquals(new AppendResult(3, 3, BASE_MS + 3), log.append(newEpoch, BASE_MS + 3),
                    "the new epoch's sequences start at 0");
        }
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(EPOCH + 1, reopened.appendState().producers().get(0).epoch(), "rebuilt from the log");
            assertEquals(5, reopened.appendState().producers().get(0).coordinatorEpoch());
        }
    }

    @Test
    void theTransactionsSurviveARestartAStateAndATruncation() throws Exception {
        AppendState state;
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(transactional(7, 0, 2), BASE_MS);                        // 0..1
            log.append(TransactionMarker.build(7, EPOCH, false, 0, BASE_MS), BASE_MS); // 2
            log.append(transactional(8, 0, 1), BASE_MS);                        // 3
            log.append(transactional(7, 2, 1), BASE_MS);                        // 4
            log.append(TransactionMarker.build(8, EPOCH, true, 0, BASE_MS), BASE_MS); // 5
            state = log.appendState();
            assertEquals(List.of(new AppendState.OpenTransaction(7, 4)), state.openTransactions());
            assertEquals(List.of(new AppendState.AbortedTransaction(7, 0, 2)), state.abortedTransactions());
            assertEquals(4, log.lastStableOffset());
        }
        try (PartitionLog reopened = PartitionLog.open(dir, config(), BASE_MS)) {
            assertEquals(state, reopened.appendState(), "rebuilt from the segments");
            assertEquals(4, reopened.lastStableOffset());
            reopened.truncateTo(5);
            assertEquals(3, reopened.lastStableOffset(), "cut below producer 8's commit: its transaction is open");
            reopened.truncateTo(2);
            assertEquals(0, reopened.lastStableOffset(), "cut below the abort: open again");
            assertEquals(List.of(), reopened.appendState().abortedTransactions());
        }
        try (PartitionLog fromState = PartitionLog.openAt(dir.resolveSibling(dir.getFileName() + "-copy"), config(),
                AppendState.empty(0), BASE_MS)) {
            assertEquals(0, fromState.lastStableOffset());
        }
    }

    @Test
    void openAtTakesTheTransactionsOfTheState() throws Exception {
        AppendState state;
        try (PartitionLog log = PartitionLog.open(dir, config(), BASE_MS)) {
            log.append(transactional(7, 0, 2), BASE_MS);
            log.append(TransactionMarker.build(7, EPOCH, false, 0, BASE_MS), BASE_MS);
            log.append(transactional(9, 0, 1), BASE_MS);
            state = log.appendState();
        }
        try (PartitionLog reopened = PartitionLog.openAt(dir, config(), state, BASE_MS)) {
            assertEquals(state, reopened.appendState());
            assertEquals(3, reopened.lastStableOffset());
            assertEquals(List.of(new AppendState.AbortedTransaction(7, 0, 2)),
                    reopened.readCommitted(0, 1 << 20).abortedTransactions());
        }
    }

    private static ByteBuffer transactional(long producerId, int sequence, int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder().producer(producerId, EPOCH, sequence).transactional();
        return fill(builder, records);
    }

    private static ByteBuffer idempotent(long producerId, int sequence, int records) {
        return fill(new RecordBatchBuilder().producer(producerId, EPOCH, sequence), records);
    }

    private static ByteBuffer plain(int records) {
        return fill(new RecordBatchBuilder(), records);
    }

    private static ByteBuffer fill(RecordBatchBuilder builder, int records) {
        for (int i = 0; i < records; i++) {
            builder.append(BASE_MS, null, bytes("v" + i));
        }
        return builder.build();
    }

    private static List<Long> baseOffsets(ByteBuffer batches) {
        List<Long> offsets = new ArrayList<>();
        for (int position = batches.position(); position < batches.limit();
             position += RecordBatchFormat.totalSize(batches, position)) {
            offsets.add(RecordBatchFormat.baseOffset(batches, position));
        }
        return offsets;
    }
}
