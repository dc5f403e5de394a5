package io.tidemark.core.txn;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.proto.v1.TransactionState;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The key and value of a transaction state record in the internal topic {@code __group_offsets}: one record per
 * transactional id, written by the transaction coordinator at every change of the id's state, so the next coordinator
 * carries on with the same producer id, epoch and open transaction. The latest record for a key wins. Beside the
 * offset commits and group states, told apart by the first two bytes of a key.
 *
 * <h2>Key (big-endian)</h2>
 * <pre>
 * kind              int16   3 (an offset commit's key starts with 1, a group state's with 2)
 * transactional id  int16 length, then UTF-8 bytes
 * </pre>
 * <h2>Value</h2>
 * <pre>
 * version     int16   1 (big-endian)
 * state       the rest: a protobuf TransactionState (proto/tidemark/v1/transaction.proto)
 * </pre>
 *
 * <p>Stateless.
 */
public final class TransactionStateFormat {
    static final short KEY_KIND = 3;
    private static final short VERSION = 1;
    private static final int ID_LENGTH_OFFSET = 2;
    private static final int ID_OFFSET = ID_LENGTH_OFFSET + 2;

    private TransactionStateFormat() {
    }

    /** Whether {@code key} is a transaction state record's. */
    public static boolean isTransactionStateKey(byte[] key) {
        return key != null && key.length >= 2 && ByteBuffer.wrap(key).getShort() == KEY_KIND;
    }

    public static byte[] key(String transactionalId) {
        byte[] id = transactionalId.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + 2 + id.length).putShort(KEY_KIND).putShort((short) id.length).put(id).array();
    }

    public static byte[] value(TransactionState state) {
        byte[] bytes = state.toByteArray();
        return ByteBuffer.allocate(2 + bytes.length).putShort(VERSION).put(bytes).array();
    }

    /** @throws IllegalStateException when the key is shorter than the id its length announces */
    public static String readTransactionalId(byte[] key) {
        if (key.length < ID_OFFSET) {
            throw new IllegalStateException("transaction state key of " + key.length
                    + " bytes is shorter than its kind and length");
        }
        int length = ByteBuffer.wrap(key).getShort(ID_LENGTH_OFFSET);
        if (length < 0 || length > key.length - ID_OFFSET) {
            throw new IllegalStateException("transaction state key of " + key.length + " bytes announces an id of "
                    + length + " bytes");
        }
        return new String(key, ID_OFFSET, length, StandardCharsets.UTF_8);
    }

    /** @throws IllegalStateException when the value is of another version or does not parse */
    public static TransactionState readValue(byte[] value) {
        if (value.length < 2) {
            throw new IllegalStateException("transaction state value of " + value.length + " bytes has no version");
        }
        ByteBuffer buffer = ByteBuffer.wrap(value);
        short version = buffer.getShort();
        if (version != VERSION) {
            throw new IllegalStateException("transaction state value has version " + version + "; this broker reads "
                    + "version " + VERSION);
        }
        try {
            return TransactionState.parseFrom(buffer);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("transaction state value does not parse: " + e.getMessage(), e);
        }
    }
}
