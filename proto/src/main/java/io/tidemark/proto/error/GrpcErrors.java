package io.tidemark.proto.error;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.tidemark.proto.v1.ErrorCode;
import io.tidemark.proto.v1.ErrorDetail;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.security.cert.CertificateException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The one place where Tidemark errors meet gRPC. The broker sends a {@link TidemarkException} as a gRPC status
 * whose details hold an {@link ErrorDetail}; the client reads it back into the same exception. A status with that
 * detail is the broker's answer and keeps its code, INTERNAL_ERROR included (a bug on the broker). A status without
 * it never came from Tidemark's code: the broker was not reached, or the call was cut on its way (the broker died,
 * the connection was reset), or the gRPC layer refused it. {@link #fromThrowable} maps it by what grpc-java (1.85,
 * Netty transport) raises in each case:
 *
 * <table>
 *   <caption>gRPC statuses without an ErrorDetail</caption>
 *   <tr><th>status</th><th>raised by grpc-java when</th><th>Tidemark</th></tr>
 *   <tr><td>UNAVAILABLE with a CertificateException cause, or an SSLException naming a certificate, a TLS alert
 *       or a plain-text peer; any status carrying a TLS-only broker's GOAWAY to a plain-text client</td><td>TLS could
 *       not be set up: a certificate refused on either side, none shown where one is required, a client or a broker
 *       in plain text</td><td>AUTHENTICATION_FAILED (the same call gets the same)</td></tr>
 *   <tr><td>UNAUTHENTICATED</td><td>the call's credentials refused to go out (a token on a plain-text channel,
 *       {@link io.tidemark.proto.auth.BearerToken}), or a server refused them without an ErrorDetail</td>
 *       <td>AUTHENTICATION_FAILED</td></tr>
 *   <tr><td>UNAVAILABLE, any other description</td><td>connect refused; connection reset ("io exception", an
 *       IOException cause); "Network closed for unknown reason"; a GOAWAY; "channel closed" with a cause; a channel
 *       shut down; RST_STREAM REFUSED_STREAM or NO_ERROR</td><td rowspan="5">NOT_AVAILABLE (retriable)</td></tr>
 *   <tr><td>DEADLINE_EXCEEDED, CANCELLED, RESOURCE_EXHAUSTED (not for a size), ABORTED</td><td>the call's deadline;
 *       RST_STREAM CANCEL (a server stopping); ENHANCE_YOUR_CALM</td></tr>
 *   <tr><td>UNKNOWN "channel closed", "Channel closed but for unknown reason"</td><td>a write or a new stream on a
 *       connection that is already closed (a ClosedChannelException cause): the call was cut before the broker
 *       answered</td></tr>
 *   <tr><td>UNKNOWN with an IOException cause (not a protobuf parse failure)</td><td>an I/O failure passed up as it
 *       is</td></tr>
 *   <tr><td>INTERNAL "RST_STREAM closed stream. ...", "http2 exception", "Abrupt GOAWAY closed sent stream. ...",
 *       "Connection closed after GOAWAY. ..."</td><td>the peer reset the stream, or an HTTP/2 stream or connection
 *       error (an Http2Exception cause, e.g. "Stream closed before write could take place"), or a GOAWAY with an
 *       error code: the call's stream ended without an answer</td></tr>
 *   <tr><td>RESOURCE_EXHAUSTED "... exceeds maximum ..."</td><td>a message larger than its receiver's limit (the
 *       server's maxInboundMessageSize for a request, the client's for an answer)</td><td>MESSAGE_TOO_LARGE (the same
 *       request gets the same answer)</td></tr>
 *   <tr><td>anything else (UNKNOWN "Application error processing RPC", INTERNAL "Invalid protobuf byte sequence",
 *       UNIMPLEMENTED, ...)</td><td>a server or protocol bug, an incompatible peer</td><td>INTERNAL_ERROR</td></tr>
 * </table>
 * The message names the gRPC status and its innermost cause, and for a call that was cut says so first.
 *
 * <p>The gRPC status code is chosen so that generic gRPC tooling reads the error sensibly: INVALID_ARGUMENT for
 * bad input, NOT_FOUND and ALREADY_EXISTS for topics and groups (ALREADY_EXISTS also for records a mirror copied
 * already, ORIGIN_OFFSET_HELD), OUT_OF_RANGE for offsets,
 * FAILED_PRECONDITION for NOT_LEADER, producer sequence errors and group states, UNAVAILABLE for NOT_AVAILABLE,
 * PERMISSION_DENIED for INTERNAL_TOPIC and the AUTHORIZATION_FAILED codes, UNAUTHENTICATED for AUTHENTICATION_FAILED,
 * INTERNAL otherwise.
 */
public final class GrpcErrors {
    /** Codes grpc-java gives a call the broker did not answer: unreachable, stopping, too slow, or cut. */
    private static final Set<Status.Code> NOT_ANSWERED = EnumSet.of(Status.Code.UNAVAILABLE,
            Status.Code.DEADLINE_EXCEEDED, Status.Code.CANCELLED, Status.Code.RESOURCE_EXHAUSTED, Status.Code.ABORTED);
    /**
     * UNKNOWN descriptions of a write or new stream on a closed connection: Netty's {@code Utils.statusFromThrowable}
     * for a ClosedChannelException without a cause, and {@code NettyClientTransport.statusFromFailedFuture}.
     */
    private static final Set<String> CLOSED_CHANNEL = Set.of("channel closed", "Channel closed but for unknown reason");
    /**
     * Beginnings of INTERNAL descriptions of a stream that ended without an answer: {@code NettyClientHandler}'s
     * RST_STREAM and GOAWAY handling (each followed by ". HTTP/2 error code: ..."), and {@code Utils
     * .statusFromThrowable} for an Http2Exception.
     */
    private static final List<String> STREAM_ENDED = List.of("RST_STREAM closed stream", "http2 exception",
            "Abrupt GOAWAY closed sent stream", "Connection closed after GOAWAY");
    /**
     * What grpc-java's RESOURCE_EXHAUSTED says of a message over its receiver's limit ({@code MessageDeframer}: "gRPC
     * message exceeds maximum size N: M"; "Decompressed gRPC message exceeds maximum size N").
     */
    private static final String EXCEEDS_MAXIMUM = "exceeds maximum";
    /**
     * What an SSLException says when TLS was refused rather than cut: a TLS alert about a certificate or the protocol
     * (BoringSSL's "TLSV1_ALERT_UNKNOWN_CA", "SSLV3_ALERT_BAD_CERTIFICATE", "CERTIFICATE_REQUIRED",
     * "CERTIFICATE_VERIFY_FAILED"; the JDK's "PKIX path", "certificate_unknown"), or a plain-text peer ("not an
     * SSL/TLS record", "WRONG_VERSION_NUMBER").
     */
    private static final Pattern TLS_REFUSALS = Pattern.compile(
            "(?i)certificate|ALERT_UNKNOWN_CA|PROTOCOL_VERSION|PKIX|not an SSL/TLS record|WRONG_VERSION_NUMBER");
    /** What a TLS-only broker tells a plain-text client, in the GOAWAY's debug data its calls fail with. */
    public static final String TLS_REQUIRED = "this broker takes only TLS connections";
    /** Causes followed at most: a chain that loops back on itself must not hang the mapping. */
    private static final int MAX_CAUSE_DEPTH = 16;

    private GrpcErrors() {
    }

    public static StatusRuntimeException toStatusException(TidemarkException e) {
        com.google.rpc.Status status = com.google.rpc.Status.newBuilder()
                .setCode(grpcCode(e.code()).value())
                .setMessage(e.code() + ": " + e.getMessage())
                .addDetails(Any.pack(toDetail(e)))
                .build();
        return StatusProto.toStatusRuntimeException(status);
    }

    /** The error as it travels: in a failed call's status, or as one outcome of a call that answers several. */
    public static ErrorDetail toDetail(TidemarkException e) {
        return ErrorDetail.newBuilder().setCode(e.code()).setMessage(e.getMessage())
                .setLeaderNodeId(e.leaderNodeId()).setLeaderEpoch(e.leaderEpoch()).setLeaderAddress(e.leaderAddress())
                .build();
    }

    /** The error an {@link ErrorDetail} carries. */
    public static TidemarkException fromDetail(ErrorDetail d) {
        return TidemarkException.of(d.getCode(), d.getMessage(), d.getLeaderNodeId(), d.getLeaderEpoch(),
                d.getLeaderAddress());
    }

    /**
     * The Tidemark error a failed call carried; for a failure without one, NOT_AVAILABLE when the broker did not
     * answer or the call was cut, else INTERNAL_ERROR (the table above).
     */
    public static TidemarkException fromThrowable(Throwable t) {
        com.google.rpc.Status status = StatusProto.fromThrowable(t);
        if (status != null) {
            for (Any any : status.getDetailsList()) {
                if (any.is(ErrorDetail.class)) {
                    try {
                        return fromDetail(any.unpack(ErrorDetail.class));
                    } catch (InvalidProtocolBufferException e) {
                        return new TidemarkException(ErrorCode.INTERNAL_ERROR, "unreadable error detail: " + e.getMessage());
                    }
                }
            }
        }
        Status grpc = Status.fromThrowable(t);
        if (grpc.getCode() == Status.Code.RESOURCE_EXHAUSTED && grpc.getDescription() != null
                && grpc.getDescription().contains(EXCEEDS_MAXIMUM)) {
            return new TidemarkException(ErrorCode.MESSAGE_TOO_LARGE, "the message is larger than its receiver "
                    + "takes (a broker's max.request.bytes for a request; the client's largest answer for an answer): "
                    + describe(grpc));
        }
        if (tlsRefused(grpc)) {
            return new TidemarkException(ErrorCode.AUTHENTICATION_FAILED, "TLS could not be set up with the broker ("
                    + "check tls.ca.file, tls.cert.file and tls.key.file, or --command-config, against the broker's "
                    + "TLS settings): " + describe(grpc));
        }
        if (grpc.getCode() == Status.Code.UNAUTHENTICATED) {
            return new TidemarkException(ErrorCode.AUTHENTICATION_FAILED, describe(grpc));
        }
        if (NOT_ANSWERED.contains(grpc.getCode())) {
            return new TidemarkException(ErrorCode.NOT_AVAILABLE, describe(grpc));
        }
        if (cutConnection(grpc)) {
            return new TidemarkException(ErrorCode.NOT_AVAILABLE, "the call was cut before the broker answered: "
                    + describe(grpc));
        }
        return new TidemarkException(ErrorCode.INTERNAL_ERROR, describe(grpc));
    }

    /**
     * Whether a status of a code that does not say so itself is grpc-java's report of a call cut with its connection
     * or stream (the table above).
     */
    private static boolean cutConnection(Status status) {
        String description = status.getDescription() == null ? "" : status.getDescription();
        return switch (status.getCode()) {
            case UNKNOWN -> CLOSED_CHANNEL.contains(description) || ioCause(status.getCause());
            case INTERNAL -> STREAM_ENDED.stream().anyMatch(description::startsWith);
            default -> false;
        };
    }

    /**
     * Whether a connection failed because TLS could not be set up, not because the broker is away: a TLS-only broker
     * told this plain-text client so (whatever status grpc-java wraps its GOAWAY in), or UNAVAILABLE for a certificate
     * refused on either side (a CertificateException here, or the other side's TLS alert naming a certificate) or a
     * plain-text broker ("not an SSL/TLS record"). A handshake cut by a dying broker is none of these.
     */
    private static boolean tlsRefused(Status status) {
        if (status.getDescription() != null && status.getDescription().contains(TLS_REQUIRED)) {
            return true;
        }
        if (status.getCode() != Status.Code.UNAVAILABLE) {
            return false;
        }
        Throwable c = status.getCause();
        for (int depth = 0; c != null && depth < MAX_CAUSE_DEPTH; depth++, c = c.getCause()) {
            String message = String.valueOf(c.getMessage());
            if (c instanceof CertificateException
                    || (c instanceof SSLException && TLS_REFUSALS.matcher(message).find())) {
                return true;
            }
        }
        return false;
    }

    /** An I/O failure in the cause chain; a protobuf parse failure is an IOException too, but a malformed message. */
    private static boolean ioCause(Throwable cause) {
        Throwable c = cause;
        for (int depth = 0; c != null && depth < MAX_CAUSE_DEPTH; depth++, c = c.getCause()) {
            if (c instanceof IOException && !(c instanceof InvalidProtocolBufferException)) {
                return true;
            }
        }
        return false;
    }

    /** "gRPC CODE: description; cause: innermost cause", each part when there is one. */
    private static String describe(Status status) {
        StringBuilder text = new StringBuilder("gRPC ").append(status.getCode());
        if (status.getDescription() != null) {
            text.append(": ").append(status.getDescription());
        }
        Throwable root = status.getCause();
        for (int depth = 0; root != null && root.getCause() != null && depth < MAX_CAUSE_DEPTH; depth++) {
            root = root.getCause();
        }
        if (root != null) {
            text.append("; cause: ").append(root);
        }
        return text.toString();
    }

    static Status.Code grpcCode(ErrorCode code) {
        return switch (code) {
            case INVALID_TIMESTAMP, CORRUPT_BATCH, RECORD_TOO_LARGE, INVALID_CONFIG, INVALID_REQUEST, MESSAGE_TOO_LARGE,
                    INVALID_REPLICATION_FACTOR -> Status.Code.INVALID_ARGUMENT;
            case UNKNOWN_TOPIC, UNKNOWN_PARTITION, UNKNOWN_GROUP, UNKNOWN_TOPIC_ID -> Status.Code.NOT_FOUND;
            case TOPIC_EXISTS, ORIGIN_OFFSET_HELD -> Status.Code.ALREADY_EXISTS;
            case OFFSET_OUT_OF_RANGE -> Status.Code.OUT_OF_RANGE;
            case NOT_LEADER, OUT_OF_ORDER_SEQUENCE, INVALID_PRODUCER_EPOCH, UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH,
                    NON_EMPTY_GROUP, GROUP_SUBSCRIBED_TO_TOPIC, GROUP_TOO_LARGE, INVALID_TXN_STATE ->
                    Status.Code.FAILED_PRECONDITION;
            case NOT_AVAILABLE -> Status.Code.UNAVAILABLE;
            case INTERNAL_TOPIC, TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED,
                    TRANSACTIONAL_ID_AUTHORIZATION_FAILED -> Status.Code.PERMISSION_DENIED;
            case AUTHENTICATION_FAILED -> Status.Code.UNAUTHENTICATED;
            default -> Status.Code.INTERNAL;
        };
    }
}
