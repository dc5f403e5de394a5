package io.tidemark.core.txn;

import org.junit.jupiter.api.Test;

import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TransactionStateFormatTest {
    @Test
    void anIdRoundTrips() {
        assertEquals("payments-1",
                TransactionStateFormat.readTransactionalId(TransactionStateFormat.key("payments-1")));
    }

    /**
     * The fuzzer's input 2 of seed 20261205 (InternalRecordsFuzzTest): a key announcing an id of 2 bytes, holding 1,
     * threw a BufferUnderflowException; now the documented IllegalStateException the replay skips a record for.
     */
    @Test
    void aKeyShorterThanItsIdIsRefused() {
        byte[] key = HexFormat.of().parseHex("0003000239");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> TransactionStateFormat.readTransactionalId(key));
        assertEquals("transaction state key of 5 bytes announces an id of 2 bytes", e.getMessage());
        assertThrows(IllegalStateException.class, () -> TransactionStateFormat.readValue(new byte[] {0}));
    }
}
