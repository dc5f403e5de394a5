package io.tidemark.core.server;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.tidemark.core.auth.Refusal;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.ErrorCode;

import java.util.function.BooleanSupplier;

/**
 * Refuses the client API's calls with NOT_AVAILABLE while the broker's metadata has not caught up with the cluster's
 * ({@link ClusterServices#caughtUp}), as a broker that just started: its answer would lack topics the cluster has,
 * and a client would take that for UNKNOWN_TOPIC. A client moves on to another broker on NOT_AVAILABLE. The brokers'
 * internal services are not held back: a starting broker's catch-up needs them.
 */
final class CaughtUpGate implements ServerInterceptor {
    private final BooleanSupplier caughtUp;

    CaughtUpGate(BooleanSupplier caughtUp) {
        this.caughtUp = caughtUp;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                      ServerCallHandler<Q, A> next) {
        if (!caughtUp.getAsBoolean()) {
            return Refusal.close(call, new TidemarkException(ErrorCode.NOT_AVAILABLE, "this broker is starting: its "
                    + "metadata has not caught up with the cluster's yet; another broker can answer, or retry"));
        }
        return next.startCall(call, headers);
    }
}
