package io.tidemark.replication.raft;

import io.tidemark.proto.tls.TlsMaterial;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.RaftGroup;

import java.util.Optional;

/**
 * How this broker's Raft server and clients talk: Ratis' gRPC transport, in plain text or, with the broker's TLS
 * material, TLS on its server, client and admin services, mutual: every side shows a certificate from the CA, and
 * the Raft port takes brokers only (a certificate whose subject matches {@code tls.broker.subjects}), so a client
 * holding a certificate from the same CA reaches no group's log.
 */
public final class RaftTransport {
    private final Parameters parameters = new Parameters();

    private RaftTransport(Optional<TlsMaterial> tls) {
        tls.ifPresent(material -> {
            GrpcTlsConfig conf = new GrpcTlsConfig(material.keyManager(), material.brokerTrustManager(), true);
            GrpcConfigKeys.Server.setTlsConf(parameters, conf);
            GrpcConfigKeys.Client.setTlsConf(parameters, conf);
            GrpcConfigKeys.Admin.setTlsConf(parameters, conf);
        });
    }

    /** @param tls the broker's TLS material; empty for plain text */
    public static RaftTransport of(Optional<TlsMaterial> tls) {
        return new RaftTransport(tls);
    }

    /** The server's transport parameters. */
    public Parameters parameters() {
        return parameters;
    }

    /** A client of {@code group} with Ratis' client settings ({@link RaftSettings#client}) over this transport. */
    public RaftClient.Builder client(RaftGroup group) {
        return RaftClient.newBuilder().setProperties(RaftSettings.client()).setParameters(parameters)
                .setRaftGroup(group);
    }
}
