package io.tidemark.replication.raft;

import io.tidemark.core.server.EventLoops;
import io.tidemark.proto.tls.TlsMaterial;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.retry.ExponentialBackoffRetry;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.util.TimeDuration;

import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * How this broker's Raft server and clients talk. In plain text, Tidemark's Netty transport ({@link NettyRaftRpcType}):
 * one request and its reply per frame over Netty, answered when ready, where Ratis' gRPC transport adds HTTP/2
 * framing and a hop to gRPC's executor for each; on the same cluster (docs/benchmarks.md, "Raft over Ratis' Netty
 * transport") Netty made 22-29% more records/s as fast as possible, answered a fixed 4,000 records/s with a p50 of
 * 43-45 ms against 61-71 ms, and its brokers used 4-7% less CPU per record. Its leaders replicate through
 * {@link NotifyingLogAppender}, which tells a follower behind the leader's log start to catch up by itself, as
 * Tidemark's snapshots need. With the broker's TLS material, Ratis' gRPC
 * transport, the only one Ratis runs TLS on (3.2): TLS on its server, client and admin services, mutual: every side
 * shows a certificate from the CA, and the Raft port takes brokers only (a certificate whose subject matches
 * {@code tls.broker.subjects}), so a client holding a certificate from the same CA reaches no group's log. Every
 * broker of a cluster runs the same transport, as it runs TLS or not.
 */
public final class RaftTransport {
    /**
     * How a client of a Raft group (the metadata group's, the leader balancer's, a reassignment's) retries a call that
     * failed: no leader yet, a peer down, a call timed out. The second attempt 50 ms after the first, each wait twice
     * the one before up to 1 s (Ratis adds from -50% to +50% at random), 40 attempts: about 35 s of waiting, after
     * which the call fails ({@code RaftRetryFailureException}, with the last cause); a reply naming the leader is
     * followed at once.
     * Ratis' default retries at once and for ever: a pass of the leader balancer whose group lost a peer spun on one
     * thread, opening a connection per attempt (20,000 sockets within 30 s in a test JVM), and a metadata change
     * without a quorum never answered.
     */
    static final RetryPolicy CLIENT_RETRIES = ExponentialBackoffRetry.newBuilder()
            .setBaseSleepTime(TimeDuration.valueOf(25, TimeUnit.MILLISECONDS))
            .setMaxSleepTime(TimeDuration.valueOf(1, TimeUnit.SECONDS)).setMaxAttempts(40).build();

    private final Parameters parameters = new Parameters();
    private final RpcType rpcType;

    private RaftTransport(Optional<TlsMaterial> tls, EventLoops loops) {
        rpcType = tls.isPresent() ? SupportedRpcType.GRPC : new NettyRaftRpcType();
        if (tls.isEmpty()) {
            NettyRaftRpcType.setEventLoops(parameters, loops);
        }
        tls.ifPresent(material -> {
            GrpcTlsConfig conf = new GrpcTlsConfig(material.keyManager(), material.brokerTrustManager(), true);
            GrpcConfigKeys.Server.setTlsConf(parameters, conf);
            GrpcConfigKeys.Client.setTlsConf(parameters, conf);
            GrpcConfigKeys.Admin.setTlsConf(parameters, conf);
        });
    }

    /**
     * @param tls   the broker's TLS material; empty for plain text
     * @param loops the broker's event loops, which the plain-text transport's connections run on (Ratis' gRPC
     *              transport runs its own)
     */
    public static RaftTransport of(Optional<TlsMaterial> tls, EventLoops loops) {
        return new RaftTransport(tls, loops);
    }

    /** The transport Ratis' server and clients use: Netty in plain text, gRPC with TLS. */
    public RpcType rpcType() {
        return rpcType;
    }

    /** The server's transport parameters. */
    public Parameters parameters() {
        return parameters;
    }

    /**
     * A client of {@code group} with Ratis' client settings ({@link RaftSettings#client}) over this transport, retrying
     * as {@link #CLIENT_RETRIES} says unless the caller sets its own policy.
     */
    public RaftClient.Builder client(RaftGroup group) {
        return RaftClient.newBuilder().setProperties(RaftSettings.client(rpcType)).setParameters(parameters)
                .setRaftGroup(group).setRetryPolicy(CLIENT_RETRIES);
    }
}
