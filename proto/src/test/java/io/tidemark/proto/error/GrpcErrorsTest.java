package io.tidemark.proto.error;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GrpcErrorsTest {
    @Test
    void roundTripsCodeMessageAndLeader() {
        StatusRuntimeException sent = GrpcErrors.toStatusException(
                TidemarkException.notLeader("node 2 leads orders-1", 2, "127.0.0.1:9092"));
        assertEquals(Status.Code.FAILED_PRECONDITION, sent.getStatus().getCode());
        TidemarkException received = GrpcErrors.fromThrowable(sent);
        assertEquals(ErrorCode.NOT_LEADER, received.code());
        assertEquals("node 2 leads orders-1", received.getMessage());
        assertEquals(2, received.leaderNodeId());
        assertEquals("127.0.0.1:9092", received.leaderAddress());
        assertTrue(received.retriable());
    }

    @Test
    void everyCodeHasAGrpcStatus() {
        for (ErrorCode code : ErrorCode.values()) {
            if (code != ErrorCode.UNRECOGNIZED) {
                TidemarkException back = GrpcErrors.fromThrowable(GrpcErrors.toStatusException(new TidemarkException(code, "m")));
                assertEquals(code, back.code());
            }
        }
        assertEquals(Status.Code.INVALID_ARGUMENT, GrpcErrors.grpcCode(ErrorCode.INVALID_TIMESTAMP));
        assertEquals(Status.Code.NOT_FOUND, GrpcErrors.grpcCode(ErrorCode.UNKNOWN_TOPIC));
    }

    @Test
    void failuresWithoutDetailAreNotAvailableOrInternal() {
        assertEquals(ErrorCode.NOT_AVAILABLE,
                GrpcErrors.fromThrowable(Status.UNAVAILABLE.withDescription("io exception").asRuntimeException()).code());
        TidemarkException internal = GrpcErrors.fromThrowable(Status.UNKNOWN.asRuntimeException());
        assertEquals(ErrorCode.INTERNAL_ERROR, internal.code());
        assertEquals("gRPC UNKNOWN", internal.getMessage());
    }
}
