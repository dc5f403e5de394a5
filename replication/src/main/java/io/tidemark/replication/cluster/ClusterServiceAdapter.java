package io.tidemark.replication.cluster;

import io.grpc.stub.StreamObserver;
import io.tidemark.proto.v1.ClusterServiceGrpc;
import io.tidemark.proto.v1.LeaderTerm;
import io.tidemark.proto.v1.ProbeRequest;
import io.tidemark.proto.v1.ProbeResponse;

import java.time.InstantSource;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.replication.partition.PartitionGroup;

/**
 * Answers the other brokers' probes ({@link ClusterLiveness}) with this broker's node id, its cluster.name and the
 * partition groups it leads, with their Raft terms, the brokers its own probes find up, and its clock. Reads each
 * local division's role; no I/O.
 */
final class ClusterServiceAdapter extends ClusterServiceGrpc.ClusterServiceImplBase {
    private final int nodeId;
    private final String clusterName;
    private final PartitionReplicas replicas;
    private final ClusterLiveness liveness;
    private final InstantSource clock;

    /**
     * @param clusterName this broker's cluster.name, "" for none
     * @param clock       this broker's own clock, whose reading each answer carries ({@link ClusterClock})
     */
    ClusterServiceAdapter(int nodeId, String clusterName, PartitionReplicas replicas, ClusterLiveness liveness,
                          InstantSource clock) {
        this.nodeId = nodeId;
        this.clock = clock;
        this.clusterName = clusterName;
        this.replicas = replicas;
        this.liveness = liveness;
    }

    @Override
    public void probe(ProbeRequest request, StreamObserver<ProbeResponse> observer) {
        ProbeResponse.Builder response = ProbeResponse.newBuilder().setNodeId(nodeId).setClusterName(clusterName)
                .addAllPeerAnswers(liveness.peerAnswers()).setClockMs(clock.millis());
        for (PartitionGroup group : replicas.groupsHere()) {
            group.leaderTerm().ifPresent(term -> response.addLeads(LeaderTerm.newBuilder()
                    .setGroupId(TopicIds.toBytes(group.id().getUuid())).setTerm(term)));
        }
        observer.onNext(response.build());
        observer.onCompleted();
    }
}
