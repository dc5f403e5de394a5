package io.tidemark.replication.snapshot;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.tidemark.proto.tls.TlsMaterial;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.v1.DigestPartitionRequest;
import io.tidemark.proto.v1.DigestPartitionResponse;
import io.tidemark.proto.v1.GetMetadataSnapshotRequest;
import io.tidemark.proto.v1.GetMetadataSnapshotResponse;
import io.tidemark.proto.v1.GetSnapshotRequest;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.MetadataSnapshot;
import io.tidemark.proto.v1.ReadPartitionRequest;
import io.tidemark.proto.v1.ReadPartitionResponse;
import io.tidemark.proto.v1.ReplicaServiceGrpc;
import io.tidemark.replication.verify.ReplicaReader;

import java.io.Closeable;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * {@link SnapshotSource} over the brokers' internal gRPC API ({@code ReplicaService}, replica.proto):
 * {@code GetSnapshot} for the snapshot and {@code ReadPartition} for the batches; and
 * {@code GetMetadataSnapshot} for a member of the metadata group that installs the leader's snapshot. Also the
 * {@link ReplicaReader} of {@code tidemark replicas verify} ({@code DigestPartition}, {@code ReadPartition}). One channel per
 * broker, kept until {@link #close}; each call has a deadline of {@value #CALL_TIMEOUT_MS} ms.
 *
 * <p>Thread-safe.
 */
public final class GrpcSnapshotSource implements SnapshotSource, ReplicaReader, Closeable {
    private static final long CALL_TIMEOUT_MS = 30_000;
    /**
     * The largest metadata snapshot taken: it holds every topic's assignment in one message (about 30 bytes a
     * partition), which the leader's broker holds in memory anyway.
     */
    private static final int MAX_METADATA_SNAPSHOT_BYTES = 1 << 30;

    private final IntFunction<String> clientAddresses;
    private final int maxInboundBytes;
    private final Optional<TlsMaterial> tls;
    private final Map<Integer, ManagedChannel> channels = new ConcurrentHashMap<>();

    /**
     * @param clientAddresses the {@code host:port} clients reach a broker on, by node id
     * @param maxInboundBytes the largest answer taken: a fetch chunk plus the largest batch a broker accepts
     * @param tls             the TLS material it connects with; empty for plain text
     */
    public GrpcSnapshotSource(IntFunction<String> clientAddresses, int maxInboundBytes, Optional<TlsMaterial> tls) {
        this.clientAddresses = clientAddresses;
        this.maxInboundBytes = maxInboundBytes;
        this.tls = tls;
    }

    private ManagedChannel channel(int nodeId) {
        return channels.computeIfAbsent(nodeId, id -> TlsMaterial.channelTo(clientAddresses.apply(id), tls)
                .maxInboundMessageSize(maxInboundBytes).build());
    }

    @Override
    public GroupSnapshot latestSnapshot(int nodeId, UUID groupId) {
        try {
            return ReplicaServiceGrpc.newBlockingStub(channel(nodeId))
                    .withDeadlineAfter(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .getSnapshot(GetSnapshotRequest.newBuilder().setGroupId(groupId.toString()).build()).getSnapshot();
        } catch (StatusRuntimeException e) {
            throw GrpcErrors.fromThrowable(e);
        }
    }

    @Override
    public ReadPartitionResponse read(int nodeId, UUID groupId, GroupPartition partition, long offset, int maxBytes) {
        try {
            return ReplicaServiceGrpc.newBlockingStub(channel(nodeId))
                    .withDeadlineAfter(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .readPartition(ReadPartitionRequest.newBuilder().setGroupId(groupId.toString())
                            .setTopicId(partition.getTopicId()).setPartition(partition.getPartition())
                            .setOffset(offset).setMaxBytes(maxBytes).build());
        } catch (StatusRuntimeException e) {
            throw GrpcErrors.fromThrowable(e);
        }
    }

    @Override
    public DigestPartitionResponse digest(int nodeId, DigestPartitionRequest request) {
        try {
            return ReplicaServiceGrpc.newBlockingStub(channel(nodeId))
                    .withDeadlineAfter(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS).digestPartition(request);
        } catch (StatusRuntimeException e) {
            throw GrpcErrors.fromThrowable(e);
        }
    }

    /**
     * The latest snapshot of the member of the metadata group on {@code nodeId}.
     *
     * @return fails with the TidemarkException the broker answered (NOT_AVAILABLE when it has no snapshot yet or
     *         cannot be reached)
     */
    public CompletableFuture<MetadataSnapshot> latestMetadataSnapshot(int nodeId) {
        CompletableFuture<MetadataSnapshot> answer = new CompletableFuture<>();
        ReplicaServiceGrpc.newStub(channel(nodeId)).withDeadlineAfter(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .withMaxInboundMessageSize(MAX_METADATA_SNAPSHOT_BYTES)
                .getMetadataSnapshot(GetMetadataSnapshotRequest.getDefaultInstance(), new StreamObserver<>() {
                    @Override
                    public void onNext(GetMetadataSnapshotResponse response) {
                        answer.complete(response.getSnapshot());
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(GrpcErrors.fromThrowable(t));
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        return answer;
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
        channels.clear();
    }
}
