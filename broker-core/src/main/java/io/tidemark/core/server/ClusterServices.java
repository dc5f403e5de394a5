package io.tidemark.core.server;

import io.grpc.BindableService;
import io.tidemark.core.auth.AclStore;
import io.tidemark.core.quota.QuotaStore;

import java.util.List;

/**
 * What a broker's services need from the cluster it is in: the brokers, moving leadership and replicas, the internal
 * services brokers call on each other (served beside the client-facing ones), the largest batch its partitions
 * carry ({@code largestBatchBytes}: what one Raft entry holds), its ACLs and principals' own quotas.
 */
public record ClusterServices(ClusterView view, Leadership leadership, Reassignment reassignment,
                              List<BindableService> internalServices, int largestBatchBytes, AclStore acls,
                              QuotaStore quotas) {
    public ClusterServices {
        internalServices = List.copyOf(internalServices);
    }
}
