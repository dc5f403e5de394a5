package io.tidemark.replication.cluster;

import io.tidemark.replication.raft.RunningDivisions;
import io.tidemark.replication.statemachine.GroupStateMachine;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Carries what a partition group's replica tells (started, closed, new leader, stopped on a disk error) to the
 * broker: the running divisions, the partition replicas (which exist only once the Raft server, which builds the
 * state machines, does) and the replicas a disk error stopped.
 */
final class GroupReplicaListener implements GroupStateMachine.Listener {
    private final RunningDivisions divisions;
    private final AtomicReference<PartitionReplicas> replicas;
    private final DiskStoppedReplicas diskStopped;

    GroupReplicaListener(RunningDivisions divisions, AtomicReference<PartitionReplicas> replicas,
                         DiskStoppedReplicas diskStopped) {
        this.divisions = divisions;
        this.replicas = replicas;
        this.diskStopped = diskStopped;
    }

    @Override
    public void leaderChanged(RaftGroupId groupId) {
        PartitionReplicas known = replicas.get();
        if (known != null) {
            known.leaderChanged(groupId);
        }
    }

    @Override
    public void started(RaftServer server, RaftGroupId groupId) throws IOException {
        divisions.started(server.getDivision(groupId));
    }

    @Override
    public void closed(RaftGroupId groupId) {
        divisions.stopped(groupId);
    }

    @Override
    public void stoppedOnDiskError(RaftGroupId groupId, String error) {
        diskStopped.stopped(groupId);
    }
}
