package io.tidemark.core.auth;

import io.grpc.ServerCall;
import io.grpc.StatusRuntimeException;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;

/** Ends a call the broker refuses before its service sees it, with the error as every Tidemark answer carries one. */
public final class Refusal {
    private Refusal() {
    }

    /** Closes the call with the error; the listener returned ignores what the client still sends. */
    public static <Q, A> ServerCall.Listener<Q> close(ServerCall<Q, A> call, TidemarkException error) {
        StatusRuntimeException status = GrpcErrors.toStatusException(error);
        call.close(status.getStatus(), status.getTrailers());
        return new ServerCall.Listener<>() {
        };
    }
}
