package io.tidemark.core.server;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.tidemark.proto.error.GrpcErrors;
import io.tidemark.proto.error.TidemarkException;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class CaughtUpGateTest {
    private final AtomicBoolean caughtUp = new AtomicBoolean();
    private final CaughtUpGate gate = new CaughtUpGate(caughtUp::get);
    private final AtomicInteger started = new AtomicInteger();
    private final ServerCallHandler<Object, Object> service = (call, headers) -> {
        started.incrementAndGet();
        return new ServerCall.Listener<>() {
        };
    };

    @Test
    void aCallBeforeTheMetadataCaughtUpIsRefusedWithNotAvailableAndItsServiceNeverSeesIt() {
        RecordingCall call = new RecordingCall();

        gate.interceptCall(call, new Metadata(), service);

        assertEquals(0, started.get());
        TidemarkException refused = GrpcErrors.fromThrowable(call.closed.get().asRuntimeException(call.trailers.get()));
        assertEquals(ErrorCode.NOT_AVAILABLE, refused.code());
        assertEquals("this broker is starting: its metadata has not caught up with the cluster's yet; another broker "
                + "can answer, or retry", refused.getMessage());
    }

    @Test
    void onceCaughtUpEveryCallGoesToItsService() {
        caughtUp.set(true);
        RecordingCall call = new RecordingCall();

        gate.interceptCall(call, new Metadata(), service);

        assertEquals(1, started.get());
        assertNull(call.closed.get());
    }

    private static final class RecordingCall extends ServerCall<Object, Object> {
        private final AtomicReference<Status> closed = new AtomicReference<>();
        private final AtomicReference<Metadata> trailers = new AtomicReference<>();

        @Override
        public void request(int numMessages) {
        }

        @Override
        public void sendHeaders(Metadata headers) {
        }

        @Override
        public void sendMessage(Object message) {
        }

        @Override
        public void close(Status status, Metadata trailers) {
            closed.set(status);
            this.trailers.set(trailers);
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        @SuppressWarnings("unchecked")
        public MethodDescriptor<Object, Object> getMethodDescriptor() {
            return (MethodDescriptor<Object, Object>) (MethodDescriptor<?, ?>) BrokerServiceGrpc.getMetadataMethod();
        }
    }
}
