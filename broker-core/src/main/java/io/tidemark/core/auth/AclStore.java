package io.tidemark.core.auth;

import io.tidemark.proto.v1.AclBinding;
import io.tidemark.proto.v1.AclFilter;

import java.util.List;

/** Where the cluster keeps its ACLs: every broker reads the same, and a change made through one reaches all. */
public interface AclStore {
    /** The ACLs as this broker has applied them. */
    AclIndex index();

    /**
     * Adds the bindings (those held already stay as they are); returns once this broker enforces them.
     *
     * @throws io.tidemark.proto.error.TidemarkException INVALID_REQUEST naming a binding that is not valid
     *                                                   ({@link AclBindingRules#checked}); nothing is added then
     */
    void create(List<AclBinding> bindings);

    /** Removes the bindings any filter matches; returns them, sorted, once this broker no longer enforces them. */
    List<AclBinding> delete(List<AclFilter> filters);
}
