package io.tidemark.core.server;

import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.tidemark.proto.v1.AdminServiceGrpc;
import io.tidemark.proto.v1.BrokerServiceGrpc;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

class CallExecutorsTest {
    private final Executor pool = Runnable::run;
    private final CallExecutors executors = new CallExecutors(pool);

    @Test
    void listOffsetsStaysOnTheEventLoop() {
        assertEquals(Set.of("tidemark.v1.BrokerService/ListOffsets"), CallExecutors.INLINE_METHODS);
        assertSame(MoreExecutors.directExecutor(),
                executors.getExecutor(call(BrokerServiceGrpc.getListOffsetsMethod()), new Metadata()));
    }

    @Test
    void everyOtherCallMovesToThePool() {
        for (MethodDescriptor<?, ?> method : List.of(BrokerServiceGrpc.getProduceMethod(),
                BrokerServiceGrpc.getProduceManyMethod(), BrokerServiceGrpc.getProduceStreamMethod(),
                BrokerServiceGrpc.getFetchMethod(),
                BrokerServiceGrpc.getMetadataMethod(),
                BrokerServiceGrpc.getOriginOffsetMethod(), AdminServiceGrpc.getCreateTopicMethod())) {
            assertSame(pool, executors.getExecutor(call(method), new Metadata()), method.getFullMethodName());
        }
    }

    private static <ReqT, RespT> ServerCall<ReqT, RespT> call(MethodDescriptor<ReqT, RespT> method) {
        return new RecordingServerCall<>(method);
    }
}
