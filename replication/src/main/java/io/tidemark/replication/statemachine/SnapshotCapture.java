package io.tidemark.replication.statemachine;

import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.v1.GroupSnapshot;

import java.util.List;
import java.util.Map;

/**
 * A partition group's state captured at one applied entry ({@link PartitionHost#captureSnapshot}, on the apply
 * thread, from memory), and the partition logs that changed since the latest snapshot: they must be fsynced before a
 * snapshot file names them, which {@link #flush} does off the apply thread ({@link GroupStateMachine}).
 *
 * @param snapshot the state at the entry
 * @param changed  the logs to fsync: each up to at least its end at the entry
 * @param captured the partitions as hosted at the entry: the next capture takes a partition whose hosted object and
 *                 end are the same as unchanged
 */
record SnapshotCapture(GroupSnapshot snapshot, List<PartitionLog> changed,
                       Map<PartitionKey, HostedPartition> captured) {
    SnapshotCapture {
        changed = List.copyOf(changed);
        captured = Map.copyOf(captured);
    }

    /**
     * fsyncs the changed logs; one closed since (its partition removed, or its copy started again) was fsynced as it
     * closed.
     */
    void flush(long nowMs) {
        for (PartitionLog log : changed) {
            log.flushUnlessClosed(nowMs);
        }
    }
}
