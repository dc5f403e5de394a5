package io.tidemark.proto.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.ChannelFutureListener;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.util.AsciiString;
import io.grpc.netty.shaded.io.netty.util.ReferenceCountUtil;
import io.tidemark.proto.error.GrpcErrors;

import java.nio.charset.StandardCharsets;

/**
 * A gRPC server's TLS negotiation that answers a plain-text client in words instead of closing on it: its first bytes
 * are looked at before TLS takes them, and a connection that does not open with a TLS handshake record gets the
 * HTTP/2 frames that end a connection (SETTINGS, then GOAWAY with INADEQUATE_SECURITY) whose debug data says TLS is
 * required, which a gRPC client reports as the status of its calls ({@link #REFUSAL}), at once. A TLS client goes on
 * to grpc-java's own server TLS negotiation.
 */
final class TlsOnlyNegotiator implements InternalProtocolNegotiator.ProtocolNegotiator {
    /** What a plain-text client's calls fail with (the GOAWAY's debug data). */
    static final String REFUSAL = GrpcErrors.TLS_REQUIRED + ": connect with the CA bundle of its certificates "
            + "(tls.ca.file, in --command-config or --tls-ca)";
    /** A TLS record of type handshake starts with this byte: every TLS connection opens with one. */
    private static final int TLS_HANDSHAKE_RECORD = 0x16;
    /** HTTP/2 frame types and the INADEQUATE_SECURITY error code (RFC 9113 sections 6.5, 6.8 and 7). */
    private static final int SETTINGS = 0x4;
    private static final int GOAWAY = 0x7;
    private static final int INADEQUATE_SECURITY = 0xc;

    private final InternalProtocolNegotiator.ProtocolNegotiator tls;

    TlsOnlyNegotiator(SslContext context) {
        this.tls = InternalProtocolNegotiators.serverTls(context);
    }

    @Override
    public AsciiString scheme() {
        return tls.scheme();
    }

    @Override
    public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
        ChannelHandler negotiation = tls.newHandler(grpcHandler);
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void handlerAdded(ChannelHandlerContext ctx) {
                ctx.pipeline().addFirst(new PlainTextRefusal());
                ctx.pipeline().replace(this, null, negotiation);
            }
        };
    }

    @Override
    public void close() {
        tls.close();
    }

    /** Looks at a connection's first byte: a TLS handshake passes on, anything else is answered and closed. */
    private static final class PlainTextRefusal extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf bytes && bytes.isReadable()
                    && bytes.getUnsignedByte(bytes.readerIndex()) != TLS_HANDSHAKE_RECORD) {
                ReferenceCountUtil.release(msg);
                ctx.writeAndFlush(goAway()).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            ctx.pipeline().remove(this);
            ctx.fireChannelRead(msg);
        }

        /** An empty SETTINGS frame (the server's preface), then GOAWAY: last stream 0, INADEQUATE_SECURITY, why. */
        private static ByteBuf goAway() {
            byte[] why = REFUSAL.getBytes(StandardCharsets.UTF_8);
            ByteBuf frames = Unpooled.buffer(9 + 9 + 8 + why.length);
            frame(frames, 0, SETTINGS);
            frame(frames, 8 + why.length, GOAWAY);
            frames.writeInt(0).writeInt(INADEQUATE_SECURITY).writeBytes(why);
            return frames;
        }

        /** A frame header on stream 0: 24-bit length, type, no flags, stream id 0. */
        private static void frame(ByteBuf frames, int length, int type) {
            frames.writeMedium(length).writeByte(type).writeByte(0).writeInt(0);
        }
    }
}
