package io.tidemark.core.server;

import io.grpc.Server;
import io.tidemark.proto.v1.BrokerStatus;

import java.util.List;

/**
 * This broker as clients reach it: node id and {@code host:port}. The port is read from the started server,
 * since the listen port may be 0 (a free port the OS picks). gRPC's {@link Server#getPort()} waits while the
 * server is starting, so a request that arrives during start sees the final port.
 */
final class ServerAddress implements ClusterView {
    private final int nodeId;
    private final String host;
    private volatile Server server;

    ServerAddress(int nodeId, String host) {
        this.nodeId = nodeId;
        this.host = host;
    }

    void bind(Server built) {
        this.server = built;
    }

    /** A single node: this broker, up. */
    @Override
    public List<BrokerStatus> brokers() {
        return List.of(BrokerStatus.newBuilder().setNodeId(nodeId).setAddress(host + ":" + server.getPort())
                .setUp(true).build());
    }
}
