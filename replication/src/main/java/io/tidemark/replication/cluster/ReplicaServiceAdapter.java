package io.tidemark.replication.cluster;

import io.grpc.stub.StreamObserver;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GetSnapshotRequest;
import io.tidemark.proto.v1.GetSnapshotResponse;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.ReplicaServiceGrpc;
import io.tidemark.replication.statemachine.GroupStateMachine;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;

import java.io.IOException;
import java.util.UUID;

/**
 * The internal {@code ReplicaService} (replica.proto) of a cluster node: the latest snapshot of the replicas of
 * partition groups it runs, for replicas on other brokers that catch up from it.
 */
final class ReplicaServiceAdapter extends ReplicaServiceGrpc.ReplicaServiceImplBase {
    private final RaftServer server;

    ReplicaServiceAdapter(RaftServer server) {
        this.server = server;
    }

    @Override
    public void getSnapshot(GetSnapshotRequest request, StreamObserver<GetSnapshotResponse> observer) {
        try {
            GroupSnapshot snapshot = stateMachine(request.getGroupId()).latestSnapshot()
                    .orElseThrow(() -> new TidemarkException(ErrorCode.NOT_AVAILABLE, "the replica of Raft group "
                            + request.getGroupId() + " on this broker has taken no snapshot yet"));
            observer.onNext(GetSnapshotResponse.newBuilder().setSnapshot(snapshot).build());
            observer.onCompleted();
        } catch (TidemarkException e) {
            observer.onError(GrpcErrors.toStatusException(e));
        }
    }

    private GroupStateMachine stateMachine(String groupId) {
        RaftGroupId id;
        try {
            id = RaftGroupId.valueOf(UUID.fromString(groupId));
        } catch (IllegalArgumentException e) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "group id '" + groupId + "' is not a UUID");
        }
        try {
            if (server.getDivision(id).getStateMachine() instanceof GroupStateMachine stateMachine) {
                return stateMachine;
            }
            throw new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "Raft group " + groupId + " hosts no partitions");
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "this broker does not run Raft group " + groupId
                    + ": " + e.getMessage());
        }
    }
}
