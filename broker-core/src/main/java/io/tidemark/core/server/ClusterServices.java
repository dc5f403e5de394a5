package io.tidemark.core.server;

import io.grpc.BindableService;

import java.util.List;

/**
 * What a broker's services need from the cluster it is in: the brokers, moving leadership and replicas, and the
 * internal services brokers call on each other (served beside the client-facing ones).
 */
public record ClusterServices(ClusterView view, Leadership leadership, Reassignment reassignment,
                              List<BindableService> internalServices) {
    public ClusterServices {
        internalServices = List.copyOf(internalServices);
    }

    /** A broker that runs alone. */
    public static ClusterServices singleNode(ClusterView self) {
        return new ClusterServices(self, Leadership.SINGLE_NODE, Reassignment.SINGLE_NODE, List.of());
    }
}
