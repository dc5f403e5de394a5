package io.tidemark.replication.statemachine;

import io.tidemark.core.log.AppendResult;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The bytes a partition's Raft group carries: the log entry of a produce, and the state machine's reply to it.
 *
 * <h2>Entry (big-endian)</h2>
 * <pre>
 *  0  int8    type: 1 = one record batch
 *  1  int64   ReceiveTime stamped by the leader in preAppendTransaction, in log order
 *  9  bytes   the batch as the producer built it (RecordBatchFormat; base offset and ReceiveTime unset)
 * </pre>
 * Every replica appends the batch with ReceiveTime {@code max(stamped, last ReceiveTime in its log)} and the next
 * offset of its log, so all replicas store identical bytes. The batch is validated again when it is applied (the
 * same on every replica); a batch refused then gets an error reply and changes nothing.
 *
 * <h2>Reply (big-endian)</h2>
 * <pre>
 * appended:  int8 0, int64 base offset, int64 last offset, int64 ReceiveTime
 * refused:   int8 1, int32 ErrorCode number, UTF-8 message (the rest)
 * </pre>
 */
public final class PartitionEntryFormat {
    static final byte BATCH = 1;
    static final int RECEIVE_TIME_OFFSET = 1;
    static final int BATCH_OFFSET = 9;
    private static final byte APPENDED = 0;
    private static final byte REFUSED = 1;

    private PartitionEntryFormat() {
    }

    /** An entry for {@code batch} with room for the ReceiveTime the leader stamps later. */
    static byte[] entry(ByteBuffer batch) {
        byte[] entry = new byte[BATCH_OFFSET + batch.remaining()];
        entry[0] = BATCH;
        batch.duplicate().get(entry, BATCH_OFFSET, batch.remaining());
        return entry;
    }

    static void stamp(byte[] entry, long receiveTimeMs) {
        ByteBuffer.wrap(entry).putLong(RECEIVE_TIME_OFFSET, receiveTimeMs);
    }

    static byte[] appended(AppendResult result) {
        return ByteBuffer.allocate(25).put(APPENDED).putLong(result.baseOffset()).putLong(result.lastOffset())
                .putLong(result.receiveTimeMs()).array();
    }

    static byte[] refused(TidemarkException error) {
        byte[] message = error.getMessage().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + message.length).put(REFUSED).putInt(error.code().getNumber()).put(message).array();
    }

    /**
     * Reads a reply.
     *
     * @throws TidemarkException the refusal it carries
     */
    public static AppendResult readReply(ByteBuffer reply) {
        if (reply.get(0) == APPENDED) {
            return new AppendResult(reply.getLong(1), reply.getLong(9), reply.getLong(17));
        }
        ErrorCode code = ErrorCode.forNumber(reply.getInt(1));
        byte[] message = new byte[reply.remaining() - 5];
        reply.get(5, message);
        throw new TidemarkException(code == null ? ErrorCode.INTERNAL_ERROR : code,
                new String(message, StandardCharsets.UTF_8));
    }
}
