package io.tidemark.core.server;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.MetadataRequest;
import io.tidemark.proto.v1.MetadataResponse;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class CaughtUpGateTest {
    private final AtomicBoolean caughtUp = new AtomicBoolean();
    private final CaughtUpGate gate = new CaughtUpGate(caughtUp::get);
    private final AtomicInteger started = new AtomicInteger();
    private final ServerCallHandler<MetadataRequest, MetadataResponse> service = (call, headers) -> {
        started.incrementAndGet();
        return new ServerCall.Listener<>() {
        };
    };
    private final RecordingServerCall<MetadataRequest, MetadataResponse> call =
            new RecordingServerCall<>(BrokerServiceGrpc.getMetadataMethod());

    @Test
    void aCallBeforeTheMetadataCaughtUpIsRefusedWithNotAvailableAndItsServiceNeverSeesIt() {
        gate.interceptCall(call, new Metadata(), service);

        assertEquals(0, started.get());
        TidemarkException refused = GrpcErrors.fromThrowable(call.closed().asRuntimeException(call.trailers()));
        assertEquals(ErrorCode.NOT_AVAILABLE, refused.code());
        assertEquals("this broker is starting: its metadata has not caught up with the cluster's yet; another broker "
                + "can answer, or retry", refused.getMessage());
    }

    @Test
    void onceCaughtUpEveryCallGoesToItsService() {
        caughtUp.set(true);

        gate.interceptCall(call, new Metadata(), service);

        assertEquals(1, started.get());
        assertNull(call.closed());
    }
}
