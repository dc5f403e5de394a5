package io.tidemark.core.server;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.Status;

/** A server call of the given method that sends nothing anywhere and keeps how it was closed, for tests. */
final class RecordingServerCall<Q, A> extends ServerCall<Q, A> {
    private final MethodDescriptor<Q, A> method;
    private Status closed;
    private Metadata trailers;

    RecordingServerCall(MethodDescriptor<Q, A> method) {
        this.method = method;
    }

    /** The status it was closed with; null while open. */
    Status closed() {
        return closed;
    }

    Metadata trailers() {
        return trailers;
    }

    @Override
    public void request(int numMessages) {
    }

    @Override
    public void sendHeaders(Metadata headers) {
    }

    @Override
    public void sendMessage(A message) {
    }

    @Override
    public void close(Status status, Metadata trailers) {
        this.closed = status;
        this.trailers = trailers;
    }

    @Override
    public boolean isCancelled() {
        return false;
    }

    @Override
    public MethodDescriptor<Q, A> getMethodDescriptor() {
        return method;
    }
}
