package io.tidemark.core.auth;

import io.tidemark.proto.v1.AclOperation;
import io.tidemark.proto.v1.AclResourceType;

/** The authorizer's questions about one call's caller: {@link AccessRules} and the services ask them. */
public record CallAccess(Authorizer authorizer, Caller caller) {
    /** @throws io.tidemark.proto.error.TidemarkException the resource type's AUTHORIZATION_FAILED when not allowed */
    public void require(AclOperation operation, AclResourceType type, String name) {
        authorizer.authorize(caller, operation, type, name);
    }

    public void requireTopic(AclOperation operation, String topic) {
        require(operation, AclResourceType.TOPIC, topic);
    }

    public void requireGroup(AclOperation operation, String group) {
        require(operation, AclResourceType.GROUP, group);
    }

    public void requireCluster(AclOperation operation) {
        require(operation, AclResourceType.CLUSTER, AclBindingRules.CLUSTER_RESOURCE);
    }

    public void requireTransactionalId(String transactionalId) {
        require(AclOperation.WRITE, AclResourceType.TRANSACTIONAL_ID, transactionalId);
    }

    /** Whether the caller may; neither counted nor logged (for filtering a list). */
    public boolean permits(AclOperation operation, AclResourceType type, String name) {
        return authorizer.permits(caller, operation, type, name);
    }

    /** The access of the call being served ({@link Caller#current()}). */
    public static CallAccess current(Authorizer authorizer) {
        return new CallAccess(authorizer, Caller.current());
    }
}
