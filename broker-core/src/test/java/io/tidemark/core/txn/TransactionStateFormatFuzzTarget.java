package io.tidemark.core.txn;

import io.tidemark.core.group.KeyedStateReads;
import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.RandomMessages;
import io.tidemark.proto.v1.TransactionState;

import java.util.SplittableRandom;

/**
 * {@link TransactionStateFormat}'s readers on any bytes, as the transaction coordinator replays
 * {@code __group_offsets}: an input {@link TransactionStateFormat#isTransactionStateKey} takes is read as a key, every
 * input as a value; each gives an id or state that encodes and reads back the same, or throws the documented
 * {@link IllegalStateException} the replay skips the record for.
 *
 * <p>Stateless.
 */
public final class TransactionStateFormatFuzzTarget implements FuzzTarget {
    private static final String[] IDS = {"", "t", "payments-1", "ü-ñ-名", "x".repeat(255)};

    private static final KeyedStateReads<TransactionState> READS = new KeyedStateReads<>(
            TransactionStateFormat::isTransactionStateKey, TransactionStateFormat::readTransactionalId,
            TransactionStateFormat::readValue, TransactionStateFormat::value);

    @Override
    public String name() {
        return "transaction-state";
    }

    @Override
    public byte[] valid(SplittableRandom random, StringBuilder how) {
        if (random.nextBoolean()) {
            how.append("transaction state key");
            return TransactionStateFormat.key(IDS[random.nextInt(IDS.length)] + random.nextInt(100));
        }
        how.append("transaction state value");
        return TransactionStateFormat.value(RandomMessages.fill(TransactionState.getDefaultInstance(), random, 3));
    }

    @Override
    public String run(byte[] input) {
        return READS.run(input);
    }
}
