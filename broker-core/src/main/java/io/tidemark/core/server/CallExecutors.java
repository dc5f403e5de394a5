package io.tidemark.core.server;

import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.tidemark.proto.v1.BrokerServiceGrpc;

import java.util.Set;
import java.util.concurrent.Executor;

/**
 * Chooses the thread each gRPC call of the broker runs on. The server's own executor is direct, so gRPC reads a call's
 * method on the Netty event loop that read its headers and asks this supplier there: the calls of
 * {@link #INLINE_METHODS} stay on that event loop, which decodes the request, runs the handler and writes the answer;
 * every other call moves to the pool, as all of them did with gRPC's default executor.
 *
 * <p>Why: gRPC hands each event of a call (headers, message, half-close, completion) to the call's executor, and a
 * pool thread woken for each, plus the event loop woken again to write the answer, made about 6.6 context switches on
 * the broker per ListOffsets (counted in {@code /proc/PID/task/TID/status} over 10,000 lookups); on a machine whose
 * cores are busy, each wakeup may wait for one, and those waits made most of the lookup's p99 (docs/benchmarks.md,
 * "Time lookup through the API"). A method belongs in {@link #INLINE_METHODS} only if its handler never waits: no Raft
 * round, no lock held across I/O, no scan that grows with the log; a page-cache read of a few KiB is the most it may
 * do, since every connection the event loop serves waits while it runs.
 *
 * <p>Stateless apart from the pool; thread-safe.
 */
final class CallExecutors implements ServerCallExecutorSupplier {
    /**
     * Answered on the event loop: ListOffsets reads the leader's replica state and at most a binary search of an
     * index plus a window of one batch (LogSegment's lookups), a few microseconds. Produce and ProduceMany admit each
     * batch (one CRC pass over it, ~50 µs for 256 KiB) and queue it for its group's commit, which hands entries to
     * Ratis' asynchronous submit; the answer is written when the entry is applied, from Ratis' thread. A leader check
     * never waits (RunningDivisions). On the event loop, the requests of one connection also reach group commit in
     * the order they were sent.
     */
    static final Set<String> INLINE_METHODS = Set.of(BrokerServiceGrpc.getListOffsetsMethod().getFullMethodName(),
            BrokerServiceGrpc.getProduceMethod().getFullMethodName(),
            BrokerServiceGrpc.getProduceManyMethod().getFullMethodName());

    private final Executor pool;

    /** @param pool runs every call not in {@link #INLINE_METHODS} */
    CallExecutors(Executor pool) {
        this.pool = pool;
    }

    @Override
    public <ReqT, RespT> Executor getExecutor(ServerCall<ReqT, RespT> call, Metadata metadata) {
        return INLINE_METHODS.contains(call.getMethodDescriptor().getFullMethodName())
                ? MoreExecutors.directExecutor() : pool;
    }
}
