package io.tidemark.replication.raft;

import org.apache.ratis.protocol.RaftPeerId;

/** A broker's Raft peer id in every group it is in: {@code "n" + node id}, e.g. {@code n3}. */
public final class RaftPeerIds {
    private RaftPeerIds() {
    }

    public static RaftPeerId of(int nodeId) {
        return RaftPeerId.valueOf("n" + nodeId);
    }

    public static int nodeId(RaftPeerId peerId) {
        return Integer.parseInt(peerId.toString().substring(1));
    }
}
