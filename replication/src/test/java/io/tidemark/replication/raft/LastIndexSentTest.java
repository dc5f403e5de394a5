package io.tidemark.replication.raft;

import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.TermIndexProto;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a successful appendEntries shows a follower to hold: what the leader sent, never the follower's own log end
 * (which may run past it with entries of an older term no leader committed).
 */
class LastIndexSentTest {
    @Test
    void entriesShowTheLastOfThem() {
        AppendEntriesRequestProto request = AppendEntriesRequestProto.newBuilder()
                .setPreviousLog(TermIndexProto.newBuilder().setTerm(2).setIndex(4))
                .addEntries(LogEntryProto.newBuilder().setTerm(2).setIndex(5))
                .addEntries(LogEntryProto.newBuilder().setTerm(2).setIndex(6)).build();

        assertEquals(6, NotifyingLogAppender.lastIndexSent(request));
    }

    @Test
    void aHeartbeatShowsItsPreviousEntry() {
        AppendEntriesRequestProto request = AppendEntriesRequestProto.newBuilder()
                .setPreviousLog(TermIndexProto.newBuilder().setTerm(2).setIndex(0)).build();

        assertEquals(0, NotifyingLogAppender.lastIndexSent(request));
    }

    @Test
    void aHeartbeatToAnEmptyLogShowsNothing() {
        assertEquals(-1, NotifyingLogAppender.lastIndexSent(AppendEntriesRequestProto.getDefaultInstance()));
    }
}
