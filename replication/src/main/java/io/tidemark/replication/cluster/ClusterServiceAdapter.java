package io.tidemark.replication.cluster;

import io.grpc.stub.StreamObserver;
import io.tidemark.proto.v1.ClusterServiceGrpc;
import io.tidemark.proto.v1.LeaderTerm;
import io.tidemark.proto.v1.ProbeRequest;
import io.tidemark.proto.v1.ProbeResponse;
import io.tidemark.replication.partition.ReplicatedPartition;

/**
 * Answers the other brokers' probes ({@link ClusterLiveness}) with this broker's node id, its cluster.name and the
 * partitions it leads, with their Raft terms. Reads each local division's role; no I/O.
 */
final class ClusterServiceAdapter extends ClusterServiceGrpc.ClusterServiceImplBase {
    private final int nodeId;
    private final String clusterName;
    private final ReplicatedTopics topics;

    /** @param clusterName this broker's cluster.name, "" for none */
    ClusterServiceAdapter(int nodeId, String clusterName, ReplicatedTopics topics) {
        this.nodeId = nodeId;
        this.clusterName = clusterName;
        this.topics = topics;
    }

    @Override
    public void probe(ProbeRequest request, StreamObserver<ProbeResponse> observer) {
        ProbeResponse.Builder response = ProbeResponse.newBuilder().setNodeId(nodeId).setClusterName(clusterName);
        for (ReplicatedPartition partition : topics.replicasHere()) {
            partition.group().leaderTerm().ifPresent(term -> response.addLeads(LeaderTerm.newBuilder()
                    .setTopic(partition.id().topic()).setPartition(partition.id().partition()).setTerm(term)));
        }
        observer.onNext(response.build());
        observer.onCompleted();
    }
}
