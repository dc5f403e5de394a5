package io.tidemark.proto.error;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.internal.GrpcUtil;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Error;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Exception;
import io.tidemark.proto.v1.ErrorCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import java.util.List;
import java.security.cert.CertificateExpiredException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.nio.channels.ClosedChannelException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The statuses are built as grpc-java 1.85's Netty transport builds them (its {@code Utils.statusFromThrowable},
 * {@code NettyClientTransport.statusFromFailedFuture}, {@code NettyClientHandler.onRstStreamRead}, {@code goingAway},
 * {@code channelInactive}), with the causes it attaches.
 */
class GrpcErrorsTest {
    @Test
    void roundTripsCodeMessageAndLeader() {
        StatusRuntimeException sent = GrpcErrors.toStatusException(
                TidemarkException.notLeader("node 2 leads orders-1", 2, 7, "127.0.0.1:9092"));
        assertEquals(Status.Code.FAILED_PRECONDITION, sent.getStatus().getCode());
        TidemarkException received = GrpcErrors.fromThrowable(sent);
        assertEquals(ErrorCode.NOT_LEADER, received.code());
        assertEquals("node 2 leads orders-1", received.getMessage());
        assertEquals(2, received.leaderNodeId());
        assertEquals(7, received.leaderEpoch());
        assertEquals("127.0.0.1:9092", received.leaderAddress());
        assertTrue(received.retriable());
    }

    @Test
    void anErrorDetailRoundTripsCodeMessageAndLeader() {
        TidemarkException received = GrpcErrors.fromDetail(GrpcErrors.toDetail(
                TidemarkException.notLeader("node 3 leads orders-0", 3, 12, "127.0.0.1:9093")));
        assertEquals(ErrorCode.NOT_LEADER, received.code());
        assertEquals("node 3 leads orders-0", received.getMessage());
        assertEquals(3, received.leaderNodeId());
        assertEquals(12, received.leaderEpoch());
        assertEquals("127.0.0.1:9093", received.leaderAddress());
        TidemarkException plain = GrpcErrors.fromDetail(GrpcErrors.toDetail(
                new TidemarkException(ErrorCode.RECORD_TOO_LARGE, "batch of 2000000 bytes")));
        assertEquals(ErrorCode.RECORD_TOO_LARGE, plain.code());
        assertEquals("batch of 2000000 bytes", plain.getMessage());
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

    /**
     * TLS that could not be set up is AUTHENTICATION_FAILED, not a broker away: a certificate refused on this side or
     * by the broker's alert, a plain-text broker, and a TLS-only broker's GOAWAY to a plain-text client whatever status
     * wraps it; a handshake cut by a dying broker stays NOT_AVAILABLE.
     */
    @Test
    void tlsThatCouldNotBeSetUpIsAnAuthenticationFailureAndACutHandshakeIsNot() {
        List<Throwable> refused = List.of(
                Status.UNAVAILABLE.withDescription("io exception").withCause(new SSLHandshakeException(
                        "PKIX path building failed")).asRuntimeException(),
                Status.UNAVAILABLE.withDescription("ssl exception").withCause(new SSLException(
                        "error:1000045c:SSL routines:OPENSSL_internal:TLSV1_ALERT_CERTIFICATE_REQUIRED"))
                        .asRuntimeException(),
                Status.UNAVAILABLE.withCause(new SSLException("io.netty.handler.ssl.NotSslRecordException: not an "
                        + "SSL/TLS record: 00001204")).asRuntimeException(),
                Status.UNAVAILABLE.withCause(new RuntimeException(new CertificateExpiredException("NotAfter: ...")))
                        .asRuntimeException(),
                Status.INTERNAL.withDescription("Too many transparent retries. Might be a bug in gRPC: UNAVAILABLE: "
                        + "Abrupt GOAWAY closed unsent stream. HTTP/2 error code: INADEQUATE_SECURITY, debug data: "
                        + GrpcErrors.TLS_REQUIRED + ": connect with ...").asRuntimeException());
        for (Throwable failure : refused) {
            TidemarkException e = GrpcErrors.fromThrowable(failure);
            assertEquals(ErrorCode.AUTHENTICATION_FAILED, e.code(), failure.toString());
            assertTrue(e.getMessage().startsWith("TLS could not be set up with the broker (check tls.ca.file, "
                    + "tls.cert.file and tls.key.file, or --command-config, against the broker's TLS settings): gRPC "),
                    e.getMessage());
        }
        assertEquals(ErrorCode.NOT_AVAILABLE, GrpcErrors.fromThrowable(Status.UNAVAILABLE.withDescription(
                "ssl exception").withCause(new SSLException("SSLEngine closed already")).asRuntimeException()).code());
        assertEquals(ErrorCode.NOT_AVAILABLE, GrpcErrors.fromThrowable(Status.UNAVAILABLE.withCause(
                new SSLHandshakeException("Remote host terminated the handshake")).asRuntimeException()).code());
    }

    @Test
    void onlyNotLeaderAndNotAvailableAreRetriable() {
        for (ErrorCode code : ErrorCode.values()) {
            if (code != ErrorCode.UNRECOGNIZED) {
                assertEquals(code == ErrorCode.NOT_LEADER || code == ErrorCode.NOT_AVAILABLE,
                        new TidemarkException(code, "m").retriable(), code.name());
            }
        }
    }

    @Test
    void aBrokersInternalErrorStaysInternalWhateverItsStatusLooksLike() {
        TidemarkException bug = GrpcErrors.fromThrowable(GrpcErrors.toStatusException(
                new TidemarkException(ErrorCode.INTERNAL_ERROR, "storage error: No space left on device")));
        assertEquals(ErrorCode.INTERNAL_ERROR, bug.code());
        assertEquals("storage error: No space left on device", bug.getMessage());
        assertFalse(bug.retriable());
    }

    @Test
    void callsTheBrokerDidNotAnswerAreNotAvailable() {
        assertNotAvailable("gRPC UNAVAILABLE: io exception; cause: java.net.ConnectException: Connection refused",
                Status.UNAVAILABLE.withDescription("io exception").withCause(new ConnectException("Connection refused")));
        assertNotAvailable("gRPC UNAVAILABLE: io exception; cause: java.net.SocketException: Connection reset",
                Status.UNAVAILABLE.withDescription("io exception").withCause(new SocketException("Connection reset")));
        assertNotAvailable("gRPC UNAVAILABLE: Network closed for unknown reason",
                Status.UNAVAILABLE.withDescription("Network closed for unknown reason"));
        assertNotAvailable("gRPC UNAVAILABLE: channel closed; cause: java.io.IOException: Broken pipe",
                Status.UNAVAILABLE.withDescription("channel closed")
                        .withCause(new ClosedChannelException().initCause(new IOException("Broken pipe"))));
        assertNotAvailable("gRPC UNAVAILABLE: GOAWAY shut down transport. HTTP/2 error code: NO_ERROR",
                Status.UNAVAILABLE.withDescription("GOAWAY shut down transport. HTTP/2 error code: NO_ERROR"));
        assertNotAvailable("gRPC UNAVAILABLE: Channel shutdownNow invoked",
                Status.UNAVAILABLE.withDescription("Channel shutdownNow invoked"));
        assertNotAvailable("gRPC DEADLINE_EXCEEDED: deadline exceeded after 0.999s",
                Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded after 0.999s"));
        assertNotAvailable("gRPC RESOURCE_EXHAUSTED", Status.RESOURCE_EXHAUSTED);
        assertNotAvailable("gRPC ABORTED", Status.ABORTED);
    }

    @Test
    void aMessageLargerThanItsReceiverTakesIsTooLargeAndNotRetriable() {
        TidemarkException e = GrpcErrors.fromThrowable(Status.RESOURCE_EXHAUSTED
                .withDescription("gRPC message exceeds maximum size 1024: 5093").asRuntimeException());
        assertEquals(ErrorCode.MESSAGE_TOO_LARGE, e.code());
        assertEquals("the message is larger than its receiver takes (a broker's max.request.bytes for a request; the "
                + "client's largest answer for an answer): gRPC RESOURCE_EXHAUSTED: gRPC message exceeds maximum size "
                + "1024: 5093", e.getMessage());
        assertFalse(e.retriable());
    }

    @Test
    void aWriteOnAConnectionThatClosedIsACutCallNotAnInternalError() {
        // Utils.statusFromThrowable: a ClosedChannelException without a cause, wrapped in a new one
        ClosedChannelException netty = new ClosedChannelException();
        assertNotAvailable("the call was cut before the broker answered: gRPC UNKNOWN: channel closed; cause: "
                + "java.nio.channels.ClosedChannelException",
                Status.UNKNOWN.withDescription("channel closed").withCause(new ClosedChannelException().initCause(netty)));
        // the same status after a hop that drops causes (an in-process channel)
        assertNotAvailable("the call was cut before the broker answered: gRPC UNKNOWN: channel closed",
                Status.UNKNOWN.withDescription("channel closed"));
        // NettyClientTransport.statusFromFailedFuture, before the handler knew why the channel closed
        assertNotAvailable("the call was cut before the broker answered: gRPC UNKNOWN: Channel closed but for unknown"
                + " reason; cause: java.nio.channels.ClosedChannelException",
                Status.UNKNOWN.withDescription("Channel closed but for unknown reason")
                        .withCause(new ClosedChannelException().initCause(new ClosedChannelException())));
    }

    @Test
    void anIoFailureWithoutAStatusIsACutCall() {
        TidemarkException e = GrpcErrors.fromThrowable(new SocketException("Connection reset"));
        assertEquals(ErrorCode.NOT_AVAILABLE, e.code());
        assertEquals("the call was cut before the broker answered: gRPC UNKNOWN; cause: java.net.SocketException: "
                + "Connection reset", e.getMessage());
    }

    /**
     * NettyClientHandler.onRstStreamRead: the code follows GrpcUtil.Http2Error; INTERNAL for most error codes. A
     * stream reset by the peer ended without an answer, so it is retried; PERMISSION_DENIED and UNKNOWN (insecure
     * transport, HTTP/1.1 required) are a misconfigured peer, which a retry does not mend.
     */
    @ParameterizedTest
    @EnumSource(Http2Error.class)
    void aStreamResetByThePeerIsACutCall(Http2Error error) {
        Status status = h2Status("RST_STREAM closed stream", error);
        TidemarkException e = fromStatus(status);
        boolean misconfigured = status.getCode() == Status.Code.PERMISSION_DENIED
                || status.getCode() == Status.Code.UNKNOWN;
        assertEquals(misconfigured ? ErrorCode.INTERNAL_ERROR : ErrorCode.NOT_AVAILABLE, e.code(), status.toString());
        assertTrue(e.getMessage().contains("gRPC " + status.getCode() + ": RST_STREAM closed stream. HTTP/2 error code: "
                + error.name()), e.getMessage());
    }

    @Test
    void anHttp2OrGoawayErrorEndingTheStreamIsACutCall() {
        Http2Exception streamClosed = Http2Exception.streamError(3, Http2Error.STREAM_CLOSED,
                "Stream closed before write could take place");
        assertNotAvailable("the call was cut before the broker answered: gRPC INTERNAL: http2 exception; cause: "
                + streamClosed, Status.INTERNAL.withDescription("http2 exception").withCause(streamClosed));
        assertNotAvailable("the call was cut before the broker answered: gRPC INTERNAL: Abrupt GOAWAY closed sent "
                + "stream. HTTP/2 error code: INTERNAL_ERROR", h2Status("Abrupt GOAWAY closed sent stream",
                Http2Error.INTERNAL_ERROR));
        assertNotAvailable("the call was cut before the broker answered: gRPC INTERNAL: Connection closed after GOAWAY."
                + " HTTP/2 error code: PROTOCOL_ERROR", h2Status("Connection closed after GOAWAY",
                Http2Error.PROTOCOL_ERROR));
    }

    @Test
    void serverAndProtocolBugsWithoutDetailStayInternal() {
        assertInternal("gRPC UNKNOWN", Status.UNKNOWN);
        assertInternal("gRPC UNKNOWN: Application error processing RPC; cause: java.lang.NullPointerException",
                Status.UNKNOWN.withDescription("Application error processing RPC").withCause(new NullPointerException()));
        assertInternal("gRPC INTERNAL: Invalid protobuf byte sequence; cause: "
                        + "com.google.protobuf.InvalidProtocolBufferException: truncated",
                Status.INTERNAL.withDescription("Invalid protobuf byte sequence")
                        .withCause(new InvalidProtocolBufferException("truncated")));
        assertInternal("gRPC UNKNOWN; cause: com.google.protobuf.InvalidProtocolBufferException: truncated",
                Status.UNKNOWN.withCause(new InvalidProtocolBufferException("truncated")));
        assertInternal("gRPC INTERNAL: Failed to read message.", Status.INTERNAL.withDescription("Failed to read message."));
        assertInternal("gRPC UNIMPLEMENTED: Method not found: tidemark.v1.BrokerService/Produce",
                Status.UNIMPLEMENTED.withDescription("Method not found: tidemark.v1.BrokerService/Produce"));
        assertInternal("gRPC UNKNOWN: channel closed by the application", Status.UNKNOWN.withDescription(
                "channel closed by the application"));
    }

    /** A status as NettyClientHandler.statusFromH2Error makes it, with the code the HTTP/2 error maps to. */
    private static Status h2Status(String context, Http2Error error) {
        Status mapped = GrpcUtil.Http2Error.statusForCode(error.code());
        return mapped.getCode().toStatus().withDescription(context + ". " + mapped.getDescription());
    }

    private static TidemarkException fromStatus(Status status) {
        return GrpcErrors.fromThrowable(status.asRuntimeException());
    }

    private static void assertNotAvailable(String message, Status status) {
        TidemarkException e = fromStatus(status);
        assertEquals(ErrorCode.NOT_AVAILABLE, e.code(), status.toString());
        assertEquals(message, e.getMessage());
        assertTrue(e.retriable());
    }

    private static void assertInternal(String message, Status status) {
        TidemarkException e = fromStatus(status);
        assertEquals(ErrorCode.INTERNAL_ERROR, e.code(), status.toString());
        assertEquals(message, e.getMessage());
        assertFalse(e.retriable());
    }
}
