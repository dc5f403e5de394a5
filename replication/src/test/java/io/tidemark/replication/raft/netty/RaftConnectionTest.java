package io.tidemark.replication.raft.netty;

import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.io.netty.channel.nio.NioEventLoop;
import org.apache.ratis.thirdparty.io.netty.channel.nio.NioEventLoopGroup;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RaftConnectionTest {
    private final NioEventLoop loop = (NioEventLoop) new NioEventLoopGroup(1).next();

    @AfterEach
    void stop() {
        loop.parent().shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    /**
     * A thread interrupted while it connects (a leader balancer closed in the middle of a pass) gets an
     * InterruptedIOException and leaves no connection open behind it: each retry would otherwise leak one. Once the
     * event loop ran what the connect queued, the peer holds either no connection (closed before it was made) or one
     * that is closed.
     */
    @Test
    void aConnectInterruptedClosesTheConnectionItStarted() throws Exception {
        try (ServerSocketChannel peer = ServerSocketChannel.open()) {
            peer.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            RaftPeer raftPeer = RaftPeer.newBuilder().setId(RaftPeerId.valueOf("peer"))
                    .setAddress("127.0.0.1:" + peer.socket().getLocalPort()).build();

            Thread.currentThread().interrupt();
            InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> RaftConnection.open(raftPeer,
                    loop, TimeDuration.valueOf(3, TimeUnit.SECONDS)));
            assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
            assertEquals("connecting to " + raftPeer + " was interrupted", e.getMessage());

            loop.submit(() -> null).get(10, TimeUnit.SECONDS);
            loop.submit(() -> null).get(10, TimeUnit.SECONDS);
            peer.configureBlocking(false);
            try (SocketChannel accepted = peer.accept()) {
                if (accepted != null) {
                    accepted.configureBlocking(false);
                    ByteBuffer buffer = ByteBuffer.allocate(16);
                    await("the connection that reached the peer is closed").atMost(Duration.ofSeconds(10))
                            .until(() -> accepted.read(buffer) == -1);
                }
            }
        }
    }
}
