package io.tidemark.core.server;

import io.grpc.BindableService;
import io.tidemark.core.log.BatchSizeLimit;

import java.util.List;

/**
 * What a broker's services need from the cluster it is in: the brokers, moving leadership and replicas, the internal
 * services brokers call on each other (served beside the client-facing ones), and the largest batch its partitions
 * carry ({@code largestBatchBytes}: what one Raft entry holds in a cluster; {@link BatchSizeLimit#UNBOUNDED} alone,
 * where the request size bounds batches).
 */
public record ClusterServices(ClusterView view, Leadership leadership, Reassignment reassignment,
                              List<BindableService> internalServices, int largestBatchBytes) {
    public ClusterServices {
        internalServices = List.copyOf(internalServices);
    }

    /** A broker that runs alone. */
    public static ClusterServices singleNode(ClusterView self) {
        return new ClusterServices(self, Leadership.SINGLE_NODE, Reassignment.SINGLE_NODE, List.of(),
                BatchSizeLimit.UNBOUNDED);
    }
}
