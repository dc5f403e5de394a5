package io.tidemark.replication.statemachine;

import io.tidemark.core.log.AppendResult;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.RecordBatchBuilder;
import io.tidemark.proto.record.TransactionMarker;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupChange;
import io.tidemark.proto.v1.GroupPartition;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Golden bytes of the partition group's entries and replies. */
class GroupEntryFormatTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final UUID TOPIC = new UUID(0x0102030405060708L, 0x090a0b0c0d0e0f10L);

    @Test
    void anEntryOfBatchesIsItsTableThenTheBatches() {
        ByteString request = GroupEntryFormat.request(List.of(
                new GroupEntryFormat.Submitted(new PartitionKey(TOPIC, 3), ByteBuffer.wrap(new byte[] {7, 8}), 5, 9,
                        false),
                new GroupEntryFormat.Submitted(new PartitionKey(TOPIC, 4), ByteBuffer.wrap(new byte[] {9, 9, 6})
                        .position(2), 1, 1, true)));
        String slots = "0102030405060708" + "090a0b0c0d0e0f10" + "00000003" + "00000002" // topic id, partition 3, length 2
                + "0000000000000005" + "0000000000000009" // min and max SendTime
                + "0000000000000000" + "0000" + "0000" // ReceiveTime and verdict unstamped, not mirrored
                + "0102030405060708" + "090a0b0c0d0e0f10" + "00000004" + "00000001"
                + "0000000000000001" + "0000000000000001"
                + "0000000000000000" + "0000" + "0001"; // mirrored
        assertEquals("01" + "00000002" + slots + "0708" + "06", HEX.formatHex(request.toByteArray()));
        assertEquals(GroupEntryFormat.tableBytes(2) + 3, request.size());

        byte[] table = request.substring(0, GroupEntryFormat.tableBytes(2)).toByteArray();
        GroupEntryFormat.stamp(table, 1, 0x11223344L, (short) ErrorCode.INVALID_TIMESTAMP.getNumber());
        ByteString entry = ByteString.copyFrom(table).concat(request.substring(table.length));
        assertEquals(new GroupEntryFormat.Slot(new PartitionKey(TOPIC, 4), 1, 1, 1, 0x11223344L,
                (short) ErrorCode.INVALID_TIMESTAMP.getNumber(), true),
                GroupEntryFormat.slot(GroupEntryFormat.table(entry), 1));
        assertEquals(List.of(ByteBuffer.wrap(new byte[] {7, 8}), ByteBuffer.wrap(new byte[] {6})),
                GroupEntryFormat.batches(entry));
        assertEquals(List.of(ByteBuffer.wrap(new byte[] {7, 8}), ByteBuffer.wrap(new byte[] {6})),
                GroupEntryFormat.batches(ByteString.copyFrom(entry.toByteArray())), "a follower's flat entry");
    }

    @Test
    void theBatchesOfALeadersEntryAreTheRequestsBytesNotACopy() {
        byte[] produced = new byte[1024];
        ByteString request = GroupEntryFormat.request(List.of(new GroupEntryFormat.Submitted(
                new PartitionKey(TOPIC, 0), ByteBuffer.wrap(produced), 0, 0, false)));
        ByteBuffer batch = GroupEntryFormat.batches(request).get(0);
        produced[1000] = 9;
        assertEquals(9, batch.get(1000), "a view of the produce request's bytes");
    }

    @Test
    void anEntryWhoseLengthsDoNotAddUpIsRefused() {
        ByteString request = GroupEntryFormat.request(List.of(new GroupEntryFormat.Submitted(
                new PartitionKey(TOPIC, 0), ByteBuffer.wrap(new byte[] {1, 2}), 0, 0, false)));
        ByteString truncated = request.substring(0, request.size() - 1);
        assertEquals("batch 0 of 1 has length 2, beyond the entry's 58 bytes", assertThrows(
                IllegalStateException.class, () -> GroupEntryFormat.batches(truncated)).getMessage());
        ByteString tableCut = request.substring(0, GroupEntryFormat.tableBytes(1) - 1);
        assertEquals("an entry of 56 bytes cannot hold the table of the 1 batches it announces", assertThrows(
                IllegalStateException.class, () -> GroupEntryFormat.batches(tableCut)).getMessage());
        ByteString longer = request.concat(ByteString.copyFrom(new byte[] {5}));
        assertEquals("1 bytes follow the last of 1 batches of the entry", assertThrows(
                IllegalStateException.class, () -> GroupEntryFormat.batches(longer)).getMessage());
    }

    /**
     * An all-or-none request takes markers and batches without a producer id, one per partition: what its replicas
     * check before appending any of them must still hold at each append.
     */
    @Test
    void anAllOrNoneRequestTakesMarkersAndBatchesWithoutAProducerOnePerPartition() {
        ByteBuffer plain = new RecordBatchBuilder().append(1, new byte[] {1}, new byte[] {2}).build();
        ByteBuffer marker = TransactionMarker.build(42, (short) 0, true, 1, 1);
        ByteBuffer idempotent = new RecordBatchBuilder().producer(42, (short) 0, 0).append(1, new byte[] {1},
                new byte[] {2}).build();
        GroupEntryFormat.checkRequest(GroupEntryFormat.allOrNone(List.of(submitted(0, plain), submitted(1, marker))));
        assertEquals("the partition group refuses batch 1 of an all-or-none request carries producer id 42 (it takes "
                + "transaction markers and batches without a producer id): it is not an entry a broker sends, and "
                + "nothing was appended", assertThrows(TidemarkException.class,
                () -> GroupEntryFormat.checkRequest(GroupEntryFormat.allOrNone(List.of(submitted(0, plain),
                        submitted(1, idempotent))))).getMessage());
        assertEquals("the partition group refuses batch 1 of an all-or-none request goes to "
                + new PartitionKey(TOPIC, 0) + ", as an earlier one does (it takes one batch per partition): it is not "
                + "an entry a broker sends, and nothing was appended", assertThrows(
                TidemarkException.class, () -> GroupEntryFormat.checkRequest(GroupEntryFormat.allOrNone(List.of(
                        submitted(0, plain), submitted(0, marker))))).getMessage());
    }

    private static GroupEntryFormat.Submitted submitted(int partition, ByteBuffer batch) {
        return new GroupEntryFormat.Submitted(new PartitionKey(TOPIC, partition), batch, 1, 1, false);
    }

    @Test
    void aPartitionChangeIsItsTypeThenTheProtobuf() {
        GroupChange change = GroupChange.newBuilder().addAdd(GroupPartition.newBuilder().setTopic("t")
                .setPartition(1)).build();
        ByteString entry = GroupEntryFormat.change(change);
        assertEquals("02" + "0a05" + "0a0174" + "1801", HEX.formatHex(entry.toByteArray()));
        assertEquals(change, GroupEntryFormat.readChange(entry));
    }

    @Test
    void theReplyCarriesEachBatchsOutcomeInOrder() {
        GroupEntryFormat.ReplyWriter writer = new GroupEntryFormat.ReplyWriter(2);
        writer.appended(new AppendResult(10, 12, 99));
        writer.refused(ErrorCode.INVALID_TIMESTAMP, "late");
        byte[] reply = writer.toBytes();
        assertEquals("00000002" + "00" + "000000000000000a" + "000000000000000c" + "0000000000000063"
                + "01" + "00000001" + "00000004" + "6c617465", HEX.formatHex(reply));

        List<GroupEntryFormat.Outcome> outcomes = GroupEntryFormat.readReply(ByteBuffer.wrap(reply), 2);
        assertEquals(new AppendResult(10, 12, 99), outcomes.get(0).appended());
        assertNull(outcomes.get(0).refused());
        assertEquals(ErrorCode.INVALID_TIMESTAMP, outcomes.get(1).refused().code());
        assertEquals("late", outcomes.get(1).refused().getMessage());
        assertEquals("reply has 2 outcomes for 3 batches", assertThrows(IllegalStateException.class,
                () -> GroupEntryFormat.readReply(ByteBuffer.wrap(reply), 3)).getMessage());
    }
}
