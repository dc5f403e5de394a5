package io.tidemark.replication.raft;

import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Prints a Ratis protocol message as text once, when the broker starts, before its Raft server takes requests.
 *
 * <p>The first such print in a JVM initialises protobuf's text format: 107 ms on an idle core here, and 420-640 ms
 * with three brokers starting on 2 cores (MetadataSnapshotIT, 2026-12-06), where every other thread that prints
 * waits for the initialisation to end. Ratis' first print is in a follower's answer to an install notice ("set new
 * configuration ... from snapshot"), on the Netty event loop thread that answers every request from the leader's
 * broker in order: its heartbeats for every group waited behind the print, the follower's election timeout
 * (200-400 ms) ran out, and it campaigned in the middle of its install. Paid here, it delays no request.
 */
public final class ProtoTextWarmUp {
    private ProtoTextWarmUp() {
    }

    public static void run() {
        RaftPeerProto peer = RaftPeerProto.newBuilder().setId(ByteString.copyFromUtf8("warm-up"))
                .setAddress("127.0.0.1:1").build();
        LogEntryProto.newBuilder().setConfigurationEntry(RaftConfigurationProto.newBuilder().addPeers(peer))
                .build().toString();
    }
}
