package io.tidemark.replication.statemachine;

import io.tidemark.core.log.AppendResult;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The bytes a partition's Raft group carries: the request a leader submits (one or more produced batches,
 * coalesced by group commit), the log entry the state machine makes of it, and the state machine's reply.
 * All big-endian.
 *
 * <h2>Request (the Raft client message)</h2>
 * <pre>
 *  0  int32   N, the number of batches (1 or more)
 *  4  N times:
 *       int32   L, the batch's length in bytes
 *       L bytes the batch as the producer built it (RecordBatchFormat; base offset and ReceiveTime unset)
 * </pre>
 *
 * <h2>Entry (the Raft log entry's state machine data)</h2>
 * <pre>
 *  0  int8    type: 1 = batches
 *  1  int64   ReceiveTime stamped by the leader in preAppendTransaction, in log order
 *  9  bytes   the request, unchanged
 * </pre>
 * The 9-byte header is a separate buffer joined to the request without copying it (a rope), so stamping the
 * ReceiveTime writes 8 bytes, not the batches. Every replica appends the batches in order, each with ReceiveTime
 * {@code max(stamped, last ReceiveTime in its log)} and the next offset of its log, so all replicas store
 * identical bytes. Each batch is validated again when it is applied (the same on every replica); a batch refused
 * then gets an error outcome, changes nothing, and does not affect the others of the entry.
 *
 * <h2>Reply</h2>
 * <pre>
 *  0  int32   N, as in the request
 *  4  N outcomes, in the request's order:
 *       appended:  int8 0, int64 base offset, int64 last offset, int64 ReceiveTime
 *       refused:   int8 1, int32 ErrorCode number, int32 M, M bytes UTF-8 message
 * </pre>
 */
public final class PartitionEntryFormat {
    static final byte BATCHES = 1;
    static final int TYPE_OFFSET = 0;
    static final int RECEIVE_TIME_OFFSET = TYPE_OFFSET + 1;
    /** Where the request starts in an entry: the entry header's length. */
    static final int REQUEST_OFFSET = RECEIVE_TIME_OFFSET + 8;
    /** Bytes of a request besides its batches: the count, and a length per batch. */
    public static final int REQUEST_HEADER_BYTES = 4;
    public static final int BATCH_FRAME_BYTES = 4;
    private static final byte APPENDED = 0;
    private static final byte REFUSED = 1;
    private static final int APPENDED_BYTES = 1 + 3 * 8;

    private PartitionEntryFormat() {
    }

    /** The largest batch a request of at most {@code maxRequestBytes} carries: one batch and its framing. */
    public static int largestBatchBytes(int maxRequestBytes) {
        return maxRequestBytes - REQUEST_HEADER_BYTES - BATCH_FRAME_BYTES;
    }

    /** A request carrying {@code batches} (each between its position and limit, left unchanged), in order. */
    public static byte[] request(List<ByteBuffer> batches) {
        int size = REQUEST_HEADER_BYTES;
        for (ByteBuffer batch : batches) {
            size += BATCH_FRAME_BYTES + batch.remaining();
        }
        ByteBuffer request = ByteBuffer.allocate(size).putInt(batches.size());
        for (ByteBuffer batch : batches) {
            request.putInt(batch.remaining()).put(batch.duplicate());
        }
        return request.array();
    }

    /** The header of an entry, with room for the ReceiveTime the leader stamps later. */
    static byte[] entryHeader() {
        byte[] header = new byte[REQUEST_OFFSET];
        header[TYPE_OFFSET] = BATCHES;
        return header;
    }

    static void stamp(byte[] entryHeader, long receiveTimeMs) {
        ByteBuffer.wrap(entryHeader).putLong(RECEIVE_TIME_OFFSET, receiveTimeMs);
    }

    /** The ReceiveTime stamped into an entry. */
    static long stampedReceiveTime(ByteBuffer entry) {
        checkType(entry);
        return entry.getLong(entry.position() + RECEIVE_TIME_OFFSET);
    }

    /**
     * The batches of an entry, each a read-only slice of it, in order.
     *
     * @throws IllegalStateException when the entry is not of this format (a Raft log this broker cannot read)
     */
    static List<ByteBuffer> batches(ByteBuffer entry) {
        checkType(entry);
        int at = entry.position() + REQUEST_OFFSET;
        int count = entry.getInt(at);
        at += REQUEST_HEADER_BYTES;
        List<ByteBuffer> batches = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int length = entry.getInt(at);
            at += BATCH_FRAME_BYTES;
            if (length < 0 || at + length > entry.limit()) {
                throw new IllegalStateException("batch " + i + " of " + count + " has length " + length
                        + ", beyond the entry's " + entry.remaining() + " bytes");
            }
            batches.add(entry.slice(at, length).asReadOnlyBuffer());
            at += length;
        }
        return batches;
    }

    private static void checkType(ByteBuffer entry) {
        byte type = entry.get(entry.position() + TYPE_OFFSET);
        if (type != BATCHES) {
            throw new IllegalStateException("entry type " + type + " is not " + BATCHES + " (batches)");
        }
    }

    /** Builds the reply of an entry: one outcome per batch, in the entry's order. */
    static final class ReplyWriter {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final DataOutputStream out = new DataOutputStream(bytes);

        ReplyWriter(int count) {
            write(() -> out.writeInt(count));
        }

        void appended(AppendResult result) {
            write(() -> {
                out.writeByte(APPENDED);
                out.writeLong(result.baseOffset());
                out.writeLong(result.lastOffset());
                out.writeLong(result.receiveTimeMs());
            });
        }

        void refused(TidemarkException error) {
            byte[] message = error.getMessage().getBytes(StandardCharsets.UTF_8);
            write(() -> {
                out.writeByte(REFUSED);
                out.writeInt(error.code().getNumber());
                out.writeInt(message.length);
                out.write(message);
            });
        }

        byte[] toBytes() {
            return bytes.toByteArray();
        }

        /** Writing to memory cannot fail; the stream's signature says it can. */
        private static void write(MemoryWrite write) {
            try {
                write.run();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private interface MemoryWrite {
            void run() throws IOException;
        }
    }

    /** What the state machine did with one batch of an entry: appended it, or refused it with an error. */
    public record Outcome(AppendResult appended, TidemarkException refused) {
    }

    /**
     * Reads a reply's outcomes, in the request's order.
     *
     * @throws IllegalStateException when the reply does not have {@code expected} outcomes
     */
    public static List<Outcome> readReply(ByteBuffer reply, int expected) {
        int at = reply.position();
        int count = reply.getInt(at);
        if (count != expected) {
            throw new IllegalStateException("reply has " + count + " outcomes for " + expected + " batches");
        }
        at += 4;
        List<Outcome> outcomes = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            if (reply.get(at) == APPENDED) {
                outcomes.add(new Outcome(new AppendResult(reply.getLong(at + 1), reply.getLong(at + 9),
                        reply.getLong(at + 17)), null));
                at += APPENDED_BYTES;
            } else {
                ErrorCode code = ErrorCode.forNumber(reply.getInt(at + 1));
                byte[] message = new byte[reply.getInt(at + 5)];
                reply.get(at + 9, message);
                outcomes.add(new Outcome(null, new TidemarkException(code == null ? ErrorCode.INTERNAL_ERROR : code,
                        new String(message, StandardCharsets.UTF_8))));
                at += 9 + message.length;
            }
        }
        return outcomes;
    }
}
