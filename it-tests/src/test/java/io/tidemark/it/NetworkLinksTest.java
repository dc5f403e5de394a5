package io.tidemark.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * {@link NetworkLinks} between three stand-in brokers (plain listening sockets for the client and the Raft port):
 * the member list each broker gets, the mapping of advertised addresses back to the brokers, and which directed
 * links cut, one-way cut and isolation affect.
 */
class NetworkLinksTest {
    private static final Duration QUIET = Duration.ofMillis(400);
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final Pattern MEMBER = Pattern.compile("(\\d)=127\\.0\\.0\\.1:(\\d+):(\\d+)");

    private final Map<Integer, ServerSocketChannel> clientPorts = new TreeMap<>();
    private final Map<Integer, ServerSocketChannel> raftPorts = new TreeMap<>();
    private final List<Socket> sockets = new ArrayList<>();
    private NetworkLinks links;

    @BeforeEach
    void open() throws IOException {
        Map<Integer, NetworkLinks.Ports> ports = new TreeMap<>();
        for (int node = 1; node <= 3; node++) {
            clientPorts.put(node, listen());
            raftPorts.put(node, listen());
            ports.put(node, new NetworkLinks.Ports(clientPorts.get(node).socket().getLocalPort(),
                    raftPorts.get(node).socket().getLocalPort()));
        }
        links = NetworkLinks.open(ports);
    }

    private static ServerSocketChannel listen() throws IOException {
        ServerSocketChannel channel = ServerSocketChannel.open();
        channel.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        channel.configureBlocking(false);
        return channel;
    }

    @AfterEach
    void close() throws IOException {
        links.close();
        for (Socket socket : sockets) {
            socket.close();
        }
        for (ServerSocketChannel channel : clientPorts.values()) {
            channel.close();
        }
        for (ServerSocketChannel channel : raftPorts.values()) {
            channel.close();
        }
    }

    /** The ports node {@code node}'s member list gives {@code member}: {client, raft}. */
    private int[] portsSeenBy(int node, int member) {
        Matcher m = MEMBER.matcher(links.membersSeenBy(node));
        while (m.find()) {
            if (Integer.parseInt(m.group(1)) == member) {
                return new int[] {Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))};
            }
        }
        throw new AssertionError("no member " + member + " in " + links.membersSeenBy(node));
    }

    /** Connects as {@code from} to {@code to}'s Raft port (through the link) and returns {client, accepted}. */
    private Socket[] connectRaft(int from, int to) throws IOException {
        Socket client = new Socket(InetAddress.getLoopbackAddress(), portsSeenBy(from, to)[1]);
        sockets.add(client);
        SocketChannel[] accepted = new SocketChannel[1];
        await().atMost(BOUND).until(() -> (accepted[0] = raftPorts.get(to).accept()) != null);
        sockets.add(accepted[0].socket());
        return new Socket[] {client, accepted[0].socket()};
    }

    private static boolean delivers(Socket[] connection) throws IOException {
        connection[0].getOutputStream().write('q');
        connection[1].getOutputStream().write('r');
        try {
            await().atMost(QUIET.multipliedBy(3)).until(() -> connection[1].getInputStream().available() > 0
                    && connection[0].getInputStream().available() > 0);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            return false;
        }
        connection[1].getInputStream().read();
        connection[0].getInputStream().read();
        return true;
    }

    @Test
    void eachBrokerSeesItsOwnPortsAndTheOthersThroughItsOwnLinks() {
        for (int node = 1; node <= 3; node++) {
            for (int member = 1; member <= 3; member++) {
                int[] seen = portsSeenBy(node, member);
                if (member == node) {
                    assertEquals(clientPorts.get(node).socket().getLocalPort(), seen[0]);
                    assertEquals(raftPorts.get(node).socket().getLocalPort(), seen[1]);
                } else {
                    assertNotEquals(clientPorts.get(member).socket().getLocalPort(), seen[0]);
                    assertNotEquals(raftPorts.get(member).socket().getLocalPort(), seen[1]);
                    assertNotEquals(seen[1], portsSeenBy(6 - node - member, member)[1], "each broker has its own links");
                    assertEquals("127.0.0.1:" + clientPorts.get(member).socket().getLocalPort(),
                            links.direct("127.0.0.1:" + seen[0]), "a client is sent straight to the broker");
                }
            }
        }
        assertEquals("127.0.0.1:1", links.direct("127.0.0.1:1"), "other addresses stay as they are");
    }

    @Test
    void aOneWayCutStopsOnlyTheLinkFromOneBrokerToTheOther() throws IOException {
        Socket[] oneToTwo = connectRaft(1, 2);
        Socket[] twoToOne = connectRaft(2, 1);
        Socket[] oneToThree = connectRaft(1, 3);
        links.cut(1, 2);
        assertEquals("[1->2]", links.describeCuts());
        assertEquals(List.of(false, true, true), List.of(delivers(oneToTwo), delivers(twoToOne), delivers(oneToThree)));
        links.healAll();
        assertEquals("[]", links.describeCuts());
        await().atMost(BOUND).until(() -> oneToTwo[1].getInputStream().available() > 0);
    }

    @Test
    void isolationCutsEveryLinkToAndFromTheBroker() throws IOException {
        links.isolate(3);
        assertEquals("[1->3, 2->3, 3->1, 3->2]", links.describeCuts());
        Socket[] oneToTwo = connectRaft(1, 2);
        assertEquals(true, delivers(oneToTwo));
        links.healAll();
        links.cutBothWays(1, 2);
        assertEquals("[1->2, 2->1]", links.describeCuts());
        long before = links.bytesThrough(1, 2);
        assertEquals(false, delivers(oneToTwo));
        assertEquals(before, links.bytesThrough(1, 2), "nothing crosses a cut link");
    }
}
