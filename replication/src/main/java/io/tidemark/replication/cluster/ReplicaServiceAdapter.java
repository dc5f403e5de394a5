package io.tidemark.replication.cluster;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.stub.StreamObserver;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GetMetadataSnapshotRequest;
import io.tidemark.proto.v1.GetMetadataSnapshotResponse;
import io.tidemark.proto.v1.GetSnapshotRequest;
import io.tidemark.proto.v1.GetSnapshotResponse;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.MetadataSnapshot;
import io.tidemark.proto.v1.ReadPartitionRequest;
import io.tidemark.proto.v1.ReadPartitionResponse;
import io.tidemark.proto.v1.ReplicaServiceGrpc;
import io.tidemark.replication.statemachine.GroupStateMachine;
import io.tidemark.replication.statemachine.HostedPartition;
import io.tidemark.replication.statemachine.PartitionHost;
import io.tidemark.replication.statemachine.MetadataStateMachine;
import io.tidemark.replication.statemachine.PartitionKey;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;

import java.io.IOException;
import java.util.Optional;
import java.util.UUID;

/**
 * The internal {@code ReplicaService} (replica.proto) of a cluster node: the latest snapshot of the replicas of
 * partition groups it runs, and their partitions' batches, for replicas on other brokers that catch up from it and
 * for partitions that move to another group; and the latest snapshot of its member of the metadata group, for a
 * member that lost its Raft storage.
 */
final class ReplicaServiceAdapter extends ReplicaServiceGrpc.ReplicaServiceImplBase {
    /** The most one read answers, whatever it asks for: a bound on the memory one call takes. */
    static final int MAX_READ_BYTES = 8 << 20;

    private final RaftServer server;
    private final MetadataStateMachine metadata;

    ReplicaServiceAdapter(RaftServer server, MetadataStateMachine metadata) {
        this.server = server;
        this.metadata = metadata;
    }

    @Override
    public void getMetadataSnapshot(GetMetadataSnapshotRequest request,
                                    StreamObserver<GetMetadataSnapshotResponse> observer) {
        Optional<MetadataSnapshot> snapshot = metadata.latestSnapshot();
        if (snapshot.isEmpty()) {
            observer.onError(GrpcErrors.toStatusException(new TidemarkException(ErrorCode.NOT_AVAILABLE,
                    "the member of the metadata group on this broker has taken no snapshot yet")));
            return;
        }
        observer.onNext(GetMetadataSnapshotResponse.newBuilder().setSnapshot(snapshot.get()).build());
        observer.onCompleted();
    }

    @Override
    public void getSnapshot(GetSnapshotRequest request, StreamObserver<GetSnapshotResponse> observer) {
        try {
            GroupSnapshot snapshot = host(request.getGroupId()).latestSnapshot()
                    .orElseThrow(() -> new TidemarkException(ErrorCode.NOT_AVAILABLE, "the replica of Raft group "
                            + request.getGroupId() + " on this broker has taken no snapshot yet"));
            observer.onNext(GetSnapshotResponse.newBuilder().setSnapshot(snapshot).build());
            observer.onCompleted();
        } catch (TidemarkException e) {
            observer.onError(GrpcErrors.toStatusException(e));
        }
    }

    @Override
    public void readPartition(ReadPartitionRequest request, StreamObserver<ReadPartitionResponse> observer) {
        try {
            PartitionKey key = new PartitionKey(TopicIds.fromBytes(request.getTopicId()), request.getPartition());
            HostedPartition partition = host(request.getGroupId()).partition(key).orElseThrow(() ->
                    new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "Raft group " + request.getGroupId()
                            + " does not host " + key + " on this broker"));
            PartitionLog log = partition.log();
            long start = log.logStartOffset();
            long end = log.logEndOffset();
            if (request.getOffset() > end) {
                throw new TidemarkException(ErrorCode.OFFSET_OUT_OF_RANGE, "offset " + request.getOffset() + " is past "
                        + "the end of " + partition + ": it holds offsets [" + start + ", " + end + ")");
            }
            long from = Math.max(request.getOffset(), start);
            ByteString batches = from == end ? ByteString.EMPTY : UnsafeByteOperations.unsafeWrap(log.read(from,
                    Math.max(1, Math.min(request.getMaxBytes(), MAX_READ_BYTES))).batches());
            observer.onNext(ReadPartitionResponse.newBuilder().setBatches(batches).setLogStartOffset(start)
                    .setLogEndOffset(end).setState(partition.state()).build());
            observer.onCompleted();
        } catch (TidemarkException e) {
            observer.onError(GrpcErrors.toStatusException(e));
        }
    }

    private PartitionHost host(String groupId) {
        RaftGroupId id;
        try {
            id = RaftGroupId.valueOf(UUID.fromString(groupId));
        } catch (IllegalArgumentException e) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "group id '" + groupId + "' is not a UUID");
        }
        try {
            if (server.getDivision(id).getStateMachine() instanceof GroupStateMachine stateMachine) {
                return stateMachine.host();
            }
            throw new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "Raft group " + groupId + " hosts no partitions");
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.UNKNOWN_PARTITION, "this broker does not run Raft group " + groupId
                    + ": " + e.getMessage());
        }
    }
}
