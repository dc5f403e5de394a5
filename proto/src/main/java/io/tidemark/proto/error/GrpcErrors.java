package io.tidemark.proto.error;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ErrorDetail;

/**
 * The one place where Tidemark errors meet gRPC. The broker sends a {@link TidemarkException} as a gRPC status
 * whose details hold an {@link ErrorDetail}; the client reads it back into the same exception. Failures that
 * carry no detail (the broker is unreachable, a deadline passed) become {@link ErrorCode#NOT_AVAILABLE}, which
 * is retriable.
 *
 * <p>The gRPC status code is chosen so that generic gRPC tooling reads the error sensibly: INVALID_ARGUMENT for
 * bad input, NOT_FOUND and ALREADY_EXISTS for topics and groups (ALREADY_EXISTS also for records a mirror copied
 * already, ORIGIN_OFFSET_HELD), OUT_OF_RANGE for offsets,
 * FAILED_PRECONDITION for NOT_LEADER and producer sequence errors, UNAVAILABLE for NOT_AVAILABLE, INTERNAL
 * otherwise.
 */
public final class GrpcErrors {
    private GrpcErrors() {
    }

    public static StatusRuntimeException toStatusException(TidemarkException e) {
        ErrorDetail detail = ErrorDetail.newBuilder().setCode(e.code()).setMessage(e.getMessage())
                .setLeaderNodeId(e.leaderNodeId()).setLeaderAddress(e.leaderAddress()).build();
        com.google.rpc.Status status = com.google.rpc.Status.newBuilder()
                .setCode(grpcCode(e.code()).value())
                .setMessage(e.code() + ": " + e.getMessage())
                .addDetails(Any.pack(detail))
                .build();
        return StatusProto.toStatusRuntimeException(status);
    }

    /** The Tidemark error a failed call carried, or NOT_AVAILABLE / INTERNAL_ERROR for one it did not. */
    public static TidemarkException fromThrowable(Throwable t) {
        com.google.rpc.Status status = StatusProto.fromThrowable(t);
        if (status != null) {
            for (Any any : status.getDetailsList()) {
                if (any.is(ErrorDetail.class)) {
                    try {
                        ErrorDetail d = any.unpack(ErrorDetail.class);
                        return TidemarkException.of(d.getCode(), d.getMessage(), d.getLeaderNodeId(), d.getLeaderAddress());
                    } catch (InvalidProtocolBufferException e) {
                        return new TidemarkException(ErrorCode.INTERNAL_ERROR, "unreadable error detail: " + e.getMessage());
                    }
                }
            }
        }
        Status grpc = Status.fromThrowable(t);
        ErrorCode code = switch (grpc.getCode()) {
            case UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, RESOURCE_EXHAUSTED, ABORTED -> ErrorCode.NOT_AVAILABLE;
            default -> ErrorCode.INTERNAL_ERROR;
        };
        return new TidemarkException(code, "gRPC " + grpc.getCode()
                + (grpc.getDescription() == null ? "" : ": " + grpc.getDescription()));
    }

    static Status.Code grpcCode(ErrorCode code) {
        return switch (code) {
            case INVALID_TIMESTAMP, CORRUPT_BATCH, RECORD_TOO_LARGE, INVALID_CONFIG, INVALID_REQUEST,
                    INVALID_REPLICATION_FACTOR -> Status.Code.INVALID_ARGUMENT;
            case UNKNOWN_TOPIC, UNKNOWN_PARTITION, UNKNOWN_GROUP, UNKNOWN_TOPIC_ID -> Status.Code.NOT_FOUND;
            case TOPIC_EXISTS, ORIGIN_OFFSET_HELD -> Status.Code.ALREADY_EXISTS;
            case OFFSET_OUT_OF_RANGE -> Status.Code.OUT_OF_RANGE;
            case NOT_LEADER, OUT_OF_ORDER_SEQUENCE, INVALID_PRODUCER_EPOCH -> Status.Code.FAILED_PRECONDITION;
            case NOT_AVAILABLE -> Status.Code.UNAVAILABLE;
            default -> Status.Code.INTERNAL;
        };
    }
}
