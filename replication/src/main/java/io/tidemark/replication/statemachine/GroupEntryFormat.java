package io.tidemark.replication.statemachine;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tidemark.core.log.AppendResult;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.record.RecordBatchFormat;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupPartition;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The bytes a partition group's Raft log carries (a group hosts many partitions): the request a leader submits, which
 * is also the log entry once the leader has stamped it, and the state machine's reply. All big-endian.
 *
 * <h2>Entry of batches (type 1)</h2>
 * The produced batches of any partitions of the group that group commit put together: a table of one slot per batch,
 * then the batches, back to back, in slot order.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type = 1    |                 N: batches (int32)            |  0
 * +-+-+-+-+-+-+-+-+-----------------------------------------------+
 * |                 N slots of 52 bytes, each:                    |  5
 * |  0  Topic Id, most significant half (int64)                   |
 * |  8  Topic Id, least significant half (int64)                  |
 * | 16  Partition (int32)                                         |
 * | 20  L: the batch's length in bytes (int32)                    |
 * | 24  Min SendTime: the smallest SendTime of its records (int64)|
 * | 32  Max SendTime: the largest (int64)                         |
 * | 40  ReceiveTime (int64): 0 in the request, stamped by leader  |
 * | 48  Verdict (int16): 0 in the request; stamped by the leader: |
 * |     0 = append, else the ErrorCode number it refused it with  |
 * | 50  Flags (int16): bit 0 = held to no SendTime window here: a |
 * |     mirrored batch (held to the window around its origin      |
 * |     ReceiveTime already) or a transaction marker              |
 * +---------------------------------------------------------------+
 * |                 N batches (RecordBatchFormat), as produced    |  5 + 52 N
 * +---------------------------------------------------------------+
 * </pre>
 * The table is one small array; the batches are joined to it without copying (a rope of the produce requests'
 * bytes). The leader stamps each slot in {@code preAppendTransaction}, in log order: the ReceiveTime
 * {@code max(now, last stamped for the partition, last in its log)} and the verdict on the batch's SendTimes against
 * its topic's window around that time (the other checks were made before the batch was submitted,
 * {@code BatchAdmission}). Replicas apply what the slots say: they never consult a topic's config, which each
 * replica takes at its own moment. The SendTimes sit in the slot so the verdict takes two comparisons, not a walk of
 * the records.
 *
 * <h2>Entry of batches, all or none (type 4)</h2>
 * The layout of type 1, stamped the same way, for batches that must be stored together or not at all: a transaction
 * whose partitions all sit in this group ends in one such entry (the coordinator's state record and every marker),
 * without two phases. Every replica first checks every batch against what would refuse it (the leader's verdict, the
 * partition hosted here and live, a marker's producer and coordinator epochs): if one is refused, every batch is
 * refused, each with the reason of the first, and nothing is appended. Its batches are transaction markers and batches
 * without a producer id, each to another partition, so a check made before the appends still holds for each (an
 * idempotent producer's sequence would be judged against the batches before it); the leader refuses other requests.
 *
 * <h2>Entry of a partition change (type 2)</h2>
 * <pre>
 *  0  int8    type = 2
 *  1  bytes   a GroupChange protobuf (cluster.proto): partitions added, removed, imported, activated, sealed
 * </pre>
 *
 * <h2>Entry of copied batches (type 3)</h2>
 * Batches of a partition moving into the group, as the group it leaves stores them (offsets, ReceiveTimes and CRCs
 * kept), for a partition the group imports ({@code PartitionMove}).
 * <pre>
 *  0  int8    type = 3
 *  1  int64   topic id, most significant half
 *  9  int64   topic id, least significant half
 * 17  int32   partition
 * 21  int64   log start offset of the copied log when read: a copy whose log ends below it starts again there
 * 29  bytes   batches (RecordBatchFormat), back to back, in offset order; none to only create or restart the copy
 * </pre>
 *
 * <h2>Reply (to an entry of batches, either type)</h2>
 * <pre>
 *  0  int32   N, as in the entry
 *  4  N outcomes, in slot order:
 *       appended:  int8 0, int64 base offset, int64 last offset, int64 ReceiveTime
 *       refused:   int8 1, int32 ErrorCode number, int32 M, M bytes UTF-8 message
 * </pre>
 * The reply to a partition change is a GroupChangeReply protobuf (cluster.proto). The reply to copied batches:
 * <pre>
 *  0  int64   the partition's log end offset afterwards (-1 when the group does not host it)
 *  8  int32   0, or the ErrorCode number the copy was refused with
 * 12  int32   M, then M bytes UTF-8 message (M = 0 when taken)
 * </pre>
 *
 * <p>Stateless.
 */
public final class GroupEntryFormat {
    public static final byte BATCHES = 1;
    public static final byte CHANGE = 2;
    public static final byte COPY = 3;
    public static final byte ALL_OR_NONE = 4;
    static final int TYPE_OFFSET = 0;
    static final int COUNT_OFFSET = TYPE_OFFSET + 1;
    static final int SLOTS_OFFSET = COUNT_OFFSET + 4;
    static final int TOPIC_ID_MSB_OFFSET = 0;
    static final int TOPIC_ID_LSB_OFFSET = TOPIC_ID_MSB_OFFSET + 8;
    static final int PARTITION_OFFSET = TOPIC_ID_LSB_OFFSET + 8;
    static final int LENGTH_OFFSET = PARTITION_OFFSET + 4;
    static final int MIN_SEND_TIME_OFFSET = LENGTH_OFFSET + 4;
    static final int MAX_SEND_TIME_OFFSET = MIN_SEND_TIME_OFFSET + 8;
    static final int RECEIVE_TIME_OFFSET = MAX_SEND_TIME_OFFSET + 8;
    static final int VERDICT_OFFSET = RECEIVE_TIME_OFFSET + 8;
    static final int FLAGS_OFFSET = VERDICT_OFFSET + 2;
    public static final int SLOT_BYTES = FLAGS_OFFSET + 2;
    static final short MIRRORED = 1;
    /** The verdict of a batch the leader let through. */
    static final short APPEND = 0;
    private static final byte APPENDED = 0;
    private static final byte REFUSED = 1;
    private static final int APPENDED_BYTES = 1 + 3 * 8;
    static final int COPY_TOPIC_ID_MSB_OFFSET = TYPE_OFFSET + 1;
    static final int COPY_TOPIC_ID_LSB_OFFSET = COPY_TOPIC_ID_MSB_OFFSET + 8;
    static final int COPY_PARTITION_OFFSET = COPY_TOPIC_ID_LSB_OFFSET + 8;
    static final int COPY_LOG_START_OFFSET = COPY_PARTITION_OFFSET + 4;
    static final int COPY_BATCHES_OFFSET = COPY_LOG_START_OFFSET + 8;

    private GroupEntryFormat() {
    }

    /**
     * A batch to submit: the partition it goes to, its bytes (between position and limit, left unchanged) and what its
     * admission found.
     */
    public record Submitted(PartitionKey partition, ByteBuffer batch, long minSendTimeMs, long maxSendTimeMs,
                            boolean mirrored) {
    }

    /** The bytes an entry of {@code batches} takes beside them: its table. */
    public static int tableBytes(int batches) {
        return SLOTS_OFFSET + batches * SLOT_BYTES;
    }

    /** The largest batch an entry of at most {@code maxEntryBytes} carries: one batch and its table. */
    public static int largestBatchBytes(int maxEntryBytes) {
        return maxEntryBytes - tableBytes(1);
    }

    /** A request (and, once stamped, the entry) of {@code batches}: the table joined to the batches, not copied. */
    public static ByteString request(List<Submitted> batches) {
        return batchesRequest(BATCHES, batches);
    }

    /**
     * A request of {@code batches} stored all or none: transaction markers and batches without a producer id, each to
     * another partition.
     */
    public static ByteString allOrNone(List<Submitted> batches) {
        return batchesRequest(ALL_OR_NONE, batches);
    }

    private static ByteString batchesRequest(byte type, List<Submitted> batches) {
        ByteBuffer table = ByteBuffer.allocate(tableBytes(batches.size())).put(TYPE_OFFSET, type)
                .putInt(COUNT_OFFSET, batches.size());
        for (int i = 0; i < batches.size(); i++) {
            Submitted submitted = batches.get(i);
            int slot = SLOTS_OFFSET + i * SLOT_BYTES;
            table.putLong(slot + TOPIC_ID_MSB_OFFSET, submitted.partition().topicId().getMostSignificantBits())
                    .putLong(slot + TOPIC_ID_LSB_OFFSET, submitted.partition().topicId().getLeastSignificantBits())
                    .putInt(slot + PARTITION_OFFSET, submitted.partition().partition())
                    .putInt(slot + LENGTH_OFFSET, submitted.batch().remaining())
                    .putLong(slot + MIN_SEND_TIME_OFFSET, submitted.minSendTimeMs())
                    .putLong(slot + MAX_SEND_TIME_OFFSET, submitted.maxSendTimeMs())
                    .putShort(slot + FLAGS_OFFSET, submitted.mirrored() ? MIRRORED : 0);
        }
        ByteString request = UnsafeByteOperations.unsafeWrap(table.array());
        for (Submitted submitted : batches) {
            request = request.concat(UnsafeByteOperations.unsafeWrap(submitted.batch().duplicate()));
        }
        return request;
    }

    /**
     * An entry of batches whose table the leader can stamp in place: {@code array} starts with the table, and
     * {@code data} reads its first bytes from it.
     */
    record Stampable(byte[] array, ByteString data) {
    }

    /**
     * The entry of a request of batches, ready to stamp: its table copied into an array of its own (a few dozen bytes
     * a batch) joined to the rest of the request, not copied. Protobuf copies a small join into one flat array
     * instead of joining; the array is then that whole entry.
     */
    static Stampable stampable(ByteString request) {
        int tableBytes = tableBytes(count(request));
        byte[] table = request.substring(0, tableBytes).toByteArray();
        ByteString data = UnsafeByteOperations.unsafeWrap(table).concat(request.substring(tableBytes));
        if (!sharesFirstBytes(data, table)) {
            table = data.toByteArray();
            data = UnsafeByteOperations.unsafeWrap(table);
        }
        return new Stampable(table, data);
    }

    /** Whether {@code data} reads its first bytes from {@code array}: a write to the array shows through. */
    private static boolean sharesFirstBytes(ByteString data, byte[] array) {
        byte was = array[TYPE_OFFSET];
        array[TYPE_OFFSET] = (byte) (was + 1);
        boolean shared = data.byteAt(TYPE_OFFSET) == array[TYPE_OFFSET];
        array[TYPE_OFFSET] = was;
        return shared;
    }

    /** A request (and entry) of a partition change. */
    public static ByteString change(GroupChange change) {
        return UnsafeByteOperations.unsafeWrap(new byte[] {CHANGE}).concat(UnsafeByteOperations.unsafeWrap(
                change.toByteArray()));
    }

    /** The largest batches an entry of copied batches of at most {@code maxEntryBytes} carries. */
    public static int largestCopyBytes(int maxEntryBytes) {
        return maxEntryBytes - COPY_BATCHES_OFFSET;
    }

    /** A request (and entry) of copied batches: its header joined to the batches, not copied. */
    public static ByteString copy(PartitionKey partition, long logStartOffset, ByteBuffer batches) {
        ByteBuffer header = ByteBuffer.allocate(COPY_BATCHES_OFFSET).put(TYPE_OFFSET, COPY)
                .putLong(COPY_TOPIC_ID_MSB_OFFSET, partition.topicId().getMostSignificantBits())
                .putLong(COPY_TOPIC_ID_LSB_OFFSET, partition.topicId().getLeastSignificantBits())
                .putInt(COPY_PARTITION_OFFSET, partition.partition())
                .putLong(COPY_LOG_START_OFFSET, logStartOffset);
        return UnsafeByteOperations.unsafeWrap(header.array()).concat(UnsafeByteOperations.unsafeWrap(
                batches.duplicate()));
    }

    /** An entry of copied batches, read where it lies: {@code batches} is a read-only slice of it. */
    record Copy(PartitionKey partition, long logStartOffset, ByteBuffer batches) {
    }

    static Copy readCopy(ByteBuffer entry) {
        int at = entry.position();
        return new Copy(new PartitionKey(new UUID(entry.getLong(at + COPY_TOPIC_ID_MSB_OFFSET),
                entry.getLong(at + COPY_TOPIC_ID_LSB_OFFSET)), entry.getInt(at + COPY_PARTITION_OFFSET)),
                entry.getLong(at + COPY_LOG_START_OFFSET),
                entry.slice(at + COPY_BATCHES_OFFSET, entry.remaining() - COPY_BATCHES_OFFSET).asReadOnlyBuffer());
    }

    /** What the group did with copied batches: the partition's log end afterwards, and why it refused them if so. */
    public record CopyOutcome(long logEndOffset, TidemarkException refused) {
    }

    static byte[] copyReply(long logEndOffset, TidemarkException refused) {
        byte[] text = refused == null ? new byte[0] : refused.getMessage().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(16 + text.length).putLong(logEndOffset)
                .putInt(refused == null ? 0 : refused.code().getNumber()).putInt(text.length).put(text).array();
    }

    public static CopyOutcome readCopyReply(ByteBuffer reply) {
        int at = reply.position();
        int code = reply.getInt(at + 8);
        if (code == 0) {
            return new CopyOutcome(reply.getLong(at), null);
        }
        byte[] message = new byte[reply.getInt(at + 12)];
        reply.get(at + 16, message);
        ErrorCode errorCode = ErrorCode.forNumber(code);
        return new CopyOutcome(reply.getLong(at), new TidemarkException(errorCode == null ? ErrorCode.INTERNAL_ERROR
                : errorCode, new String(message, StandardCharsets.UTF_8)));
    }

    /**
     * Checks a request's structure before it becomes an entry, so that no entry can fail the group's apply: a known
     * type; for batches a count of at least 1, slots whose partitions are not negative and that are not stamped
     * (ReceiveTime and verdict 0, only the mirrored flag), and batches whose lengths are at least a batch header and
     * add up to the request; for a change a GroupChange whose partitions name 16-byte topic ids and partitions not
     * negative; for a copy a whole header and a partition not negative. What the batches hold is checked where the
     * partition's config is known ({@link PartitionHost#checkRequest}).
     *
     * @throws TidemarkException INVALID_REQUEST naming what is wrong
     */
    static void checkRequest(ByteString request) {
        if (request.isEmpty()) {
            throw invalid("an empty request");
        }
        switch (type(request)) {
            case BATCHES -> checkBatchesRequest(request);
            case ALL_OR_NONE -> {
                checkBatchesRequest(request);
                checkAllOrNone(request);
            }
            case CHANGE -> checkChange(request);
            case COPY -> {
                if (request.size() < COPY_BATCHES_OFFSET) {
                    throw invalid("a copy of " + request.size() + " bytes, shorter than its " + COPY_BATCHES_OFFSET
                            + "-byte header");
                }
                int partition = request.substring(COPY_PARTITION_OFFSET, COPY_LOG_START_OFFSET).asReadOnlyByteBuffer()
                        .getInt();
                long logStart = request.substring(COPY_LOG_START_OFFSET, COPY_BATCHES_OFFSET).asReadOnlyByteBuffer()
                        .getLong();
                if (partition < 0 || logStart < 0) {
                    throw invalid("a copy of partition " + partition + " from log start offset " + logStart
                            + "; neither may be negative");
                }
            }
            default -> throw invalid("an entry of type " + type(request) + "; the types are " + BATCHES
                    + " (batches), " + CHANGE + " (partition change), " + COPY + " (copied batches) and "
                    + ALL_OR_NONE + " (batches, all or none)");
        }
    }

    private static void checkBatchesRequest(ByteString request) {
        if (request.size() < SLOTS_OFFSET) {
            throw invalid("a request of batches of " + request.size() + " bytes, shorter than its header");
        }
        int count = count(request);
        if (count < 1 || (long) SLOTS_OFFSET + (long) count * SLOT_BYTES > request.size()) {
            throw invalid("a request of " + request.size() + " bytes announcing " + count + " batches; it holds 1 "
                    + "or more, each a " + SLOT_BYTES + "-byte slot and a batch");
        }
        ByteBuffer table = request.substring(0, tableBytes(count)).asReadOnlyByteBuffer();
        long at = tableBytes(count);
        for (int i = 0; i < count; i++) {
            int slot = SLOTS_OFFSET + i * SLOT_BYTES;
            int partition = table.getInt(slot + PARTITION_OFFSET);
            int length = table.getInt(slot + LENGTH_OFFSET);
            if (partition < 0) {
                throw invalid("batch " + i + " names partition " + partition);
            }
            if (table.getLong(slot + RECEIVE_TIME_OFFSET) != 0 || table.getShort(slot + VERDICT_OFFSET) != 0
                    || (table.getShort(slot + FLAGS_OFFSET) & ~MIRRORED) != 0) {
                throw invalid("batch " + i + "'s slot is stamped; only the leader stamps ReceiveTime and verdict");
            }
            if (length < RecordBatchFormat.HEADER_SIZE_BYTES) {
                throw invalid("batch " + i + " is " + length + " bytes long, shorter than a batch header ("
                        + RecordBatchFormat.HEADER_SIZE_BYTES + ")");
            }
            at += length;
        }
        if (at != request.size()) {
            throw invalid("the " + count + " batches' lengths add up to " + (at - tableBytes(count))
                    + " bytes, but " + (request.size() - tableBytes(count)) + " follow the table");
        }
    }

    /** Each batch a marker or without a producer id, each to another partition. */
    private static void checkAllOrNone(ByteString request) {
        ByteBuffer table = table(request);
        List<ByteBuffer> batches = batches(request);
        Set<PartitionKey> partitions = new HashSet<>();
        for (int i = 0; i < batches.size(); i++) {
            ByteBuffer batch = batches.get(i);
            if (!RecordBatchFormat.control(batch, batch.position())
                    && RecordBatchFormat.producerId(batch, batch.position()) != RecordBatchFormat.NO_PRODUCER_ID) {
                throw invalid("batch " + i + " of an all-or-none request carries producer id "
                        + RecordBatchFormat.producerId(batch, batch.position()) + " (it takes transaction markers and "
                        + "batches without a producer id)");
            }
            Slot slot = slot(table, i);
            if (!partitions.add(slot.partition())) {
                throw invalid("batch " + i + " of an all-or-none request goes to " + slot.partition()
                        + ", as an earlier one does (it takes one batch per partition)");
            }
        }
    }

    private static void checkChange(ByteString request) {
        GroupChange change;
        try {
            change = GroupChange.parseFrom(request.substring(1).toByteArray());
        } catch (InvalidProtocolBufferException e) {
            throw invalid("a partition change that is not a GroupChange: " + e.getMessage());
        }
        List<GroupPartition> named = new ArrayList<>(change.getAddList());
        named.addAll(change.getRemoveList());
        named.addAll(change.getImportList());
        named.addAll(change.getSealList());
        named.addAll(change.getConfigureList());
        change.getActivateList().forEach(end -> named.add(end.getPartition()));
        for (GroupPartition partition : named) {
            if (partition.getTopicId().size() != TopicIds.LENGTH || partition.getPartition() < 0) {
                throw invalid("a partition change naming partition " + partition.getPartition() + " of topic '"
                        + partition.getTopic() + "' with a topic id of " + partition.getTopicId().size()
                        + " bytes; a topic id has " + TopicIds.LENGTH + " and a partition is not negative");
            }
        }
        if (change.getProducerIdExpirationMs() < 0) {
            throw invalid("producer_id_expiration_ms " + change.getProducerIdExpirationMs() + " is negative");
        }
    }

    private static TidemarkException invalid(String what) {
        return new TidemarkException(ErrorCode.INVALID_REQUEST, "the partition group refuses " + what
                + ": it is not an entry a broker sends, and nothing was appended");
    }

    /** The type of an entry or request: {@link #BATCHES}, {@link #CHANGE}, {@link #COPY} or {@link #ALL_OR_NONE}. */
    static byte type(ByteString entry) {
        return entry.byteAt(TYPE_OFFSET);
    }

    /** Whether an entry or request is one of batches: {@link #BATCHES} or {@link #ALL_OR_NONE}. */
    static boolean ofBatches(ByteString entry) {
        return type(entry) == BATCHES || type(entry) == ALL_OR_NONE;
    }

    /** The number of batches of an entry of batches. */
    static int count(ByteString entry) {
        return entry.substring(COUNT_OFFSET, SLOTS_OFFSET).asReadOnlyByteBuffer().getInt();
    }

    /**
     * The change an entry of type {@link #CHANGE} holds.
     *
     * @throws IllegalStateException when it does not hold one (a Raft log this broker cannot read)
     */
    static GroupChange readChange(ByteString entry) {
        try {
            return GroupChange.parseFrom(entry.substring(1).toByteArray());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("a partition change entry does not hold a GroupChange: " + e.getMessage(),
                    e);
        }
    }

    /** One slot of an entry's table, read where it lies. */
    public record Slot(PartitionKey partition, int length, long minSendTimeMs, long maxSendTimeMs, long receiveTimeMs,
                short verdict, boolean mirrored) {
    }

    /** Slot {@code i} of a table (or of an entry's bytes, which start with it). */
    public static Slot slot(ByteBuffer table, int i) {
        int at = table.position() + SLOTS_OFFSET + i * SLOT_BYTES;
        return new Slot(new PartitionKey(new UUID(table.getLong(at + TOPIC_ID_MSB_OFFSET),
                table.getLong(at + TOPIC_ID_LSB_OFFSET)), table.getInt(at + PARTITION_OFFSET)),
                table.getInt(at + LENGTH_OFFSET), table.getLong(at + MIN_SEND_TIME_OFFSET),
                table.getLong(at + MAX_SEND_TIME_OFFSET), table.getLong(at + RECEIVE_TIME_OFFSET),
                table.getShort(at + VERDICT_OFFSET), (table.getShort(at + FLAGS_OFFSET) & MIRRORED) != 0);
    }

    /** Stamps slot {@code i} of a table: the batch's ReceiveTime and the leader's verdict. */
    static void stamp(byte[] table, int i, long receiveTimeMs, short verdict) {
        int at = SLOTS_OFFSET + i * SLOT_BYTES;
        ByteBuffer.wrap(table).putLong(at + RECEIVE_TIME_OFFSET, receiveTimeMs).putShort(at + VERDICT_OFFSET, verdict);
    }

    /**
     * The table of an entry of batches, read-only; {@link #slot} reads its slots.
     *
     * @throws IllegalStateException when the entry is shorter than its table (a Raft log this broker cannot read)
     */
    public static ByteBuffer table(ByteString entry) {
        int count = count(entry);
        if (count < 0 || tableBytes(count) > entry.size()) {
            throw new IllegalStateException("an entry of " + entry.size() + " bytes cannot hold the table of the "
                    + count + " batches it announces");
        }
        return entry.substring(0, tableBytes(count)).asReadOnlyByteBuffer();
    }

    /**
     * The batches of an entry of batches, each a read-only view of its bytes, in slot order. A batch that lies in one
     * piece of the entry is not copied: on the leader the entry joins the produce requests' bytes
     * ({@link #request}), which stay the batches.
     *
     * @throws IllegalStateException when the slots' lengths do not add up to the entry (a Raft log this broker cannot
     *                               read)
     */
    public static List<ByteBuffer> batches(ByteString entry) {
        if (!ofBatches(entry)) {
            throw new IllegalStateException("entry type " + type(entry) + " is not one of batches");
        }
        ByteBuffer table = table(entry);
        int count = table.getInt(COUNT_OFFSET);
        int at = table.remaining();
        List<ByteBuffer> batches = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int length = slot(table, i).length();
            if (length < 0 || at + length > entry.size()) {
                throw new IllegalStateException("batch " + i + " of " + count + " has length " + length
                        + ", beyond the entry's " + entry.size() + " bytes");
            }
            batches.add(entry.substring(at, at + length).asReadOnlyByteBuffer());
            at += length;
        }
        if (at != entry.size()) {
            throw new IllegalStateException((entry.size() - at) + " bytes follow the last of " + count
                    + " batches of the entry");
        }
        return batches;
    }

    /** Builds the reply of an entry of batches: one outcome per slot, in slot order. */
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

        void refused(ErrorCode code, String message) {
            byte[] text = message.getBytes(StandardCharsets.UTF_8);
            write(() -> {
                out.writeByte(REFUSED);
                out.writeInt(code.getNumber());
                out.writeInt(text.length);
                out.write(text);
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
     * Reads a reply's outcomes, in slot order.
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
