package io.tidemark.core.server;

import io.grpc.BindableService;
import io.tidemark.core.auth.AclStore;
import io.tidemark.core.quota.QuotaStore;

import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * What a broker's services need from the cluster it is in: the brokers, moving leadership and replicas, the internal
 * services brokers call on each other (served beside the client-facing ones), the largest batch its partitions
 * carry ({@code largestBatchBytes}: what one Raft entry holds), its ACLs and principals' own quotas, and whether its
 * metadata has caught up with the cluster's ({@code caughtUp}: until then the client API answers NOT_AVAILABLE,
 * {@link CaughtUpGate}).
 */
public record ClusterServices(ClusterView view, Leadership leadership, Reassignment reassignment,
                              List<BindableService> internalServices, int largestBatchBytes, AclStore acls,
                              QuotaStore quotas, BooleanSupplier caughtUp) {
    public ClusterServices {
        internalServices = List.copyOf(internalServices);
    }
}
