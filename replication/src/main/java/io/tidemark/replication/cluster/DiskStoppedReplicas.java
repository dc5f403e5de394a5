package io.tidemark.replication.cluster;

import org.apache.ratis.protocol.RaftGroupId;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The replicas of partition groups on this broker that a disk error stopped, until the broker restarts (each one's
 * error is in the broker's log): the gauge {@code replicas.disk.stopped} counts them, so an operator sees a broken
 * disk before the groups it serves lose their next replica.
 */
final class DiskStoppedReplicas {
    private final Set<RaftGroupId> stopped = ConcurrentHashMap.newKeySet();

    void stopped(RaftGroupId groupId) {
        stopped.add(groupId);
    }

    int count() {
        return stopped.size();
    }
}
