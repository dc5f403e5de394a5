package io.tidemark.replication.snapshot;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.v1.GetSnapshotRequest;
import io.tidemark.proto.v1.GroupPartition;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.ReadPartitionRequest;
import io.tidemark.proto.v1.ReadPartitionResponse;
import io.tidemark.proto.v1.ReplicaServiceGrpc;

import java.io.Closeable;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * {@link SnapshotSource} over the brokers' internal gRPC API ({@code ReplicaService}, replica.proto):
 * {@code GetSnapshot} for the snapshot and {@code ReadPartition} for the batches. One channel per
 * broker, kept until {@link #close}; each call has a deadline of {@value #CALL_TIMEOUT_MS} ms.
 *
 * <p>Thread-safe.
 */
public final class GrpcSnapshotSource implements SnapshotSource, Closeable {
    private static final long CALL_TIMEOUT_MS = 30_000;

    private final IntFunction<String> clientAddresses;
    private final int maxInboundBytes;
    private final Map<Integer, ManagedChannel> channels = new ConcurrentHashMap<>();

    /**
     * @param clientAddresses the {@code host:port} clients reach a broker on, by node id
     * @param maxInboundBytes the largest answer taken: a fetch chunk plus the largest batch a broker accepts
     */
    public GrpcSnapshotSource(IntFunction<String> clientAddresses, int maxInboundBytes) {
        this.clientAddresses = clientAddresses;
        this.maxInboundBytes = maxInboundBytes;
    }

    private ManagedChannel channel(int nodeId) {
        return channels.computeIfAbsent(nodeId, id -> NettyChannelBuilder.forTarget(clientAddresses.apply(id))
                .usePlaintext().maxInboundMessageSize(maxInboundBytes).build());
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
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
        channels.clear();
    }
}
