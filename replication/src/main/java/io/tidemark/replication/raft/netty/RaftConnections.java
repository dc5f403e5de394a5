package io.tidemark.replication.raft.netty;

import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.netty.NettyUtils;
import org.apache.ratis.thirdparty.io.netty.channel.EventLoopGroup;
import org.apache.ratis.util.PeerProxyMap;
import org.apache.ratis.util.TimeDuration;

import java.util.concurrent.TimeUnit;

/**
 * One {@link RaftConnection} per peer, made at its first call and made again after Ratis drops it (a connection that
 * broke, or a call that timed out: {@code handleException}), over event loop threads of their own. A connection
 * not made within Ratis' client request timeout (3 s) fails, rather than Netty's 30 s.
 */
final class RaftConnections extends PeerProxyMap<RaftConnection> {
    private final EventLoopGroup group;

    private RaftConnections(String name, EventLoopGroup group, TimeDuration connectTimeout) {
        super(name, peer -> RaftConnection.open(peer, group, connectTimeout));
        this.group = group;
    }

    /**
     * @param threads the event loop threads of the connections; 0 for Netty's default (twice the cores)
     */
    static RaftConnections of(String name, RaftProperties properties, int threads) {
        return new RaftConnections(name, NettyUtils.newEventLoopGroup(name, threads,
                NettyConfigKeys.Client.useEpoll(properties)), RaftClientConfigKeys.Rpc.requestTimeout(properties));
    }

    @Override
    public void close() {
        super.close();
        group.shutdownGracefully(0, NettyUtils.CLOSE_TIMEOUT.toLong(TimeUnit.MILLISECONDS), TimeUnit.MILLISECONDS);
    }
}
