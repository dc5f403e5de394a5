package io.tidemark.replication.raft;

import io.tidemark.core.server.EventLoops;
import io.tidemark.replication.raft.netty.NettyRaftClientRpc;
import io.tidemark.replication.raft.netty.NettyRaftServerRpc;
import org.apache.ratis.client.ClientFactory;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.ServerFactory;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;

import java.util.Optional;

/**
 * Tidemark's plain-text Raft transport: Ratis' Netty messages in frames that carry a call id
 * ({@link NettyRaftServerRpc}, {@link NettyRaftClientRpc}), so a peer answers each request when it is ready, and a
 * leader that notifies a follower to install a snapshot ({@link NotifyingLogAppender}) instead of sending files. Ratis
 * finds a transport by name ({@code raft.rpc.type}): a built-in one, or the name of a class like this one, which it
 * instantiates; so {@link #name()} is this class's name. Every broker and client of a cluster speaks it: its frames
 * are not Ratis' Netty transport's.
 */
public final class NettyRaftRpcType implements RpcType {
    @Override
    public String name() {
        return NettyRaftRpcType.class.getName();
    }

    /** The key under which {@link #setEventLoops} keeps the broker's event loops in Ratis' parameters. */
    private static final String EVENT_LOOPS = "tidemark.raft.netty.event-loops";

    /**
     * Runs the connections of the Raft server made with {@code parameters} (those it accepts, those to its peers) on
     * {@code loops}, the broker's, shared with its client API, which the caller stops after the server. Without it,
     * the server runs threads of its own. Raft clients always run a thread of their own ({@link NettyRaftClientRpc}).
     */
    static void setEventLoops(Parameters parameters, EventLoops loops) {
        parameters.put(EVENT_LOOPS, loops, EventLoops.class);
    }

    @Override
    public Factory newFactory(Parameters parameters) {
        return new Factory(Optional.ofNullable(parameters).map(given -> given.get(EVENT_LOOPS, EventLoops.class)));
    }

    @Override
    public String toString() {
        return "NETTY (Tidemark)";
    }

    /** The server and client transports, and a {@link NotifyingLogAppender} per follower. */
    private static final class Factory implements ServerFactory, ClientFactory {
        private final Optional<EventLoops> loops;

        Factory(Optional<EventLoops> loops) {
            this.loops = loops;
        }

        @Override
        public SupportedRpcType getRpcType() {
            return SupportedRpcType.NETTY;
        }

        @Override
        public NettyRaftServerRpc newRaftServerRpc(RaftServer server) {
            return new NettyRaftServerRpc(server, loops);
        }

        @Override
        public NettyRaftClientRpc newRaftClientRpc(ClientId clientId, RaftProperties properties) {
            return new NettyRaftClientRpc(clientId, properties);
        }

        @Override
        public LogAppender newLogAppender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
            return new NotifyingLogAppender(server, state, follower,
                    server.getMemberId().getGroupId().equals(RaftGroups.METADATA));
        }
    }
}
