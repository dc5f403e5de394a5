package io.tidemark.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LinkProxy} on one {@link ProxyLoop}: the test holds both ends of every connection (a client socket, and the
 * socket the target accepted), so it sees exactly what the link delivers. "Nothing arrives" is checked over a
 * quiet window ({@link #QUIET}) with Awaitility's {@code during}.
 */
class LinkProxyTest {
    /** Long enough for the proxy's loop to have copied anything it was going to copy, hundreds of times over. */
    private static final Duration QUIET = Duration.ofMillis(400);
    private static final Duration BOUND = Duration.ofSeconds(10);

    private ProxyLoop loop;
    private ServerSocketChannel target;
    private LinkProxy link;
    private final List<Socket> sockets = new ArrayList<>();

    @BeforeEach
    void open() throws IOException {
        loop = ProxyLoop.start("link-proxy-test");
        target = ServerSocketChannel.open();
        target.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        target.configureBlocking(false);
        link = loop.open("a->b", target.socket().getLocalPort());
    }

    @AfterEach
    void close() throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
        loop.close();
        target.close();
    }

    /** A client connected through the link, and the target's end of that connection. */
    private record Connection(Socket client, Socket server) {
    }

    private Socket connectClient() throws IOException {
        Socket client = new Socket(InetAddress.getLoopbackAddress(), link.port());
        sockets.add(client);
        return client;
    }

    private Socket acceptAtTarget() {
        SocketChannel[] accepted = new SocketChannel[1];
        await().atMost(BOUND).until(() -> (accepted[0] = target.accept()) != null);
        Socket server = accepted[0].socket();
        sockets.add(server);
        return server;
    }

    private Connection connect() throws IOException {
        Socket client = connectClient();
        return new Connection(client, acceptAtTarget());
    }

    private static void send(Socket socket, String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
    }

    private static String receive(Socket socket, int length) throws IOException {
        InputStream in = socket.getInputStream();
        await().atMost(BOUND).until(() -> in.available() >= length);
        return new String(in.readNBytes(length), StandardCharsets.UTF_8);
    }

    private static void assertNothingArrives(Socket... sockets) {
        await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() ->
                Arrays.stream(sockets).allMatch(s -> available(s) == 0));
    }

    private static int available(Socket socket) {
        try {
            return socket.getInputStream().available();
        } catch (IOException e) {
            return -1;
        }
    }

    @Test
    void forwardsBytesBothWaysThenPassesHalfClosesOn() throws Exception {
        Connection c = connect();
        send(c.client(), "hello");
        assertEquals("hello", receive(c.server(), 5));

        byte[] large = new byte[3 << 20];
        new Random(7).nextBytes(large);
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try {
            CompletableFuture<Void> written = CompletableFuture.runAsync(() -> {
                try {
                    c.server().getOutputStream().write(large);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }, writer);
            c.client().setSoTimeout((int) BOUND.toMillis());
            assertArrayEquals(large, c.client().getInputStream().readNBytes(large.length), "3 MiB back, in order");
            written.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            writer.shutdownNow();
        }
        assertEquals(5, link.bytesForwarded(LinkProxy.Direction.TO_TARGET));
        assertEquals(large.length, link.bytesForwarded(LinkProxy.Direction.FROM_TARGET));

        c.client().shutdownOutput();
        c.server().setSoTimeout((int) BOUND.toMillis());
        assertEquals(-1, c.server().getInputStream().read(), "the client's end of output reaches the target");
        send(c.server(), "still open");
        assertEquals("still open", receive(c.client(), 10), "the other direction flows on after a half-close");
        c.server().close();
        assertEquals(-1, c.client().getInputStream().read());
        await().atMost(BOUND).until(() -> link.openConnections() == 0);
    }

    @Test
    void aCutStallsOpenConnectionsBothWaysAndHealDeliversWhatItHeld() throws Exception {
        Connection c = connect();
        link.cut();
        assertEquals(Set.of(LinkProxy.Direction.TO_TARGET, LinkProxy.Direction.FROM_TARGET), link.cutDirections());
        send(c.client(), "request");
        send(c.server(), "reply");
        assertNothingArrives(c.client(), c.server());
        assertEquals(1, link.openConnections(), "a cut closes nothing: both ends still think they are connected");

        link.heal();
        assertEquals("request", receive(c.server(), 7));
        assertEquals("reply", receive(c.client(), 5));
    }

    @Test
    void aConnectionOpenedDuringACutReachesTheTargetOnlyOnceHealed() throws Exception {
        link.cut();
        Socket client = connectClient();
        send(client, "early");
        await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> target.accept() == null);
        await().atMost(BOUND).until(() -> link.acceptedConnections() == 1);

        link.heal();
        Socket server = acceptAtTarget();
        assertEquals("early", receive(server, 5), "the bytes sent into the cut arrive after it");
        send(server, "late");
        assertEquals("late", receive(client, 4));
    }

    @Test
    void aOneWayCutHoldsOneDirectionAndLetsTheOtherFlow() throws Exception {
        Connection c = connect();
        link.cut(LinkProxy.Direction.TO_TARGET);
        send(c.client(), "held");
        send(c.server(), "flows");
        assertEquals("flows", receive(c.client(), 5));
        assertNothingArrives(c.server());

        link.heal();
        assertEquals("held", receive(c.server(), 4));

        link.cut(LinkProxy.Direction.FROM_TARGET);
        send(c.server(), "held back");
        send(c.client(), "goes");
        assertEquals("goes", receive(c.server(), 4));
        assertNothingArrives(c.client());
        link.heal();
        assertEquals("held back", receive(c.client(), 9));
    }

    @Test
    void aOneWayCutDefersNewConnections() throws Exception {
        link.cut(LinkProxy.Direction.FROM_TARGET);
        Socket client = connectClient();
        send(client, "x");
        await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> target.accept() == null);
        link.heal();
        assertEquals("x", receive(acceptAtTarget(), 1));
    }

    @Test
    void resetEndsEveryConnectionWithAResetAndNewOnesAreServed() throws Exception {
        Connection c = connect();
        link.reset();
        c.client().setSoTimeout((int) BOUND.toMillis());
        c.server().setSoTimeout((int) BOUND.toMillis());
        assertThrows(IOException.class, () -> c.client().getInputStream().read(), "the client sees a reset");
        assertThrows(IOException.class, () -> c.server().getInputStream().read(), "the target sees a reset");
        assertEquals(0, link.openConnections());

        Connection again = connect();
        send(again.client(), "again");
        assertEquals("again", receive(again.server(), 5));
    }

    @Test
    void aTargetThatIsNotListeningResetsTheClient() throws Exception {
        target.close();
        Socket client = connectClient();
        client.setSoTimeout((int) BOUND.toMillis());
        assertThrows(IOException.class, () -> client.getInputStream().read(), "refused, as without the proxy");
        await().atMost(BOUND).until(() -> link.openConnections() == 0);
    }

    @Test
    void closeStopsTheThreadResetsConnectionsAndFreesThePort() throws Exception {
        Connection c = connect();
        loop.close();
        assertFalse(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("link-proxy-test")));
        c.client().setSoTimeout((int) BOUND.toMillis());
        assertThrows(IOException.class, () -> c.client().getInputStream().read());
        assertThrows(ConnectException.class, () -> new Socket(InetAddress.getLoopbackAddress(), link.port()).close());
        assertThrows(IllegalStateException.class, link::heal, "a closed loop takes no more changes");
        assertTrue(link.port() > 0);
    }
}
