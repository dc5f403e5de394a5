package io.tidemark.replication.raft;

import org.apache.ratis.conf.Parameters;
import org.apache.ratis.netty.NettyFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;

/**
 * Ratis' Netty transport with a leader that notifies a follower to install a snapshot ({@link NotifyingLogAppender})
 * instead of sending files. Ratis finds a transport by name ({@code raft.rpc.type}): a built-in one, or the name of
 * a class like this one, which it instantiates; so {@link #name()} is this class's name.
 */
public final class NotifyingNettyRpcType implements RpcType {
    @Override
    public String name() {
        return NotifyingNettyRpcType.class.getName();
    }

    @Override
    public NettyFactory newFactory(Parameters parameters) {
        return new Factory(parameters);
    }

    @Override
    public String toString() {
        return "NETTY (notifying)";
    }

    /** Ratis' Netty server and client, and a {@link NotifyingLogAppender} per follower. */
    private static final class Factory extends NettyFactory {
        Factory(Parameters parameters) {
            super(parameters);
        }

        @Override
        public LogAppender newLogAppender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
            return new NotifyingLogAppender(server, state, follower);
        }
    }
}
