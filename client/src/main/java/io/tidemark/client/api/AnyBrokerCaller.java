package io.tidemark.client.api;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Channel;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.AdminServiceGrpc;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.GroupServiceGrpc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Makes the calls any broker can answer (metadata, admin, group offsets) on whichever broker answers: it tries the
 * addresses in turn, starting with the last one that answered, and moves to the next when a call fails with
 * {@link ErrorCode#NOT_AVAILABLE} (unreachable, starting or stopping, deadline passed). Any other error is the
 * broker's answer and ends the call. Each attempt has the deadline {@code request.timeout.ms}, so a call takes at
 * most that times the number of addresses. The addresses are the bootstrap list and, once metadata named them, the
 * cluster's other brokers ({@link #learn}), so a client whose bootstrap brokers are down, or cut off from the rest,
 * still finds one that knows the cluster; {@link #preferAnother} moves on from a broker whose answer was of no use.
 *
 * <p>A call that timed out may still have taken effect on the broker that did not answer; retrying it on the next
 * broker can then report, for instance, TOPIC_EXISTS for a topic this call created.
 *
 * <p>Not a {@link Retry}: it fails over across addresses, once each, not over time, and moves on only when this
 * broker could not answer (NOT_AVAILABLE, a cut call included), not for every retriable error: NOT_LEADER is the
 * cluster's answer about a partition, the same from every broker. Waiting out an outage is the caller's (a
 * {@link Retry} around the whole call, as {@link TidemarkConsumer#commitSync} does).
 *
 * <p>Thread-safe.
 */
final class AnyBrokerCaller {
    private final List<String> bootstrap;
    private final BrokerChannels channels;
    private final long requestTimeoutMs;
    private final AtomicInteger preferred = new AtomicInteger();
    /** The bootstrap addresses, then the other brokers' that metadata named. */
    private volatile List<String> addresses;

    AnyBrokerCaller(List<String> bootstrap, BrokerChannels channels, long requestTimeoutMs) {
        if (bootstrap.isEmpty()) {
            throw new IllegalArgumentException("at least one bootstrap address is needed");
        }
        this.bootstrap = List.copyOf(bootstrap);
        this.addresses = this.bootstrap;
        this.channels = channels;
        this.requestTimeoutMs = requestTimeoutMs;
    }

    /** Adds the brokers metadata named to the addresses calls try, after the bootstrap ones. */
    void learn(Collection<String> brokers) {
        List<String> now = addresses;
        List<String> learned = new ArrayList<>(bootstrap);
        brokers.stream().filter(b -> !bootstrap.contains(b)).sorted().forEach(learned::add);
        if (!learned.equals(now)) {
            String preferredAddress = now.get(Math.floorMod(preferred.get(), now.size()));
            addresses = List.copyOf(learned);
            preferred.set(Math.max(0, learned.indexOf(preferredAddress)));
        }
    }

    /**
     * The last broker that answered gave an answer of no use (its metadata names no leader for a partition, as a
     * broker cut off from the others answers): the next call starts at the next address.
     */
    void preferAnother() {
        preferred.incrementAndGet();
    }

    /**
     * Calls {@code rpc} on the bootstrap brokers in turn until one answers.
     *
     * @param what names the call in the error when no broker answers
     * @param rpc  starts the call on the given channel, usually through {@link #broker}, {@link #admin} or
     *             {@link #group}
     */
    <T> CompletableFuture<T> call(String what, Function<Channel, ListenableFuture<T>> rpc) {
        CompletableFuture<T> result = new CompletableFuture<>();
        List<String> tried = addresses;
        attempt(what, rpc, tried, Math.floorMod(preferred.get(), tried.size()), 0, null, result);
        return result;
    }

    BrokerServiceGrpc.BrokerServiceFutureStub broker(Channel channel) {
        return BrokerServiceGrpc.newFutureStub(channel).withDeadlineAfter(requestTimeoutMs, TimeUnit.MILLISECONDS);
    }

    AdminServiceGrpc.AdminServiceFutureStub admin(Channel channel) {
        return admin(channel, requestTimeoutMs);
    }

    /** An admin stub for a call that takes longer than {@code request.timeout.ms} on the broker. */
    AdminServiceGrpc.AdminServiceFutureStub admin(Channel channel, long deadlineMs) {
        return AdminServiceGrpc.newFutureStub(channel).withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS);
    }

    GroupServiceGrpc.GroupServiceFutureStub group(Channel channel) {
        return GroupServiceGrpc.newFutureStub(channel).withDeadlineAfter(requestTimeoutMs, TimeUnit.MILLISECONDS);
    }

    private <T> void attempt(String what, Function<Channel, ListenableFuture<T>> rpc, List<String> addresses,
                             int start, int tried, TidemarkException last, CompletableFuture<T> result) {
        if (tried == addresses.size()) {
            result.completeExceptionally(new TidemarkException(ErrorCode.NOT_AVAILABLE, "no broker of "
                    + (addresses.equals(bootstrap) ? "bootstrap " : "") + addresses + " answered " + what
                    + "; the last error: " + last.getMessage()));
            return;
        }
        int index = (start + tried) % addresses.size();
        String address = addresses.get(index);
        GrpcFutures.start(() -> rpc.apply(channels.get(address))).whenComplete((value, error) -> {
            if (error == null) {
                preferred.set(index);
                result.complete(value);
                return;
            }
            RuntimeException failure = GrpcFutures.rethrowable(error);
            if (failure instanceof TidemarkException e && e.code() == ErrorCode.NOT_AVAILABLE) {
                attempt(what, rpc, addresses, start, tried + 1, e, result);
            } else {
                result.completeExceptionally(failure);
            }
        });
    }
}
