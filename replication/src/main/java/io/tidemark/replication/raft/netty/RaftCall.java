package io.tidemark.replication.raft.netty;

import org.apache.ratis.thirdparty.com.google.protobuf.MessageLite;

import java.util.Objects;

/**
 * One message of the Raft transport with the id of the call it belongs to: a request and its reply carry the same id
 * ({@link RaftCallFormat}).
 *
 * @param id      the call's id, chosen by the side that sends the request, unique on its connection
 * @param message Ratis' request ({@code RaftNettyServerRequestProto}) or reply ({@code RaftNettyServerReplyProto})
 */
record RaftCall<M extends MessageLite>(long id, M message) {
    RaftCall {
        Objects.requireNonNull(message, "message");
    }
}
