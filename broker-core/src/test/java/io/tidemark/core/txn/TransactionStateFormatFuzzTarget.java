package io.tidemark.core.txn;

import io.tidemark.proto.fuzz.FuzzTarget;
import io.tidemark.proto.fuzz.RandomMessages;
import io.tidemark.proto.v1.TransactionState;

import java.util.SplittableRandom;

import static io.tidemark.proto.fuzz.FuzzFailure.check;
import static io.tidemark.proto.fuzz.FuzzFailure.checkEquals;

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
        String key = "no key";
        if (TransactionStateFormat.isTransactionStateKey(input)) {
            try {
                String id = TransactionStateFormat.readTransactionalId(input);
                check(id.length() <= input.length, "an id of " + id.length() + " chars from " + input.length
                        + " bytes");
                key = "key " + ACCEPTED;
            } catch (IllegalStateException e) {
                key = "key " + REFUSED;
            }
        }
        String value;
        try {
            TransactionState state = TransactionStateFormat.readValue(input);
            checkEquals(state, TransactionStateFormat.readValue(TransactionStateFormat.value(state)),
                    "the state read back");
            value = "value " + ACCEPTED;
        } catch (IllegalStateException e) {
            value = "value " + REFUSED;
        }
        return (key.endsWith(ACCEPTED) || value.endsWith(ACCEPTED) ? ACCEPTED : REFUSED) + ": " + key + ", " + value;
    }
}
