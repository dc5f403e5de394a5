package io.tidemark.core.quota;

import io.tidemark.proto.v1.ClientQuota;

import java.util.List;
import java.util.Map;

/** Where the cluster keeps principals' own quotas: every broker reads the same. */
public interface QuotaStore {
    /** The principals' own quotas as this broker applied them, by principal ({@code User:NAME}). */
    Map<String, ClientQuota> quotas();

    /**
     * Replaces the principals' quotas (both rates 0: removed); returns once this broker applies them.
     *
     * @throws io.tidemark.proto.error.TidemarkException INVALID_REQUEST naming a quota that is not valid
     *                                                   ({@link ClientQuotas#checked}); nothing is changed then
     */
    void alter(List<ClientQuota> quotas);
}
