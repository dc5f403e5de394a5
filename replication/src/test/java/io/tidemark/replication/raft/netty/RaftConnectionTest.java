package io.tidemark.replication.raft.netty;

import io.tidemark.core.server.EventLoops;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RaftConnectionTest {
    private final EventLoops loops = EventLoops.start("test-network", 1);

    @AfterEach
    void stop() {
        loops.close();
    }

    /**
     * Opening a connection waits for nothing, not even on an interrupted thread (a leader balancer closed in the
     * middle of a pass): the interrupt stays for the caller. A connection closed before it was made leaves none open
     * behind it, or each retry would leak one: once the event loop ran what the connect queued, the peer holds either
     * no connection (closed before it was made) or one that is closed.
     */
    @Test
    void aConnectionClosedWhileItIsMadeLeavesNoneOpenAtThePeer() throws Exception {
        try (ServerSocketChannel peer = ServerSocketChannel.open()) {
            peer.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            RaftPeer raftPeer = RaftPeer.newBuilder().setId(RaftPeerId.valueOf("peer"))
                    .setAddress("127.0.0.1:" + peer.socket().getLocalPort()).build();

            Thread.currentThread().interrupt();
            RaftConnection connection = RaftConnection.open(raftPeer, loops, TimeDuration.valueOf(3,
                    TimeUnit.SECONDS));
            assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
            connection.close();

            loops.group().submit(() -> null).get(10, TimeUnit.SECONDS);
            loops.group().submit(() -> null).get(10, TimeUnit.SECONDS);
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
