package io.tidemark.replication.statemachine;

import io.tidemark.core.log.AppendResult;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PartitionEntryFormatTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void requestFramesEachBatchWithItsLength() {
        byte[] request = PartitionEntryFormat.request(List.of(ByteBuffer.wrap(new byte[]{1, 2, 3}),
                ByteBuffer.wrap(new byte[]{9, 9, 4, 5}).position(2)));

        assertEquals("00000002" + "00000003" + "010203" + "00000002" + "0405", HEX.formatHex(request));
    }

    @Test
    void entryIsTheStampedHeaderJoinedToTheRequest() {
        byte[] header = PartitionEntryFormat.entryHeader();
        byte[] request = PartitionEntryFormat.request(List.of(ByteBuffer.wrap(new byte[]{7, 8}),
                ByteBuffer.wrap(new byte[]{6})));
        PartitionEntryFormat.stamp(header, 0x0102030405060708L);
        ByteBuffer entry = UnsafeByteOperations.unsafeWrap(header)
                .concat(UnsafeByteOperations.unsafeWrap(request)).asReadOnlyByteBuffer();

        assertEquals("01" + "0102030405060708" + "00000002" + "00000002" + "0708" + "00000001" + "06",
                HEX.formatHex(UnsafeByteOperations.unsafeWrap(header).concat(UnsafeByteOperations.unsafeWrap(request))
                        .toByteArray()));
        assertEquals(0x0102030405060708L, PartitionEntryFormat.stampedReceiveTime(entry));
        List<ByteBuffer> batches = PartitionEntryFormat.batches(entry);
        assertEquals(2, batches.size());
        assertEquals(ByteBuffer.wrap(new byte[]{7, 8}), batches.get(0));
        assertEquals(ByteBuffer.wrap(new byte[]{6}), batches.get(1));
    }

    @Test
    void entryOfAnotherTypeOrWithATruncatedBatchIsRefused() {
        ByteBuffer unknown = ByteBuffer.wrap(HEX.parseHex("02" + "0000000000000000" + "00000000"));
        assertEquals("entry type 2 is not 1 (batches)",
                assertThrows(IllegalStateException.class, () -> PartitionEntryFormat.batches(unknown)).getMessage());

        ByteBuffer truncated = ByteBuffer.wrap(HEX.parseHex("01" + "0000000000000000" + "00000001" + "00000005" + "0102"));
        assertEquals("batch 0 of 1 has length 5, beyond the entry's 19 bytes",
                assertThrows(IllegalStateException.class, () -> PartitionEntryFormat.batches(truncated)).getMessage());
    }

    @Test
    void replyCarriesEachBatchOutcomeInOrder() {
        PartitionEntryFormat.ReplyWriter writer = new PartitionEntryFormat.ReplyWriter(2);
        writer.appended(new AppendResult(10, 12, 0x20));
        writer.refused(new TidemarkException(ErrorCode.INVALID_TIMESTAMP, "bad"));
        byte[] reply = writer.toBytes();

        assertEquals("00000002"
                + "00" + "000000000000000a" + "000000000000000c" + "0000000000000020"
                + "01" + HEX.toHexDigits(ErrorCode.INVALID_TIMESTAMP.getNumber()) + "00000003" + "626164",
                HEX.formatHex(reply));
        List<PartitionEntryFormat.Outcome> outcomes = PartitionEntryFormat.readReply(ByteBuffer.wrap(reply), 2);
        assertEquals(new AppendResult(10, 12, 0x20), outcomes.get(0).appended());
        assertNull(outcomes.get(0).refused());
        assertNull(outcomes.get(1).appended());
        assertEquals(ErrorCode.INVALID_TIMESTAMP, outcomes.get(1).refused().code());
        assertEquals("bad", outcomes.get(1).refused().getMessage());
    }

    @Test
    void replyWithAnotherCountThanTheRequestIsRefused() {
        byte[] reply = new PartitionEntryFormat.ReplyWriter(0).toBytes();
        assertArrayEquals(new byte[4], reply);
        assertEquals("reply has 0 outcomes for 1 batches", assertThrows(IllegalStateException.class,
                () -> PartitionEntryFormat.readReply(ByteBuffer.wrap(reply), 1)).getMessage());
    }
}
