package io.tidemark.it;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One directed network link between two processes on 127.0.0.1, as a TCP proxy: whoever connects to
 * {@link #port()} is connected to the target port, and the link can be cut and healed while connections are open.
 * It needs no privileges (no iptables, no network namespaces), so tests can partition brokers anywhere.
 *
 * <p>What a cut does, and why: a real partition black-holes packets, and TCP sees silence, not resets. The
 * connection stays established on both ends, bytes sent are neither acknowledged nor refused, and the sender learns
 * of the partition only from its own timeouts (a deadline, a keepalive, an election timer). A cut here does the same
 * on the application's side: bytes of a cut direction are left unread in the kernel's buffers and in the proxy's own
 * (so the sender's writes stall once those fill), and nothing is delivered; closes are not seen through a cut either.
 * New connections are accepted (the kernel completes the handshake before the proxy sees them) but the proxy
 * connects them to the target only once the link is healed, so they stay silent like a connect whose SYN is lost;
 * a handshake needs both directions, so a one-way cut defers them too. Healing resumes every connection where it
 * stalled: the bytes held back are delivered in order, as TCP retransmits them after a real partition heals; a
 * connection one end gave up on meanwhile is closed then. Bytes are never dropped from the middle of a stream: TCP
 * cannot do that to an application, it can only delay bytes or end the connection. Ending connections with a TCP
 * reset, the easier case (the peer learns at once), is {@link #reset()}.
 *
 * <p>A one-way cut ({@link #cut(Direction)}) holds back the bytes of one direction of every connection and lets the
 * other flow. To make "A cannot reach B while B reaches A" between two processes, cut the whole link A uses to
 * reach B and leave the link B uses to reach A ({@link NetworkLinks#cut}): each side's requests and their replies
 * travel on the connections that side opened.
 *
 * <p>Threading: every field but the counters belongs to the {@link ProxyLoop} thread; the public methods run their
 * change on that thread and return once it is in effect. At most {@link #MAX_CONNECTIONS} connections are open at
 * once; more are reset on arrival (a client reconnecting in a loop through a long cut cannot exhaust memory).
 */
final class LinkProxy implements ProxyLoop.Handler {
    /** The two directions of a link's connections. */
    enum Direction {
        /** From whoever connected to the link to the target. */
        TO_TARGET,
        /** From the target back to whoever connected. */
        FROM_TARGET
    }

    /** Connections open at once, each holding two 64 KiB buffers: 16 MiB at most per link. */
    static final int MAX_CONNECTIONS = 128;

    private final ProxyLoop loop;
    private final String name;
    private final ServerSocketChannel listener;
    private final int port;
    private final int targetPort;
    private final EnumSet<Direction> cut = EnumSet.noneOf(Direction.class);
    private final Set<ProxyConnection> connections = new LinkedHashSet<>();
    private final AtomicLong toTargetBytes = new AtomicLong();
    private final AtomicLong fromTargetBytes = new AtomicLong();
    private final AtomicLong accepted = new AtomicLong();

    private LinkProxy(ProxyLoop loop, String name, ServerSocketChannel listener, int port, int targetPort) {
        this.loop = loop;
        this.name = name;
        this.listener = listener;
        this.port = port;
        this.targetPort = targetPort;
    }

    /** Called on the loop thread by {@link ProxyLoop#open}. */
    static LinkProxy open(ProxyLoop loop, String name, int targetPort) throws IOException {
        ServerSocketChannel listener = ServerSocketChannel.open();
        try {
            int port = FreePorts.bindAsideFromClusters(listener);
            listener.configureBlocking(false);
            LinkProxy link = new LinkProxy(loop, name, listener, port, targetPort);
            listener.register(loop.selector(), SelectionKey.OP_ACCEPT, link);
            return link;
        } catch (IOException | RuntimeException e) {
            listener.close();
            throw e;
        }
    }

    /** The port this link listens on, at 127.0.0.1. */
    int port() {
        return port;
    }

    int targetPort() {
        return targetPort;
    }

    String name() {
        return name;
    }

    /** Black-holes both directions of every connection, open or new, until {@link #heal()}. */
    void cut() {
        change(EnumSet.allOf(Direction.class));
    }

    /** Black-holes one direction; the other flows on the connections already open. */
    void cut(Direction direction) {
        loop.run(() -> {
            cut.add(direction);
            linkChanged();
        });
    }

    /** Lets every direction flow again; connections stalled by a cut resume, those accepted during it connect. */
    void heal() {
        change(EnumSet.noneOf(Direction.class));
    }

    private void change(Set<Direction> directions) {
        loop.run(() -> {
            cut.clear();
            cut.addAll(directions);
            linkChanged();
        });
    }

    /**
     * Tells every connection the link changed. A connection may close then (a heal finds that one end gave up during
     * the cut) and leave {@link #connections}, so they are told from a copy.
     */
    private void linkChanged() {
        new ArrayList<>(connections).forEach(ProxyConnection::linkChanged);
    }

    /** Ends every open connection with a TCP reset on both sides; new connections are served as the cut allows. */
    void reset() {
        loop.run(() -> new ArrayList<>(connections).forEach(ProxyConnection::abort));
    }

    /** The directions cut now. */
    Set<Direction> cutDirections() {
        return loop.call(() -> EnumSet.copyOf(cut));
    }

    /** Connections open now. */
    int openConnections() {
        return loop.call(connections::size);
    }

    /** Connections accepted since the link opened. */
    long acceptedConnections() {
        return accepted.get();
    }

    /** Bytes delivered in {@code direction} since the link opened. */
    long bytesForwarded(Direction direction) {
        return direction == Direction.TO_TARGET ? toTargetBytes.get() : fromTargetBytes.get();
    }

    // ---- loop thread only ----

    boolean isCut(Direction direction) {
        return cut.contains(direction);
    }

    /** A handshake needs both directions: a connection reaches the target only while nothing is cut. */
    boolean connectsNow() {
        return cut.isEmpty();
    }

    InetSocketAddress target() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
    }

    ProxyLoop loop() {
        return loop;
    }

    void forwarded(Direction direction, int bytes) {
        (direction == Direction.TO_TARGET ? toTargetBytes : fromTargetBytes).addAndGet(bytes);
    }

    void closed(ProxyConnection connection) {
        connections.remove(connection);
    }

    @Override
    public void ready(SelectionKey key) throws IOException {
        if (!key.isAcceptable()) {
            return;
        }
        for (SocketChannel client = listener.accept(); client != null; client = listener.accept()) {
            accepted.incrementAndGet();
            ProxyConnection connection = new ProxyConnection(this, client);
            if (connections.size() >= MAX_CONNECTIONS) {
                connection.abort();
            } else {
                connections.add(connection);
                connection.start();
            }
        }
    }

    /** Closes the listener and resets every connection; the loop calls it when it stops. */
    void closeNow() {
        new ArrayList<>(connections).forEach(ProxyConnection::abort);
        try {
            listener.close();
        } catch (IOException e) {
            System.err.println("proxy " + name + ": closing the listener failed: " + e);
        }
    }

    @Override
    public String toString() {
        return "link " + name + " (:" + port + " -> :" + targetPort + ")";
    }
}
