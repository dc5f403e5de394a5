package io.tidemark.replication.cluster;

import org.apache.ratis.protocol.RaftGroupId;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The replicas of partition groups on this broker that a disk error stopped, with the error, until the broker
 * restarts: the gauge {@code replicas.disk.stopped} counts them, so an operator sees a broken disk before the groups
 * it serves lose their next replica.
 */
final class DiskStoppedReplicas {
    private final Map<RaftGroupId, String> stopped = new ConcurrentHashMap<>();

    void stopped(RaftGroupId groupId, String error) {
        stopped.putIfAbsent(groupId, error);
    }

    int count() {
        return stopped.size();
    }
}
