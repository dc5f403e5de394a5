package io.tidemark.core.server;

import io.tidemark.proto.v1.BrokerStatus;

import java.util.List;

/** The brokers of the cluster as clients reach them, and whether each is up. */
public interface ClusterView {
    List<BrokerStatus> brokers();
}
