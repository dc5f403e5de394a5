package io.tidemark.replication.cluster;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.stub.StreamObserver;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.core.log.PartitionLog;
import io.tidemark.core.log.RangeDigests;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.DigestPartitionRequest;
import io.tidemark.proto.v1.DigestPartitionResponse;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.UUID;

/**
 * The internal {@code ReplicaService} (replica.proto) of a cluster node: the latest snapshot of the replicas of
 * partition groups it runs, and their partitions' batches, for replicas on other brokers that catch up from it and
 * for partitions that move to another group; and the latest snapshot of its member of the metadata group, for a
 * member that lost its Raft storage; and digests of its replicas' records, for {@code tidemark replicas verify}.
 */
final class ReplicaServiceAdapter extends ReplicaServiceGrpc.ReplicaServiceImplBase {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaServiceAdapter.class);
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
        } catch (RuntimeException e) {
            observer.onError(GrpcErrors.toStatusException(refusal(e)));
        }
    }

    @Override
    public void readPartition(ReadPartitionRequest request, StreamObserver<ReadPartitionResponse> observer) {
        try {
            HostedPartition partition = hosted(request.getGroupId(), request.getTopicId(), request.getPartition());
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
        } catch (RuntimeException e) {
            observer.onError(GrpcErrors.toStatusException(refusal(e)));
        }
    }

    @Override
    public void digestPartition(DigestPartitionRequest request, StreamObserver<DigestPartitionResponse> observer) {
        try {
            if (request.getRangeOffsets() < 1) {
                throw new TidemarkException(ErrorCode.INVALID_REQUEST, "range_offsets must be at least 1, not "
                        + request.getRangeOffsets());
            }
            PartitionLog log = hosted(request.getGroupId(), request.getTopicId(), request.getPartition()).log();
            observer.onNext(RangeDigests.answer(log, request));
            observer.onCompleted();
        } catch (RuntimeException e) {
            observer.onError(GrpcErrors.toStatusException(refusal(e)));
        }
    }

    /**
     * The error a call answers for a failure: a TidemarkException as it is, a failed read of this broker's disk
     * STORAGE_ERROR naming the file, anything else INTERNAL_ERROR with what it was (logged).
     */
    private static TidemarkException refusal(RuntimeException failure) {
        if (failure instanceof TidemarkException e) {
            return e;
        }
        if (failure instanceof UncheckedIOException io) {
            LOG.error("Storage failure answering a replica request", io);
            return new TidemarkException(ErrorCode.STORAGE_ERROR, io.getMessage() + ": " + io.getCause());
        }
        LOG.error("Unexpected failure answering a replica request", failure);
        return new TidemarkException(ErrorCode.INTERNAL_ERROR, failure.toString());
    }

    /** A partition a group runs here hosts; UNKNOWN_PARTITION when it runs no such group or hosts no such partition. */
    private HostedPartition hosted(String groupId, ByteString topicId, int partition) {
        if (topicId.size() != TopicIds.LENGTH) {
            throw new TidemarkException(ErrorCode.INVALID_REQUEST, "topic_id has " + topicId.size()
                    + " bytes; a topic id has " + TopicIds.LENGTH);
        }
        PartitionKey key = new PartitionKey(TopicIds.fromBytes(topicId), partition);
        return host(groupId).partition(key).orElseThrow(() -> new TidemarkException(ErrorCode.UNKNOWN_PARTITION,
                "Raft group " + groupId + " does not host " + key + " on this broker"));
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
