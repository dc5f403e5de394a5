package io.tidemark.replication.raft.netty;

import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.handler.codec.EncoderException;
import io.grpc.netty.shaded.io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.grpc.netty.shaded.io.netty.handler.codec.MessageToByteEncoder;
import org.apache.ratis.thirdparty.com.google.protobuf.CodedOutputStream;
import org.apache.ratis.thirdparty.com.google.protobuf.MessageLite;
import org.apache.ratis.thirdparty.com.google.protobuf.Parser;

import java.io.IOException;

/**
 * The frame of Tidemark's Raft transport: one {@link RaftCall} (a request or its reply) per frame, on a TCP
 * connection between two brokers, or between a Raft client and a broker. Big-endian:
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                  Length (bytes after this field)              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                                                               |
 * +                            Call id                            +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                    Message (protobuf) ...                     |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * <ul>
 *   <li>Length: a signed 32-bit count of the bytes after it (8 + the message's), at least 8 and at most
 *       {@link #MAX_LENGTH}; a frame outside that closes the connection.</li>
 *   <li>Call id: chosen by the side that sends the request, unique among that connection's calls; the reply repeats
 *       it. Replies follow no order: a call's answer goes when it is ready, so a request that waits (a follower's log
 *       write, a commit) holds no other call on the connection.</li>
 *   <li>Message: Ratis' Netty messages, {@code RaftNettyServerRequestProto} from the caller, {@code
 *       RaftNettyServerReplyProto} back (a failure is its exception reply, a serialized {@code IOException}).</li>
 * </ul>
 * Nothing of it is stored: a broker that restarts opens new connections, and a call in flight when a connection
 * closes fails.
 */
public final class RaftCallFormat {
    static final int LENGTH_OFFSET = 0;
    static final int LENGTH_BYTES = Integer.BYTES;
    static final int CALL_ID_OFFSET = LENGTH_OFFSET + LENGTH_BYTES;
    static final int CALL_ID_BYTES = Long.BYTES;
    static final int MESSAGE_OFFSET = CALL_ID_OFFSET + CALL_ID_BYTES;
    /**
     * The largest Length: the largest appendEntries (entries up to {@code raft.log.write.buffer.bytes}, at most
     * 64 MiB) with its headers.
     */
    static final int MAX_LENGTH = 80 << 20;

    private RaftCallFormat() {
    }

    /** Writes each {@link RaftCall} as one frame; shared by every channel. */
    @ChannelHandler.Sharable
    static final class Encoder extends MessageToByteEncoder<RaftCall<?>> {
        static final Encoder INSTANCE = new Encoder();

        private Encoder() {
        }

        @Override
        protected ByteBuf allocateBuffer(ChannelHandlerContext ctx, RaftCall<?> call, boolean preferDirect) {
            return ctx.alloc().ioBuffer(MESSAGE_OFFSET + call.message().getSerializedSize());
        }

        @Override
        protected void encode(ChannelHandlerContext ctx, RaftCall<?> call, ByteBuf out) throws IOException {
            MessageLite message = call.message();
            int size = message.getSerializedSize();
            if (size > MAX_LENGTH - CALL_ID_BYTES) {
                throw new EncoderException("a Raft message of " + size + " bytes; at most "
                        + (MAX_LENGTH - CALL_ID_BYTES) + " are allowed");
            }
            out.ensureWritable(MESSAGE_OFFSET + size);
            out.writeInt(CALL_ID_BYTES + size);
            out.writeLong(call.id());
            CodedOutputStream stream = CodedOutputStream.newInstance(out.nioBuffer(out.writerIndex(), size));
            message.writeTo(stream);
            stream.flush();
            out.writerIndex(out.writerIndex() + size);
        }
    }

    /** Reads frames into {@link RaftCall}s of one message type; one per channel (it keeps a partial frame). */
    static final class Decoder<M extends MessageLite> extends LengthFieldBasedFrameDecoder {
        private final Parser<M> parser;

        Decoder(Parser<M> parser) {
            super(MAX_LENGTH, LENGTH_OFFSET, LENGTH_BYTES, 0, LENGTH_BYTES);
            this.parser = parser;
        }

        @Override
        protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
            ByteBuf frame = (ByteBuf) super.decode(ctx, in);
            if (frame == null) {
                return null;
            }
            try {
                if (frame.readableBytes() < CALL_ID_BYTES) {
                    throw new IOException("a Raft frame of " + frame.readableBytes() + " bytes; at least "
                            + CALL_ID_BYTES + " (the call id) are required");
                }
                long id = frame.readLong();
                return new RaftCall<>(id, parser.parseFrom(frame.nioBuffer()));
            } finally {
                frame.release();
            }
        }
    }
}
