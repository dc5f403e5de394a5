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
     * index plus a window of one batch (LogSegment's lookups), a few microseconds, and never waits: its leader check
     * asks RunningDivisions, not Ratis' getDivision, which blocks while a group's replica is being built. Produce is
     * not here: Ratis' submitClientRequestAsync, behind group commit, waits for the group's client executor, and that
     * waits for room in the Raft log's write queue under load.
     */
    static final Set<String> INLINE_METHODS = Set.of(BrokerServiceGrpc.getListOffsetsMethod().getFullMethodName());

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
