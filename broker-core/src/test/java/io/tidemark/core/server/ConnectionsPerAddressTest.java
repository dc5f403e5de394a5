package io.tidemark.core.server;

import com.codahale.metrics.Meter;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectionsPerAddressTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private final Meter refused = new Meter();
    private final ConnectionsPerAddress limit = new ConnectionsPerAddress(
            InternalProtocolNegotiators.serverPlaintext(), 2, refused);
    private final List<Socket> sockets = new ArrayList<>();
    private Server server;

    @AfterEach
    void stop() throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
        if (server != null) {
            server.shutdownNow();
        }
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket(LOOPBACK, server.getPort());
        socket.setSoTimeout(10_000);
        sockets.add(socket);
        return socket;
    }

    /** The server's first bytes on a connection it serves (its HTTP/2 SETTINGS), or -1 when it closed it. */
    private static int firstByte(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        socket.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return in.read();
    }

    @Test
    void aConnectionBeyondTheBoundIsClosedAndAReleasedPlaceIsTakenAgain() throws IOException {
        server = NettyServerBuilder.forAddress(new InetSocketAddress(LOOPBACK, 0)).protocolNegotiator(limit).build()
                .start();
        Socket first = connect();
        Socket second = connect();
        assertTrue(firstByte(first) >= 0 && firstByte(second) >= 0, "two connections are served");
        Socket third = connect();
        assertEquals(-1, third.getInputStream().read(), "the third is closed as it is accepted");
        assertEquals(1, refused.getCount());
        assertEquals(2, limit.open(LOOPBACK));

        first.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> limit.open(LOOPBACK) == 1);
        assertTrue(firstByte(connect()) >= 0, "a place given back is taken again");
        assertEquals(2, limit.open(LOOPBACK));
    }
}
