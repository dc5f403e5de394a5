package io.tidemark.replication.raft.netty;

import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufUtil;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.embedded.EmbeddedChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.DecoderException;
import io.grpc.netty.shaded.io.netty.handler.codec.TooLongFrameException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The frame of the Raft transport, byte for byte, and what a reader refuses. */
class RaftCallFormatTest {
    /** A vote request of candidate term 7 from s1 to s2: 14 bytes of protobuf. */
    private static final RaftNettyServerRequestProto VOTE = RaftNettyServerRequestProto.newBuilder()
            .setRequestVoteRequest(RequestVoteRequestProto.newBuilder().setServerRequest(
                    RaftRpcRequestProto.newBuilder().setRequestorId(ByteString.copyFromUtf8("s1"))
                            .setReplyId(ByteString.copyFromUtf8("s2"))).setCandidateTerm(7)).build();
    /** Length 22 (8 + 14), call id 0x0102030405060708, the message (field 1 of 12 bytes: field 1 of 8, field 2 = 7). */
    private static final String GOLDEN = "00000016" + "0102030405060708" + "0a0c" + "0a08" + "0a027331" + "12027332"
            + "1007";

    @Test
    void aCallIsItsLengthItsIdAndItsMessage() {
        assertEquals(14, VOTE.getSerializedSize());
        EmbeddedChannel out = new EmbeddedChannel(RaftCallFormat.Encoder.INSTANCE);
        assertTrue(out.writeOutbound(new RaftCall<>(0x0102030405060708L, VOTE)));
        ByteBuf frame = out.readOutbound();
        assertEquals(GOLDEN, ByteBufUtil.hexDump(frame));
        frame.release();
    }

    @Test
    void framesAreReadBackWhateverTheirSplit() {
        EmbeddedChannel in = new EmbeddedChannel(new RaftCallFormat.Decoder<>(RaftNettyServerRequestProto.parser()));
        byte[] bytes = ByteBufUtil.decodeHexDump(GOLDEN + GOLDEN);
        assertFalse(in.writeInbound(Unpooled.wrappedBuffer(bytes, 0, 5)), "a frame cut in its id is kept");
        assertTrue(in.writeInbound(Unpooled.wrappedBuffer(bytes, 5, bytes.length - 5)));
        for (int i = 0; i < 2; i++) {
            RaftCall<RaftNettyServerRequestProto> call = in.readInbound();
            assertEquals(0x0102030405060708L, call.id());
            assertEquals(VOTE, call.message());
        }
        assertNull(in.readInbound());
    }

    @Test
    void aFrameTooShortForItsIdIsRefused() {
        EmbeddedChannel in = new EmbeddedChannel(new RaftCallFormat.Decoder<>(RaftNettyServerRequestProto.parser()));
        DecoderException e = assertThrows(DecoderException.class,
                () -> in.writeInbound(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("00000004" + "01020304"))));
        assertEquals("java.io.IOException: a Raft frame of 4 bytes; at least 8 (the call id) are required",
                e.getMessage());
    }

    @Test
    void aFrameLongerThanTheLargestAppendEntriesIsRefused() {
        EmbeddedChannel in = new EmbeddedChannel(new RaftCallFormat.Decoder<>(RaftNettyServerRequestProto.parser()));
        TooLongFrameException e = assertThrows(TooLongFrameException.class, () -> in.writeInbound(
                Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("05000001" + "0102030405060708"))));
        assertEquals("Adjusted frame length exceeds 83886080: 83886085 - discarded", e.getMessage());
    }
}
