package io.tidemark.replication.cluster;

import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.tls.TlsMaterial;
import io.tidemark.proto.v1.ClusterServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ProbeRequest;
import io.tidemark.proto.v1.ProbeResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Says, as an error at most once a minute per member, that a member of the cluster refuses this broker's connections
 * (TLS on one side and not the other, or certificates of another CA): such a broker can never join its cluster, and
 * Ratis would only log its failed votes at INFO.
 *
 * <p>A probe ({@link ClusterLiveness}) seldom carries the reason itself: a TLS-only broker answers a plain-text
 * connection with a GOAWAY naming the reason, which closes the probe's stream unsent, and gRPC retries such a stream
 * transparently on new connections until the probe's deadline, so the probe fails DEADLINE_EXCEEDED without the
 * reason. So a probe that fails for another reason than a refusal is checked again, at most once per
 * {@link #CHECK_INTERVAL_MS} per member, by one probe on a channel of its own without retries, which fails with the
 * reason at once; the liveness channels keep gRPC's retries, which carry probes over a member's restart.
 *
 * <p>Threading: failures arrive on gRPC's threads; the maps are concurrent.
 */
final class ConnectionRefusals implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionRefusals.class);
    /** A member refusing this broker's connections is logged again after this long. */
    private static final long LOG_INTERVAL_MS = 60_000;
    /** A member whose probes fail is checked for a refusal at most this often: one connection per member per 10 s. */
    private static final long CHECK_INTERVAL_MS = 10_000;
    private static final long CHECK_DEADLINE_MS = 2_000;

    private final int nodeId;
    private final ClusterMembers members;
    private final InstantSource clock;
    private final Optional<TlsMaterial> tls;
    private final Map<Integer, Long> loggedMs = new ConcurrentHashMap<>();
    private final Map<Integer, Long> checkedMs = new ConcurrentHashMap<>();
    private final Set<ManagedChannel> checking = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    ConnectionRefusals(int nodeId, ClusterMembers members, InstantSource clock, Optional<TlsMaterial> tls) {
        this.nodeId = nodeId;
        this.members = members;
        this.clock = clock;
        this.tls = tls;
    }

    /** A liveness probe of {@code member} failed: logs a refusal, or checks whether the failure was one. */
    void probeFailed(int member, Throwable failure) {
        TidemarkException error = GrpcErrors.fromThrowable(failure);
        if (error.code() == ErrorCode.AUTHENTICATION_FAILED) {
            refused(member, error);
            return;
        }
        long nowMs = clock.millis();
        Long lastMs = checkedMs.get(member);
        if (lastMs == null || nowMs - lastMs >= CHECK_INTERVAL_MS) {
            checkedMs.put(member, nowMs);
            check(member);
        }
    }

    private void check(int member) {
        ManagedChannel channel = TlsMaterial.channelTo(members.member(member).clientAddress(), tls).disableRetry()
                .build();
        checking.add(channel);
        if (closed) {
            done(channel);
            return;
        }
        ClusterServiceGrpc.newStub(channel).withDeadlineAfter(CHECK_DEADLINE_MS, TimeUnit.MILLISECONDS)
                .probe(ProbeRequest.newBuilder().setFromNodeId(nodeId).build(), new StreamObserver<>() {
                    @Override
                    public void onNext(ProbeResponse response) {
                    }

                    @Override
                    public void onError(Throwable failure) {
                        TidemarkException error = GrpcErrors.fromThrowable(failure);
                        if (error.code() == ErrorCode.AUTHENTICATION_FAILED) {
                            refused(member, error);
                        }
                        done(channel);
                    }

                    @Override
                    public void onCompleted() {
                        done(channel);
                    }
                });
    }

    private void done(ManagedChannel channel) {
        checking.remove(channel);
        channel.shutdownNow();
    }

    private void refused(int member, TidemarkException refusal) {
        long nowMs = clock.millis();
        Long lastMs = loggedMs.get(member);
        if (lastMs == null || nowMs - lastMs >= LOG_INTERVAL_MS) {
            loggedMs.put(member, nowMs);
            LOG.error("Node {} at {} refused this broker's connection, so this broker cannot work with it: the "
                    + "brokers of a cluster must all run TLS with certificates of one CA ({}), or all plain text. {}",
                    member, members.member(member).clientAddress(), tls.isPresent() ? "this broker runs TLS"
                            : "this broker runs in plain text: give it the cluster's tls.* keys", refusal.getMessage());
        }
    }

    @Override
    public void close() {
        closed = true;
        checking.forEach(ManagedChannel::shutdownNow);
    }
}
