package io.tidemark.core.topic;

import io.tidemark.core.partition.Partition;

/**
 * Told when this broker starts or stops holding a partition's log: a topic created or loaded, a replica moved here
 * or away, a topic deleted. A partition only known to this broker (led and stored elsewhere) is never passed. The
 * broker's metrics keep their per-partition gauges by it.
 *
 * <p>Implementations are called from the thread that changed the topics and must be thread-safe.
 */
public interface ReplicaListener {
    /** This broker holds {@code partition}'s log from now on; it replaces any earlier object of the same partition. */
    void holding(Partition partition);

    /** This broker no longer holds {@code partition}'s log. */
    void released(Partition partition);
}
