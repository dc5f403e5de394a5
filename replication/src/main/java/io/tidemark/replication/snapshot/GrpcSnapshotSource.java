package io.tidemark.replication.snapshot;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.FetchRequest;
import io.tidemark.proto.record.TopicIds;
import io.tidemark.proto.v1.GetSnapshotRequest;
import io.tidemark.proto.v1.GroupSnapshot;
import io.tidemark.proto.v1.ReplicaServiceGrpc;

import java.io.Closeable;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * {@link SnapshotSource} over the brokers' own gRPC API: {@code ReplicaService.GetSnapshot} (replica.proto) for the
 * snapshot and {@code BrokerService.Fetch} for the batches, which the leader serves from its logs. One channel per
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
    public ByteBuffer fetch(int nodeId, TopicPartition partition, UUID topicId, long offset, int maxBytes) {
        try {
            return BrokerServiceGrpc.newBlockingStub(channel(nodeId))
                    .withDeadlineAfter(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .fetch(FetchRequest.newBuilder().setTopic(partition.topic()).setPartition(partition.partition())
                            .setTopicId(TopicIds.toBytes(topicId)).setOffset(offset).setMaxBytes(maxBytes).build())
                    .getBatches().asReadOnlyByteBuffer();
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
