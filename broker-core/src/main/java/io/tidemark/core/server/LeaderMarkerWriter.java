package io.tidemark.core.server;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.tidemark.core.log.AppendResult;
import io.tidemark.core.partition.TopicPartition;
import io.tidemark.core.topic.Topics;
import io.tidemark.core.txn.MarkerWriter;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.tls.TlsMaterial;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.TransactionServiceGrpc;
import io.tidemark.proto.v1.WriteTxnMarkerRequest;
import io.tidemark.proto.v1.WriteTxnMarkerResponse;

import java.io.Closeable;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Writes transaction markers for the coordinator: to a partition this broker leads, by appending it here; to one led
 * elsewhere, by calling {@code WriteTxnMarker} on the leader a NOT_LEADER answer names. While no leader is known (an
 * election under way) it tries again every {@value #RETRY_BACKOFF_MS} ms, {@value #ATTEMPTS} times at most; the
 * coordinator bounds the whole wait and answers NOT_AVAILABLE beyond it (its decision stays stored and is completed
 * on the next call).
 *
 * <p>Thread-safe.
 */
final class LeaderMarkerWriter implements MarkerWriter, Closeable {
    private static final long RETRY_BACKOFF_MS = 100;
    private static final int ATTEMPTS = 100;
    private static final long CALL_TIMEOUT_MS = 10_000;

    private final Topics topics;
    private final Optional<TlsMaterial> tls;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final Executor retries = CompletableFuture.delayedExecutor(RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS);

    /** @param tls this broker's TLS material, for its calls to other brokers; empty for plain text */
    LeaderMarkerWriter(Topics topics, Optional<TlsMaterial> tls) {
        this.topics = topics;
        this.tls = tls;
    }

    @Override
    public CompletableFuture<Long> write(TopicPartition tp, ByteBuffer marker) {
        return attempt(tp, marker, ATTEMPTS);
    }

    private CompletableFuture<Long> attempt(TopicPartition tp, ByteBuffer marker, int attemptsLeft) {
        return once(tp, marker).handle((offset, failure) -> {
            if (failure == null) {
                return CompletableFuture.completedFuture(offset);
            }
            TidemarkException e = asTidemark(failure);
            if (!e.retriable() || attemptsLeft <= 1) {
                return CompletableFuture.<Long>failedFuture(e);
            }
            return CompletableFuture.supplyAsync(() -> null, retries)
                    .thenCompose(ignored -> attempt(tp, marker, attemptsLeft - 1));
        }).thenCompose(f -> f);
    }

    /** Appends here; a NOT_LEADER naming the leader sends it there instead. */
    private CompletableFuture<Long> once(TopicPartition tp, ByteBuffer marker) {
        CompletableFuture<AppendResult> local;
        try {
            local = topics.partition(tp.topic(), tp.partition()).append(marker.asReadOnlyBuffer());
        } catch (RuntimeException e) {
            local = CompletableFuture.failedFuture(e);
        }
        return local.thenApply(AppendResult::baseOffset).handle((offset, failure) -> {
            if (failure == null) {
                return CompletableFuture.completedFuture(offset);
            }
            TidemarkException e = asTidemark(failure);
            if (e.code() == ErrorCode.NOT_LEADER && !e.leaderAddress().isEmpty()) {
                return remote(e.leaderAddress(), tp, marker);
            }
            return CompletableFuture.<Long>failedFuture(e);
        }).thenCompose(f -> f);
    }

    private CompletableFuture<Long> remote(String address, TopicPartition tp, ByteBuffer marker) {
        ManagedChannel channel = channels.computeIfAbsent(address, a -> TlsMaterial.channelTo(a, tls).build());
        WriteTxnMarkerRequest request = WriteTxnMarkerRequest.newBuilder().setTopic(tp.topic())
                .setPartition(tp.partition()).setMarker(ByteString.copyFrom(marker.duplicate())).build();
        CompletableFuture<Long> written = new CompletableFuture<>();
        Futures.addCallback(TransactionServiceGrpc.newFutureStub(channel)
                .withDeadlineAfter(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS).writeTxnMarker(request),
                new FutureCallback<WriteTxnMarkerResponse>() {
                    @Override
                    public void onSuccess(WriteTxnMarkerResponse response) {
                        written.complete(response.getOffset());
                    }

                    @Override
                    public void onFailure(Throwable t) {
                        written.completeExceptionally(GrpcErrors.fromThrowable(t));
                    }
                }, MoreExecutors.directExecutor());
        return written;
    }

    private static TidemarkException asTidemark(Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        return cause instanceof TidemarkException e ? e : new TidemarkException(ErrorCode.NOT_AVAILABLE,
                "writing a transaction marker failed: " + cause);
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
