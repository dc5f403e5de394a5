package io.tidemark.it;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * One connection through a {@link LinkProxy}: the socket accepted from whoever connected (the client side) and the
 * socket the proxy opened to the target, with a {@link Flow} copying bytes each way. A flow copies only while its
 * direction of the link is not cut; a cut direction's bytes stay where they are (unread in the kernel, or in the
 * flow's buffer) until the link heals. An end of input is passed on as a half-close once the bytes before it are
 * delivered; a connection whose two directions have both ended closes; an I/O error resets both sides.
 *
 * <p>Not thread-safe: the {@link ProxyLoop} thread owns it.
 */
final class ProxyConnection implements ProxyLoop.Handler {
    /** Bytes a flow holds between reading and writing: enough that loopback copies go in few system calls. */
    private static final int BUFFER_BYTES = 64 * 1024;

    private final LinkProxy link;
    private final SocketChannel client;
    private final SelectionKey clientKey;
    private final Flow toTarget;
    private final Flow fromTarget;
    private SocketChannel target;
    private SelectionKey targetKey;
    private boolean connecting;
    private boolean closed;

    ProxyConnection(LinkProxy link, SocketChannel client) throws IOException {
        this.link = link;
        this.client = client;
        client.configureBlocking(false);
        this.clientKey = client.register(link.loop().selector(), 0, this);
        this.toTarget = new Flow(LinkProxy.Direction.TO_TARGET, client);
        this.fromTarget = new Flow(LinkProxy.Direction.FROM_TARGET, null);
        this.fromTarget.sink = client;
    }

    /** Starts serving an accepted connection: connects to the target now, or when a cut heals. */
    void start() {
        linkChanged();
    }

    /** The link was cut or healed: connect if it may now, and read and write what the link lets through. */
    void linkChanged() {
        if (closed) {
            return;
        }
        try {
            if (target == null && link.connectsNow()) {
                connect();
            }
            pump();
        } catch (IOException e) {
            abort();
        }
    }

    private void connect() throws IOException {
        target = SocketChannel.open();
        target.configureBlocking(false);
        targetKey = target.register(link.loop().selector(), 0, this);
        connecting = !target.connect(link.target());
        if (!connecting) {
            connected();
        }
    }

    private void connected() {
        toTarget.sink = target;
        fromTarget.source = target;
    }

    @Override
    public void ready(SelectionKey key) {
        if (closed) {
            return;
        }
        try {
            if (key == targetKey && connecting && key.isConnectable()) {
                target.finishConnect();
                connecting = false;
                connected();
            }
            pump();
        } catch (IOException e) {
            // A refused connect, or a reset or broken pipe on either side: the other side is reset too, as a
            // connection through no proxy would have been.
            abort();
        }
    }

    /** Moves what each flow can move now (both ways, until neither can read nor write more), then sets interests. */
    private void pump() throws IOException {
        boolean moved = true;
        while (moved) {
            moved = toTarget.move() | fromTarget.move();
        }
        if (toTarget.finished() && fromTarget.finished()) {
            close();
            return;
        }
        clientKey.interestOps((toTarget.wantsRead() ? SelectionKey.OP_READ : 0)
                | (fromTarget.wantsWrite() ? SelectionKey.OP_WRITE : 0));
        if (targetKey != null) {
            targetKey.interestOps(connecting ? SelectionKey.OP_CONNECT
                    : (fromTarget.wantsRead() ? SelectionKey.OP_READ : 0)
                    | (toTarget.wantsWrite() ? SelectionKey.OP_WRITE : 0));
        }
    }

    /** Closes both sides with a TCP reset (SO_LINGER 0), at once. */
    void abort() {
        if (closed) {
            return;
        }
        resetQuietly(client);
        if (target != null) {
            resetQuietly(target);
        }
        finish();
    }

    private void close() {
        closeQuietly(client);
        closeQuietly(target);
        finish();
    }

    private void finish() {
        closed = true;
        link.closed(this);
    }

    private static void resetQuietly(SocketChannel channel) {
        try {
            if (channel.isOpen()) {
                channel.setOption(StandardSocketOptions.SO_LINGER, 0);
            }
        } catch (IOException e) {
            // closing anyway
        }
        closeQuietly(channel);
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // nothing more to do with it
        }
    }

    @Override
    public String toString() {
        return link + " connection " + client;
    }

    /**
     * One direction of the connection: reads from its source into the buffer, writes the buffer to its sink. The
     * buffer stays in fill mode between calls (position = bytes held).
     */
    private final class Flow {
        private final LinkProxy.Direction direction;
        private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES);
        private SocketChannel source;
        private SocketChannel sink;
        private boolean sourceEnded;
        private boolean sinkShut;

        Flow(LinkProxy.Direction direction, SocketChannel source) {
            this.direction = direction;
            this.source = source;
        }

        private boolean open() {
            return !link.isCut(direction);
        }

        boolean wantsRead() {
            return open() && source != null && !sourceEnded && buffer.hasRemaining();
        }

        boolean wantsWrite() {
            return open() && sink != null && !connecting && buffer.position() > 0;
        }

        /** Reads and writes what it can without blocking; true when a byte moved or the input ended. */
        boolean move() throws IOException {
            boolean moved = false;
            if (wantsRead()) {
                int read = source.read(buffer);
                if (read < 0) {
                    sourceEnded = true;
                }
                moved = read != 0;
            }
            if (wantsWrite()) {
                buffer.flip();
                int written = sink.write(buffer);
                buffer.compact();
                link.forwarded(direction, written);
                moved |= written > 0;
            }
            if (open() && sourceEnded && buffer.position() == 0 && sink != null && !connecting && !sinkShut) {
                sink.shutdownOutput();
                sinkShut = true;
            }
            return moved;
        }

        /** Its input ended and everything before the end was delivered. */
        boolean finished() {
            return sinkShut;
        }
    }
}
