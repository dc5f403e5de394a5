package io.tidemark.replication.cluster;

import io.grpc.stub.StreamObserver;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GetSnapshotRequest;
import io.tidemark.proto.v1.GetSnapshotResponse;
import io.tidemark.proto.v1.ReplicaServiceGrpc;
import io.tidemark.proto.v1.SnapshotDescriptor;
import io.tidemark.replication.raft.RaftGroups;
import io.tidemark.replication.statemachine.PartitionStateMachine;
import org.apache.ratis.server.RaftServer;

import java.io.IOException;

/**
 * The internal {@code ReplicaService} (replica.proto) of a cluster node: the latest snapshot of the partition
 * replicas it holds, for replicas on other brokers that catch up from it.
 */
final class ReplicaServiceAdapter extends ReplicaServiceGrpc.ReplicaServiceImplBase {
    private final RaftServer server;

    ReplicaServiceAdapter(RaftServer server) {
        this.server = server;
    }

    @Override
    public void getSnapshot(GetSnapshotRequest request, StreamObserver<GetSnapshotResponse> observer) {
        TopicPartition partition = new TopicPartition(request.getTopic(), request.getPartition());
        try {
            PartitionStateMachine stateMachine = stateMachine(partition);
            io.tidemark.replication.snapshot.SnapshotDescriptor snapshot = stateMachine.latestSnapshot()
                    .orElseThrow(() -> new TidemarkException(ErrorCode.NOT_AVAILABLE, "the replica of " + partition
                            + " on this broker has taken no snapshot yet"));
            observer.onNext(GetSnapshotResponse.newBuilder().setSnapshot(SnapshotDescriptor.newBuilder()
                    .setTerm(snapshot.term()).setIndex(snapshot.index()).setLogStartOffset(snapshot.logStartOffset())
                    .setLogEndOffset(snapshot.logEndOffset())).build());
            observer.onCompleted();
        } catch (TidemarkException e) {
            observer.onError(GrpcErrors.toStatusException(e));
        }
    }

    private PartitionStateMachine stateMachine(TopicPartition partition) {
        try {
            return (PartitionStateMachine) server.getDivision(RaftGroups.partition(partition)).getStateMachine();
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "this broker holds no replica of " + partition
                    + ": " + e.getMessage());
        }
    }
}
