package io.tidemark.replication.cluster;

import io.tidemark.core.auth.AclBindingRules;
import io.tidemark.core.auth.AclIndex;
import io.tidemark.core.auth.AclStore;
import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclChange;
import io.tidemark.proto.v1.AclFilter;
import io.tidemark.proto.v1.MetadataCommand;
import io.tidemark.replication.statemachine.MetadataStateMachine;

import java.time.Duration;
import java.util.List;

/**
 * The cluster's ACLs in its metadata group (as Kafka's KIP-801 keeps them in its metadata log): a change is one
 * metadata command that every broker applies, so all enforce the same bindings; this broker answers once it applied
 * the change itself. A delete's filters are resolved here against the bindings this broker holds, and the command
 * removes exactly those.
 */
final class ReplicatedAcls implements AclStore {
    private static final Duration APPLY_TIMEOUT = Duration.ofSeconds(30);

    private final MetadataGroup metadata;
    private final MetadataStateMachine stateMachine;

    ReplicatedAcls(MetadataGroup metadata, MetadataStateMachine stateMachine) {
        this.metadata = metadata;
        this.stateMachine = stateMachine;
    }

    @Override
    public AclIndex index() {
        return stateMachine.acls();
    }

    @Override
    public void create(List<AclBinding> bindings) {
        List<AclBinding> stored = bindings.stream().map(AclBindingRules::checked).toList();
        metadata.submitAndApply(MetadataCommand.newBuilder().setCreateAcls(AclChange.newBuilder()
                .addAllBindings(stored)).build(), APPLY_TIMEOUT, "the ACLs added to be applied");
    }

    @Override
    public List<AclBinding> delete(List<AclFilter> filters) {
        List<AclBinding> matched = index().bindings().stream()
                .filter(binding -> filters.stream().anyMatch(filter -> AclBindingRules.matches(filter, binding)))
                .toList();
        if (matched.isEmpty()) {
            return matched;
        }
        metadata.submitAndApply(MetadataCommand.newBuilder().setDeleteAcls(AclChange.newBuilder()
                .addAllBindings(matched)).build(), APPLY_TIMEOUT, "the ACLs removed to be applied");
        return matched;
    }
}
