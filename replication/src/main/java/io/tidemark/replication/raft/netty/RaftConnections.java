package io.tidemark.replication.raft.netty;

import io.tidemark.core.server.EventLoops;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.util.PeerProxyMap;
import org.apache.ratis.util.TimeDuration;

import java.io.IOException;
import java.util.Optional;

/**
 * One {@link RaftConnection} per peer, made at its first call and made again after Ratis drops it (a connection that
 * broke, or a call that timed out: {@code handleException}), on the broker's event loops or on threads of their own
 * ({@link TransportLoops}). A connection not made within Ratis' client request timeout (3 s) fails, rather than
 * Netty's 30 s.
 */
final class RaftConnections extends PeerProxyMap<RaftConnection> {
    private final TransportLoops loops;

    private RaftConnections(String name, TransportLoops loops, TimeDuration connectTimeout) {
        super(name, peer -> RaftConnection.open(peer, loops.loops(), connectTimeout));
        this.loops = loops;
    }

    /**
     * @param broker  the broker's event loops; empty to run on threads of their own
     * @param threads how many threads of their own
     */
    static RaftConnections of(String name, RaftProperties properties, Optional<EventLoops> broker, int threads) {
        return new RaftConnections(name, TransportLoops.of(broker, name, threads),
                RaftClientConfigKeys.Rpc.requestTimeout(properties));
    }

    /**
     * The connection to {@code peer}, made if there is none. Ratis' map answers null when another thread drops the
     * connection between the map's check and its read (a failed call's {@code handleException}): that call fails
     * here, as a call on the dropped connection would have, without dropping the next one.
     */
    RaftConnection connection(RaftPeerId peer) throws IOException {
        RaftConnection connection = getProxy(peer);
        if (connection == null) {
            throw new IOException("the connection to " + peer + " was dropped as a call began on it");
        }
        return connection;
    }

    @Override
    public void close() {
        super.close();
        loops.close();
    }
}
