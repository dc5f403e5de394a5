package io.tidemark.replication.cluster;

import io.tidemark.core.quota.ClientQuotas;
import io.tidemark.core.quota.QuotaStore;
import io.tidemark.proto.v1.AlterClientQuotasRequest;
import io.tidemark.proto.v1.ClientQuota;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.replication.statemachine.MetadataStateMachine;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Principals' own quotas in the cluster's metadata group, beside the ACLs: a change is one metadata command that
 * every broker applies; this broker answers once it applied the change itself.
 */
final class ReplicatedQuotas implements QuotaStore {
    private static final Duration APPLY_TIMEOUT = Duration.ofSeconds(30);

    private final MetadataGroup metadata;
    private final MetadataStateMachine stateMachine;

    ReplicatedQuotas(MetadataGroup metadata, MetadataStateMachine stateMachine) {
        this.metadata = metadata;
        this.stateMachine = stateMachine;
    }

    @Override
    public Map<String, ClientQuota> quotas() {
        return stateMachine.quotas();
    }

    @Override
    public void alter(List<ClientQuota> quotas) {
        quotas.forEach(ClientQuotas::checked);
        metadata.submitAndApply(MetadataCommand.newBuilder().setAlterQuotas(AlterClientQuotasRequest.newBuilder()
                .addAllQuotas(quotas)).build(), APPLY_TIMEOUT, "the quotas to be applied");
    }
}
